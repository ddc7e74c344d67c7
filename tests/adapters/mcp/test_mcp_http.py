"""The server over streamable HTTP on loopback (a subprocess started by the test), behind the guard."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from mcp import MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from agentbase_kernel import Kernel
from tests.conftest import HashEmbedder

from .conftest import ROOT, McpClient, free_port, server_env, wait_listening

KEY = "test-key-0123456789"


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory, make_db_location):
    home = tmp_path_factory.mktemp("http")
    db, key_file = make_db_location("memory.db"), home / "key.txt"
    key_file.write_text(KEY + "\n")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tests.adapters.mcp._launch", "--db", str(db), "--user-id", "alice",
                             "--transport", "http", "--port", str(port), "--api-key-file", str(key_file)],
                            cwd=str(ROOT), env=server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_listening(port, proc)
        yield db, f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def keyed_client(url: str, key: str = KEY) -> McpClient:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
    return McpClient(streamable_http_client(url, http_client=http))


def test_tools_over_http_match_the_kernel(http_server):
    db, url = http_server
    client = keyed_client(url)
    try:
        assert len(client.tools()) == 20
        added = client.ok("add_memory", {"text": "Allergic to peanuts", "category": "health"})["results"][0]
        found = client.ok("search_memories", {"query": "peanuts allergy"})
        assert found["results"][0]["id"] == added["id"]
        with Kernel(db, embedder=HashEmbedder(), ner="regex") as k:
            entry = k.get(added["id"], user_id="alice")
            assert entry.l2_full == "Allergic to peanuts" and entry.category == "health"
            assert [h.id for h in k.find("peanuts allergy", user_id="alice")] == [r["id"] for r in found["results"]]
        assert client.fails("get_memory", {"memory_id": added["id"], "user_id": "bob"})
        assert "longer than 20000" in client.fails("add_memory", {"text": "x" * 20_001})
    finally:
        client.close()


def test_the_guard_answers_before_the_sdk(http_server):
    _, url = http_server
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    auth = {"Authorization": f"Bearer {KEY}"}
    assert httpx.post(url, json=init, headers=accept).status_code == 401
    assert httpx.post(url, json=init, headers={**accept, "Authorization": "Bearer wrong"}).status_code == 401
    assert httpx.post(url, json=init, headers={**accept, **auth, "Host": "evil.example"}).status_code == 421
    assert httpx.post(url, content=b"{}", headers={**accept, **auth, "Content-Type": "text/plain"}).status_code == 415
    assert httpx.post(url, json=init, headers={**accept, **auth, "Origin": "https://evil.example"}).status_code == 403
    big = b'{"x": "' + b"a" * (2 << 20) + b'"}'
    assert httpx.post(url, content=big, headers={**accept, **auth, "Content-Type": "application/json"}).status_code == 413
    assert httpx.post(url, json=init, headers={**accept, **auth}).status_code == 200


def _leaves(group: BaseException) -> list[BaseException]:
    if isinstance(group, BaseExceptionGroup):
        return [leaf for sub in group.exceptions for leaf in _leaves(sub)]
    return [group]


def test_a_wrong_key_never_reaches_a_tool(http_server):
    _, url = http_server
    with pytest.raises(ExceptionGroup) as info:  # the SDK client's task group, around the refused handshake
        keyed_client(url, key="not-the-key")
    assert [type(leaf) for leaf in _leaves(info.value)] == [MCPError]


def test_refuses_a_non_loopback_bind_without_a_key(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "agentbase_adapters.mcp.cli", "--db", str(tmp_path / "x.db"),
                           "--transport", "http", "--host", "0.0.0.0", "--embedder", "none"],
                          cwd=str(ROOT), env=server_env(), capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert "Refusing to serve on 0.0.0.0 without an API key" in proc.stderr


@pytest.mark.parametrize("body", [
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":' + b'{"a":' * 5000 + b"1" + b"}" * 5001,
                 id="deep"),
    pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"t":"\\ud800"}}}',
                 id="lone-surrogate"),
    pytest.param(b"not json", id="not-json"),
])
def test_unparsable_bodies_get_a_parse_error_not_a_5xx(http_server, body):
    _, url = http_server
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "Authorization": f"Bearer {KEY}"}
    response = httpx.post(url, content=body, headers=headers, timeout=30)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700
