"""A real HTTP embedding server on 127.0.0.1, in a thread, that answers, fails or hangs on command.

It speaks the three wire formats the remote embedders use (OpenAI ``/v1/embeddings``, TEI
``/embed``, Ollama ``/api/embed``) and embeds with the tests' hash embedder, so texts sharing
words get similar vectors. It counts every request it receives, per path.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.conftest import HashEmbedder

MODES = ("ok", "error", "hang", "garbage")


class FakeEmbedderServer:
    """``with FakeEmbedderServer() as server: server.mode = "error"`` - ``server.url`` is its root."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: Counter[str] = Counter()
        self.release = threading.Event()  # set to let hanging requests finish (with an error)
        self._embedder = HashEmbedder()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest's output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with owner._lock:
                    owner.requests[self.path] += 1
                    mode = owner.mode
                if mode == "hang":
                    owner.release.wait(30)
                    self._send(503, {"error": "released"})
                elif mode == "error":
                    self._send(500, {"error": "model crashed"})
                elif mode == "garbage":
                    self._send(200, {"unexpected": True})
                else:
                    self._answer(body)

            def _answer(self, body: dict[str, Any]) -> None:
                texts = body.get("input") if self.path != "/embed" else body.get("inputs")
                texts = [texts] if isinstance(texts, str) else list(texts or [])
                vectors = owner._embedder.embed_batch(texts).tolist()
                if self.path == "/v1/embeddings":
                    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
                    self._send(200, {"object": "list", "data": data, "model": body.get("model")})
                elif self.path == "/embed":
                    self._send(200, vectors)
                elif self.path == "/api/embed":
                    self._send(200, {"model": body.get("model"), "embeddings": vectors})
                else:
                    self._send(404, {"error": f"no route {self.path}"})

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-embedder", daemon=True)

    def total(self) -> int:
        with self._lock:
            return sum(self.requests.values())

    def __enter__(self) -> FakeEmbedderServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
