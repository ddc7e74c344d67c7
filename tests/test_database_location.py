"""Every entry point opens the same database for the same folder: explicit path, ``$AGENTBASE_PATH``, the
``.agentbase`` pointer (``agentbase init --data-dir``), then ``./agentbase.db`` (``locate_database``)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentbase_kernel import AgentBase, InvalidArgument, Kernel, locate_database

AGENTBASE_BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder whose ``.agentbase`` names ``data/agentbase.db`` (no models: fast), worked in from below."""
    monkeypatch.delenv("AGENTBASE_PATH", raising=False)
    (tmp_path / "data").mkdir()
    (tmp_path / ".agentbase").write_text('db = "data/agentbase.db"\nembedder = "none"\nner = "regex"\n')
    (tmp_path / "src").mkdir()
    Kernel(tmp_path / "data" / "agentbase.db", embedder=None, ner=None).initialize().close()  # as `init` leaves it
    monkeypatch.chdir(tmp_path / "src")
    return tmp_path


def _texts(path: Path) -> list[str]:
    with Kernel(path, embedder=None, ner=None, create=False) as k:
        return sorted(e.l2_full for e in k.list(include_invalid=True))


def _in_pointer_file(folder: Path) -> list[str]:
    assert not (folder / "agentbase.db").exists() and not (folder / "src" / "agentbase.db").exists()
    return _texts(folder / "data" / "agentbase.db")


def test_the_order_path_environment_pointer_default(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTBASE_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    assert locate_database().location == Path("agentbase.db")
    (tmp_path / ".agentbase").write_text('db = "d/x.db"\n')
    choice = locate_database()
    assert choice.location == tmp_path / "d" / "x.db" and choice.source == str(tmp_path / ".agentbase")
    monkeypatch.setenv("AGENTBASE_PATH", "env.db")
    assert locate_database().location == Path("env.db") and locate_database().source == "$AGENTBASE_PATH"
    assert locate_database("given.db").location == Path("given.db")
    monkeypatch.setenv("AGENTBASE_PATH", "postgresql://u:p@h/db")
    assert locate_database().location == "postgresql://u:p@h/db"  # a URL stays a string


def test_a_broken_pointer_is_refused_with_how_to_fix_it(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTBASE_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".agentbase").write_text("not = [toml\n")
    with pytest.raises(InvalidArgument, match="agentbase init --data-dir DIR"):
        Kernel()


def _kernel(folder: Path) -> None:
    with Kernel() as k:
        k.add_memory("from the kernel", user_id="alice")
        assert k.info()["path_from"] == str(folder / ".agentbase")


def _async_kernel(folder: Path) -> None:
    async def run() -> None:
        async with AgentBase() as db:
            await db.add_memory("from AgentBase", user_id="alice")

    asyncio.run(run())


def _minimal(folder: Path) -> None:
    from agentbase_adapters.minimal import MinimalAdapter

    with MinimalAdapter() as mem:
        mem.remember("from the minimal adapter", who="alice")


def _mem0(folder: Path) -> None:
    from agentbase_adapters.mem0 import Memory

    m = Memory()
    m.add("from mem0 Memory", user_id="alice", infer=False)
    m.close()


def _mem0_async(folder: Path) -> None:
    from agentbase_adapters.mem0 import AsyncMemory

    async def run() -> None:
        m = AsyncMemory()
        await m.add("from mem0 AsyncMemory", user_id="alice", infer=False)
        m.close()

    asyncio.run(run())


def _langchain(folder: Path) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import HumanMessage

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory

    db = AgentBase()
    AgentBaseChatMessageHistory("chat", db=db, user_id="alice").add_message(HumanMessage("from langchain"))
    db.sync.close()


def _llamaindex(folder: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.llms import ChatMessage

    from agentbase_adapters.llamaindex import AgentBaseChatStore

    db = AgentBase()
    AgentBaseChatStore(db, user_id="alice").add_message("chat", ChatMessage(role="user", content="from llamaindex"))
    db.sync.close()


def _langgraph(folder: Path) -> None:
    pytest.importorskip("langgraph")
    from agentbase_adapters.langgraph import AgentBaseStore

    db = AgentBase()
    AgentBaseStore(db).put(("alice",), "k", {"text": "from langgraph"})
    db.sync.close()


def _served(module: str, serve: Callable[..., None], drive: Callable[[Any], None], monkeypatch) -> None:
    """Run ``serve()`` with no database named; uvicorn's ``run`` is swapped for a client driving the app."""
    pytest.importorskip("starlette")
    import uvicorn
    from starlette.testclient import TestClient

    def run(app: Any, **_: Any) -> None:
        with TestClient(app, base_url="http://127.0.0.1:8080", client=("127.0.0.1", 40000)) as http:
            drive(http)

    monkeypatch.setattr(uvicorn, "run", run)
    serve()


def _openai_server(folder: Path, monkeypatch) -> None:
    pytest.importorskip("openai")
    from agentbase_adapters.openai import serve

    def drive(http: Any) -> None:
        thread = http.post("/v1/threads", json={}).json()["id"]
        made = http.post(f"/v1/threads/{thread}/messages", json={"role": "user", "content": "from the openai server"})
        assert made.status_code == 200, made.text

    _served("openai", serve, drive, monkeypatch)


def _web(folder: Path, monkeypatch) -> None:
    with Kernel() as k:  # the dashboard opens an existing file only
        k.add_memory("shown by the dashboard", user_id="alice")
    from agentbase_adapters.web import serve

    def drive(http: Any) -> None:
        assert "shown by the dashboard" in http.get("/memories").text

    _served("web", serve, drive, monkeypatch)


def _sessions(path: Path) -> list[str]:
    with Kernel(path, embedder=None, ner=None, create=False) as k:
        return [m.content for s in k.list_sessions() for m in k.list_messages(s.id)]


IN_PROCESS = {
    "kernel": (_kernel, "from the kernel"),
    "AgentBase": (_async_kernel, "from AgentBase"),
    "minimal": (_minimal, "from the minimal adapter"),
    "mem0-Memory": (_mem0, "from mem0 Memory"),
    "mem0-AsyncMemory": (_mem0_async, "from mem0 AsyncMemory"),
    "langgraph": (_langgraph, "from langgraph"),
}


@pytest.mark.parametrize("entry", list(IN_PROCESS))
def test_each_python_entry_point_opens_the_pointer_file(entry, folder):
    write, text = IN_PROCESS[entry]
    write(folder)
    assert any(text in t for t in _in_pointer_file(folder))


@pytest.mark.parametrize("write", [_langchain, _llamaindex], ids=["langchain", "llamaindex"])
def test_chat_histories_open_the_pointer_file(write, folder):
    write(folder)
    assert not (folder / "src" / "agentbase.db").exists()
    assert len(_sessions(folder / "data" / "agentbase.db")) == 1


def test_the_openai_server_opens_the_pointer_file(folder, monkeypatch):
    _openai_server(folder, monkeypatch)
    assert not (folder / "src" / "agentbase.db").exists()
    assert _sessions(folder / "data" / "agentbase.db") == ["from the openai server"]


def test_the_dashboard_opens_the_pointer_file(folder, monkeypatch):
    _web(folder, monkeypatch)
    assert _in_pointer_file(folder) == ["shown by the dashboard"]


def test_agentbase_web_without_a_file_serves_the_pointer_file(folder, monkeypatch, capsys):
    pytest.importorskip("uvicorn")
    import uvicorn

    from agentbase_adapters.web import main

    served: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: served.append(app))
    assert main([]) == 0 and len(served) == 1
    assert f"dashboard for {folder / 'data' / 'agentbase.db'}" in capsys.readouterr().err


def test_what_mem0_memory_writes_the_cli_lists(folder):
    """The first-hour path: ``agentbase init --data-dir`` in a shell, then the Mem0 swap in Python."""
    from click.testing import CliRunner

    from agentbase_adapters.mem0 import Memory
    from agentbase_cli.app import cli

    Memory().add("I keep bees", user_id="alice", infer=False)
    listed = CliRunner().invoke(cli, ["list", "--user-id", "alice"])
    assert listed.exit_code == 0 and "I keep bees" in listed.stdout


def _mcp_over_stdio(command: list[str], cwd: Path) -> None:
    mcp = pytest.importorskip("mcp")
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBASE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))

    async def run() -> None:
        params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(cwd))
        async with mcp.Client(params) as client:
            added = await client.call_tool("add_memory", {"text": f"from {Path(command[0]).name} over MCP"})
            assert not added.is_error, added

    asyncio.run(run())


@pytest.mark.parametrize("command", [["agentbase", "mcp", "--user-id", "alice"], ["agentbase-mcp", "--user-id", "alice"]],
                         ids=["agentbase-mcp-command", "agentbase-mcp-script"])
def test_the_mcp_servers_open_the_pointer_file(command, folder):
    executable = shutil.which(command[0], path=str(AGENTBASE_BIN))
    assert executable, f"{command[0]} is not installed next to {sys.executable}"
    _mcp_over_stdio([executable, *command[1:]], folder / "src")
    assert _in_pointer_file(folder) == [f"from {command[0]} over MCP"]


def test_the_installed_cli_opens_the_pointer_file(folder):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBASE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    run = subprocess.run([shutil.which("agentbase", path=str(AGENTBASE_BIN)) or "agentbase", "add", "from the cli"],
                         capture_output=True, text=True, env=env, cwd=folder / "src", timeout=300)
    assert run.returncode == 0, run.stderr
    assert _in_pointer_file(folder) == ["from the cli"]
