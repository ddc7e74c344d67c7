"""`agentbase mcp` and `agentbase web`: the adapters' servers started by the command, driven by real clients."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentbase_kernel import Kernel

AGENTBASE = shutil.which("agentbase", path=str(Path(sys.executable).parent))


@pytest.fixture
def db_file(tmp_path) -> Path:
    path = tmp_path / "memory.db"
    with Kernel(path, embedder=None, ner=None) as k:
        k.add_memory("Alice keeps bees on her balcony", user_id="alice")
    return path


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBASE_")}
    return {**env, "AGENTBASE_EMBEDDER": "none", "AGENTBASE_NER": "regex", "HF_HUB_OFFLINE": "1"}


async def test_mcp_serves_the_file_over_stdio_to_the_sdk_client(db_file):
    mcp = pytest.importorskip("mcp")
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=AGENTBASE, args=["--db", str(db_file), "mcp", "--user-id", "alice"],
                                   env=_env(), cwd=str(db_file.parent))
    async with mcp.Client(params) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert {"add_memory", "search_memories"} <= names
        found = await client.call_tool("search_memories", {"query": "bees"})
        assert not found.is_error
        assert "bees" in str(found.structured_content)
        added = await client.call_tool("add_memory", {"text": "Alice harvested honey in June"})
        assert not added.is_error
    with Kernel(db_file, embedder=None, ner=None) as k:
        assert "Alice harvested honey in June" in [e.l2_full for e in k.list(user_id="alice")]


def test_mcp_refuses_a_public_interface_without_a_key(db_file):
    proc = subprocess.run([AGENTBASE, "--db", str(db_file), "mcp", "--transport", "http", "--host", "0.0.0.0"], check=False,
                          env=_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "key" in proc.stderr.lower()


def test_a_missing_extra_names_the_install_line(db_file, runner, monkeypatch):
    from agentbase_cli.app import cli

    for name in [m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "agentbase_adapters.mcp"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)
    result = runner.invoke(cli, ["--db", str(db_file), "mcp"])
    assert result.exit_code == 3, result.output
    assert "pip install 'agentbase-memory[mcp]'" in result.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_web_serves_the_dashboard(db_file):
    httpx = pytest.importorskip("httpx")
    port = _free_port()
    proc = subprocess.Popen([AGENTBASE, "--db", str(db_file), "web", "--port", str(port)], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the dashboard did not start"
                time.sleep(0.5)
        assert response.status_code == 200
        assert "agentbase" in response.text.lower()
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_web_refuses_a_public_interface_without_a_key(db_file, runner):
    from agentbase_cli.app import cli

    result = runner.invoke(cli, ["--db", str(db_file), "web", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "dashboard for" not in result.stderr
