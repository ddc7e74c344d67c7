"""A scripted OpenAI chat-completions endpoint on 127.0.0.1: the model Hermes' real ``AIAgent`` talks to offline.

Each ``/v1/chat/completions`` request takes the next step of the script - a reply text or tool calls - and
is recorded, so a test can read exactly what Hermes sent the model (the injected memory context included).
Streaming requests get the same step as server-sent events. Any other path is a 404 (Hermes probes a few).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeLLM:
    """``FakeLLM([{"content": "Hi"}, {"tool_calls": [("memory", {...})]}])``; ``.url`` is the base URL."""

    def __init__(self, script: list[dict[str, Any]] | None = None) -> None:
        self.script: list[dict[str, Any]] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._send(404, b"{}")
                    return
                with fake._lock:
                    fake.requests.append(body)
                    step = fake.script.pop(0) if fake.script else {"content": "OK."}
                self._reply(body, step)

            def do_GET(self) -> None:
                self._send(200, json.dumps({"object": "list", "data": [{"id": "test-model", "object": "model"}]}).encode())

            def _send(self, status: int, data: bytes, content_type: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _reply(self, body: dict[str, Any], step: dict[str, Any]) -> None:
                calls = [{"id": f"call_{len(fake.requests)}_{i}", "type": "function",
                          "function": {"name": name, "arguments": json.dumps(args)}}
                         for i, (name, args) in enumerate(step.get("tool_calls", []))]
                message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
                if calls:
                    message["tool_calls"] = calls
                finish = "tool_calls" if calls else "stop"
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                head = {"id": "chatcmpl-fake", "created": int(time.time()), "model": "test-model"}
                if not body.get("stream"):
                    out = {**head, "object": "chat.completion", "usage": usage,
                           "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
                    self._send(200, json.dumps(out).encode())
                    return
                delta = dict(message)
                if calls:
                    delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(calls)]
                chunks = [{"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                          {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}]
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps({**head, 'object': 'chat.completion.chunk', **chunk})}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"

    def user_messages(self, request: int = -1) -> list[str]:
        """The user-role texts of one recorded request (the memory context is appended to the last one)."""
        return [m["content"] for m in self.requests[request]["messages"]
                if m["role"] == "user" and isinstance(m.get("content"), str)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
