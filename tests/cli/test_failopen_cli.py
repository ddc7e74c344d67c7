"""The command line with a remote embedder that goes down: add still stores, find degrades and says so."""

from __future__ import annotations

import json

from tests.kernel.fake_embedder_server import FakeEmbedderServer


def test_add_and_find_while_the_remote_embedder_is_down(ok, agentbase, monkeypatch) -> None:
    with FakeEmbedderServer() as server:
        monkeypatch.setenv("AGENTBASE_EMBEDDER", f"openai:hash-64@{server.url}/v1")
        monkeypatch.setenv("AGENTBASE_EMBEDDER__BREAKER_FAILURES", "1")
        ok("init")  # up: the file records the embedder and its size
        server.mode = "error"
        entry_id = ok("add", "the spare key is under the blue pot", "--user-id", "u").strip()
        found = agentbase("find", "spare key", "--user-id", "u")
        assert found.exit_code == 0
        assert found.stdout.split("\t")[1] == entry_id
        assert "(degraded: embedder unavailable: " in found.stderr
        report = json.loads(ok("verify", "--vectors", "--json"))
        assert report["ok"] is True
        assert report["vector_backlog"] == 1
        assert report["embedder_breaker"]["failure_threshold"] == 1  # a new process: its own breaker
        failed = agentbase("rebuild")  # explicit vector work does report the outage
        assert failed.exit_code == 3
        assert failed.stderr.startswith("Error: hash-64 at ")
        assert "Start the embedding server (or check its URL), then run the command again" in failed.stderr
        requests_while_down = server.total()
        server.mode = "ok"
        ok("rebuild")  # or any later open: the backlog gets its vector
        report = json.loads(ok("verify", "--vectors", "--json"))
        assert (report["vector_backlog"], report["embedder_breaker"]["state"]) == (0, "closed")
        assert server.total() > requests_while_down
