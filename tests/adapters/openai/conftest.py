"""Fixtures for the OpenAI adapter: the real ``openai`` clients wired to the app in-process.

Every response the app sends through these fixtures is checked by ``WireChecker`` against the
SDK's own pydantic types with ``strict=True`` (the SDK itself parses leniently, so the client
alone would not notice a missing or mistyped field).

This folder is the package ``tests.adapters.openai`` (its ``__init__.py`` keeps the dotted name), so
``import openai`` in these tests still resolves to the SDK.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import openai
import pytest
from starlette.testclient import TestClient

from agentbase_adapters.openai import create_app
from agentbase_kernel import AgentBase

from .openai_testkit import (
    ASSISTANTS_DEPRECATED,
    WireChecker,
    reply_with_context,
    sync_client,
)

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The Assistants calls warn on every use (contracts D.1); that is the SDK's business, not ours.
    for item in items:
        if "adapters/openai" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.filterwarnings(ASSISTANTS_DEPRECATED))


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any connection beyond 127.0.0.1 fails the test (the SDKs must never phone home here)."""
    connect = socket.socket.connect

    def guarded(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            raise AssertionError(f"a test tried to connect to {address!r}")
        return connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")


@pytest.fixture
def responder() -> Any:
    return reply_with_context


@pytest.fixture
def wire(db: AgentBase, responder: Any) -> Iterator[WireChecker]:
    """The app on ``db`` (with ``responder``), wrapped so every body is checked; fails on a bad one."""
    checker = WireChecker(create_app(db, responder=responder))
    yield checker
    assert checker.problems == []


@pytest.fixture
def client(wire: WireChecker) -> Iterator[openai.OpenAI]:
    """The real sync ``openai.OpenAI`` talking to the app in-process."""
    sdk, http = sync_client(wire)
    with http:
        yield sdk
    assert wire.checked > 0


@pytest.fixture
def raw(wire: WireChecker) -> Iterator[TestClient]:
    """A plain HTTP client on the same app, for exact status codes and bodies."""
    with TestClient(wire, base_url="http://agentbase.test", client=("127.0.0.1", 50000)) as http:
        yield http


@pytest.fixture
async def aclient(wire: WireChecker) -> AsyncIterator[openai.AsyncOpenAI]:
    """The real ``openai.AsyncOpenAI`` over ``httpx.ASGITransport``."""
    transport = httpx.ASGITransport(app=wire)
    async with httpx.AsyncClient(transport=transport) as http:
        yield openai.AsyncOpenAI(
            api_key="sk-test", base_url="http://agentbase.test/v1", max_retries=0, http_client=http
        )
    assert wire.checked > 0
