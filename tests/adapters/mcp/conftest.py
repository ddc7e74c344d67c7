"""Fixtures for the MCP server: the SDK's own client talking to a server subprocess.

Tests are synchronous: each ``McpClient`` runs one ``mcp.Client`` inside an anyio blocking portal,
so hypothesis can drive it example by example. The server and a ``Kernel`` open the same file,
and results are checked against the kernel.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
import mcp
import pytest
from mcp.client.stdio import StdioServerParameters

from agentbase_kernel import Kernel
from tests.conftest import HashEmbedder

ROOT = Path(__file__).resolve().parents[3]
_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
        "PYTHONPATH": str(ROOT)}


def launch(db: Path | str, *options: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    """A server on ``db`` started by ``python -m tests.adapters.mcp._launch`` (hash embedder)."""
    return StdioServerParameters(command=sys.executable, args=["-m", "tests.adapters.mcp._launch", "--db", str(db),
                                                               *options], env={**_ENV, **(env or {})}, cwd=str(ROOT))


def command(db: Path | str, *options: str) -> StdioServerParameters:
    """The real ``agentbase-mcp`` command (real models)."""
    exe = Path(sys.executable).with_name("agentbase-mcp")
    return StdioServerParameters(command=str(exe), args=["--db", str(db), *options], env=_ENV, cwd=str(ROOT))


class McpClient:
    """The SDK's ``mcp.Client`` driven from synchronous code."""

    def __init__(self, server: StdioServerParameters | str, **client_options: Any) -> None:
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._client_cm = self.portal.wrap_async_context_manager(mcp.Client(server, **client_options))
        try:
            self.client: mcp.Client = self._client_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.portal.call(self.client.call_tool, name, arguments or {})

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool that must succeed; its structured result."""
        result = self.call(name, arguments)
        assert not result.is_error, result.content[0].text
        return result.structured_content

    def fails(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """Call a tool that must fail as a tool error; its message."""
        result = self.call(name, arguments)
        assert result.is_error, f"{name} {arguments!r:.200} succeeded: {result.structured_content!r:.300}"
        return result.content[0].text

    def tools(self) -> list[Any]:
        return self.portal.call(self.client.list_tools).tools

    def run(self, fn: Any, *args: Any) -> Any:
        return self.portal.call(fn, *args)

    def close(self) -> None:
        try:
            self._client_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)


@pytest.fixture(scope="module")
def server_db(make_db_location: Any) -> Path | str:
    """The server's database: a file, or a Postgres URL under AGENTBASE_TEST_BACKEND=postgres."""
    return make_db_location("memory.db")


@pytest.fixture(scope="module")
def alice(server_db: Path | str) -> Iterator[McpClient]:
    """A single-tenant stdio server for user 'alice'."""
    client = McpClient(launch(server_db, "--user-id", "alice"))
    yield client
    client.close()


@pytest.fixture(scope="module")
def kernel_on(server_db: Path | str) -> Iterator[Kernel]:
    """A kernel on the server's file, to check what the tools did."""
    with Kernel(server_db, embedder=HashEmbedder(), ner="regex") as k:
        yield k


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("server did not start listening")


def server_env() -> dict[str, str]:
    return {**os.environ, **_ENV}
