"""The real ``AsyncOpenAI`` in-process (httpx and httpx2 ASGI transports), and both clients over a
real socket on 127.0.0.1 (uvicorn in a thread)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import openai
import pytest
import uvicorn
from openai.types.beta import Thread

from agentbase_adapters.openai import create_app, serve
from agentbase_kernel import AgentBase

from .openai_testkit import WireChecker, check_body, reply_with_context


def text_of(message: Any) -> str:
    return message.content[0].text.value


async def test_async_client_threads_messages_runs(aclient: openai.AsyncOpenAI) -> None:
    thread = await aclient.beta.threads.create(metadata={"user_id": "alice"})
    assert await aclient.beta.threads.retrieve(thread.id) == thread
    for i in range(5):
        await aclient.beta.threads.messages.create(thread.id, role="user", content=f"m{i}")
    seen = [text_of(m) async for m in aclient.beta.threads.messages.list(thread.id, order="asc", limit=2)]
    assert seen == [f"m{i}" for i in range(5)]
    run = await aclient.beta.threads.runs.create_and_poll(
        thread_id=thread.id, assistant_id="asst_1", poll_interval_ms=1
    )
    assert run.status == "completed"
    assert [r.id async for r in aclient.beta.threads.runs.list(thread.id)] == [run.id]
    updated = await aclient.beta.threads.update(thread.id, metadata={"k": "v"})
    assert updated.metadata == {"k": "v", "user_id": "alice"}
    with pytest.raises(openai.NotFoundError):
        await aclient.beta.threads.messages.retrieve("msg_missing", thread_id=thread.id)
    assert (await aclient.beta.threads.delete(thread.id)).deleted is True


async def test_async_client_auto_paginates_250_messages(aclient: openai.AsyncOpenAI, db: AgentBase) -> None:
    thread = await aclient.beta.threads.create()
    await db.add_messages(
        thread.id, [{"role": "user", "content": f"n{i}", "ingest": False} for i in range(250)]
    )
    newest_first = [text_of(m) async for m in aclient.beta.threads.messages.list(thread.id, limit=100)]
    assert newest_first == [f"n{i}" for i in reversed(range(250))]


async def test_async_client_conversations(aclient: openai.AsyncOpenAI) -> None:
    conversation = await aclient.conversations.create(items=[{"role": "user", "content": "hello"}])
    await aclient.conversations.items.create(conversation.id, items=[{"role": "assistant", "content": "hi"}])
    roles = [item.role async for item in aclient.conversations.items.list(conversation.id, order="asc")]  # type: ignore[union-attr]
    assert roles == ["user", "assistant"]


async def test_async_responder_is_awaited_and_requests_run_concurrently(db: AgentBase) -> None:
    started = asyncio.Event()

    async def responder(messages: list[dict[str, str]], context: list[dict[str, Any]]) -> str:
        started.set()
        await asyncio.sleep(0.05)
        return "async answer"

    wire = WireChecker(create_app(db, responder=responder))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=wire)) as http:
        client = openai.AsyncOpenAI(
            api_key="sk-test", base_url="http://agentbase.test/v1", max_retries=0, http_client=http
        )
        thread = await client.beta.threads.create(messages=[{"role": "user", "content": "q"}])
        run_task = asyncio.create_task(client.beta.threads.runs.create(thread.id, assistant_id="asst_1"))
        await started.wait()
        # The loop is free while the responder works: another request completes meanwhile.
        assert (await client.beta.threads.retrieve(thread.id)).id == thread.id
        assert not run_task.done()
        run = await run_task
    assert run.status == "completed"
    assert wire.problems == [] and wire.checked >= 3


async def test_concurrent_runs_on_one_thread_are_all_recorded(aclient: openai.AsyncOpenAI) -> None:
    # Runs live in session metadata, which the kernel replaces wholesale: without the adapter's
    # lock around the read-modify-write, concurrent runs overwrite each other's records.
    thread = await aclient.beta.threads.create(messages=[{"role": "user", "content": "hi"}])
    runs = await asyncio.gather(
        *(aclient.beta.threads.runs.create(thread.id, assistant_id="a") for _ in range(6))
    )
    listed = {run.id async for run in aclient.beta.threads.runs.list(thread.id)}
    assert listed == {run.id for run in runs}


# -- a real socket


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(db: AgentBase) -> Iterator[tuple[str, WireChecker]]:
    """The app behind uvicorn on a free loopback port, with an API key."""
    wire = WireChecker(create_app(db, api_key="sk-socket", responder=reply_with_context))
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(wire, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    yield f"http://127.0.0.1:{port}/v1", wire
    server.should_exit = True
    thread.join(timeout=10)
    assert wire.problems == []


def test_sync_client_over_a_real_socket(served: tuple[str, WireChecker]) -> None:
    base_url, wire = served
    client = openai.OpenAI(api_key="sk-socket", base_url=base_url, max_retries=0)
    thread = client.beta.threads.create(metadata={"user_id": "alice"})
    client.beta.threads.messages.create(thread.id, role="user", content="over the wire")
    run = client.beta.threads.runs.create_and_poll(
        thread_id=thread.id, assistant_id="asst_1", poll_interval_ms=1
    )
    assert run.status == "completed"
    assert [text_of(m) for m in client.beta.threads.messages.list(thread.id, order="asc")] == [
        "over the wire",
        "You said: over the wire (1 memories)",
    ]
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(api_key="sk-wrong", base_url=base_url, max_retries=0).beta.threads.create()
    raw = httpx.get(f"{base_url}/threads/{thread.id}", headers={"Authorization": "Bearer sk-socket"})
    Thread.model_validate(raw.json(), strict=True)
    assert wire.checked >= 6


async def test_async_client_over_a_real_socket(served: tuple[str, WireChecker]) -> None:
    base_url, _ = served
    client = openai.AsyncOpenAI(api_key="sk-socket", base_url=base_url, max_retries=0)
    conversation = await client.conversations.create(items=[{"role": "user", "content": "socket item"}])
    items = [item async for item in client.conversations.items.list(conversation.id)]
    assert [item.content[0].text for item in items] == ["socket item"]  # type: ignore[union-attr]
    await client.close()


def test_serve_refuses_a_public_interface_without_a_key(tmp_path: Any) -> None:
    with pytest.raises(
        ValueError, match=r"^Refusing to serve on 0\.0\.0\.0 without an API key - pass api_key="
    ):
        serve(tmp_path / "x.db", host="0.0.0.0", port=free_port())
    assert not (tmp_path / "x.db").exists()


def test_wire_checker_rejects_what_the_lenient_sdk_accepts() -> None:
    # The guard behind every fixture must be able to fail: the SDK itself parses this fine.
    lenient = {"id": "thread_1", "object": "thread", "created_at": "1700000000"}
    assert Thread.model_construct(**lenient).id == "thread_1"
    with pytest.raises(ValueError):
        check_body("GET", "/v1/threads/thread_1", 200, lenient)
    with pytest.raises(AssertionError):
        check_body("GET", "/v1/threads/thread_1", 404, {"error": {"message": "x"}})
