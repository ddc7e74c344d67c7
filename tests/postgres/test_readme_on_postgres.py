"""The README's user code runs against a PostgreSQL URL: the connection string is the only change.

Each Python block (Minimal, the kernel, Mem0's ``Memory()``, the LangChain chain, the LangGraph graph, the
LlamaIndex chat engine and memory) runs in a fresh process with its file name replaced by the URL, and with
``AGENTBASE_PATH`` set to it (``Memory()`` takes no path: that variable is how a Mem0 user points it anywhere).
The OpenAI server block is started with ``--db URL`` and the README's client block talks to it unchanged. After
each, the rows are read back from Postgres, and no SQLite file may have appeared.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentbase_kernel import Kernel
from tests.test_readme import _free_port, blocks, commands, is_client, is_server, python_blocks, shell_blocks
from tests.test_readme import env as readme_env

__all__ = ["readme_env"]  # the README suite's environment fixture, reused

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(readme_env: dict[str, str]) -> dict[str, str]:
    """The README suite's environment, importing this checkout first (a worktree beside an editable install)."""
    return {**readme_env, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), readme_env.get("PYTHONPATH")]))}

pytestmark = pytest.mark.postgres

FILE_NAME = re.compile(r"""(["'])(\./)?[\w-]+\.db\1""")


def _on(url: str, body: str) -> str:
    return FILE_NAME.sub(repr(url), body)


def _block(marker: str) -> str:
    found = [body for _, body in python_blocks() if marker in body]
    assert len(found) == 1, f"README: expected one Python block with {marker!r}"
    return found[0]


def _stats(url: str) -> dict[str, int]:
    with Kernel(url, embedder=None, ner=None) as kernel:
        return kernel.stats()


def _no_sqlite_files(folder) -> None:  # type: ignore[no-untyped-def]
    made = sorted(p.name for p in folder.rglob("*") if p.suffix in (".db", ".sqlite", ".sqlite3") or p.name.endswith("-wal"))
    assert made == [], f"a SQLite file appeared although the database is on Postgres: {made}"


# (marker in the block, what its rows must show on the server afterwards)
BLOCKS = [
    # remember, recall, forget: the entry is gone again, the message remember kept stays
    pytest.param("MinimalAdapter", lambda s: s["entries"] == 0 and s["messages"] >= 1, id="minimal"),
    pytest.param("add_memory(", lambda s: s["entries"] >= 1 and s["vectors"] >= 1, id="kernel"),
    pytest.param("agentbase_adapters.mem0 import Memory", lambda s: s["entries_valid"] >= 1, id="mem0"),
    pytest.param("RunnableWithMessageHistory", lambda s: s["sessions"] >= 1 and s["messages"] >= 4, id="langchain-chain"),
    pytest.param("compile(store=", lambda s: s["entries_valid"] >= 1, id="langgraph-graph"),
    pytest.param("ChatMemoryBuffer", lambda s: s["messages"] >= 2, id="llamaindex"),
]


@pytest.mark.parametrize(("marker", "shows"), BLOCKS)
def test_readme_block_runs_on_postgres(marker, shows, postgres_url, tmp_path, env):
    body = _on(postgres_url, _block(marker))
    (tmp_path / "block.py").write_text(body, encoding="utf-8")
    proc = subprocess.run([sys.executable, "block.py"], check=False, cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "AGENTBASE_PATH": postgres_url}, timeout=600)
    assert proc.returncode == 0, f"{body}\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip()
    _no_sqlite_files(tmp_path)
    stats = _stats(postgres_url)
    assert shows(stats), stats


def test_the_substitution_only_touches_the_file_name():
    body = _block("compile(store=")
    swapped = _on("postgresql://u@h:1/db", body)
    assert swapped.replace("'postgresql://u@h:1/db'", '"memory.db"') == body


def test_openai_server_and_client_on_postgres(postgres_url, tmp_path, env):
    server = next(body for _, body in shell_blocks() if is_server(body))
    client = next(body for lang, body in blocks() if lang == "python" and is_client(body))
    port = _free_port()
    lines = [line.replace("memory.db", shlex.quote(postgres_url)) for line in commands(server.replace("--port 8000", f"--port {port}"))]
    for line in lines[:-1]:
        subprocess.run(shlex.split(line), cwd=tmp_path, env=env, check=True, capture_output=True, timeout=600)
    proc = subprocess.Popen(shlex.split(lines[-1]), cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start listening"
                time.sleep(0.5)
        (tmp_path / "client.py").write_text(client.replace(":8000/", f":{port}/"), encoding="utf-8")
        run = subprocess.run([sys.executable, "client.py"], check=False, cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        assert "Kyoto station" in run.stdout
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    _no_sqlite_files(tmp_path)
    with Kernel(postgres_url, embedder=None, ner=None) as kernel:
        threads = kernel.list_sessions(user_id="alice")
        assert len(threads) == 1
        texts = [m.content for m in kernel.list_messages(threads[0].id)]
        assert any("Kyoto station" in text for text in texts)
