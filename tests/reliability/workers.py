"""Process entry points for the concurrency and crash tests (spawned children import this module by name).

Every function opens its own ``AgentBase`` on the shared file with the test ``HashEmbedder``, so the
children behave like separate agents on one machine. Nothing here asserts: results go back to the
parent (return values, or an acknowledgement file flushed and fsynced after every returned write).
"""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path
from typing import Any

ADAPTERS = ("kernel", "mem0", "minimal", "langgraph", "langchain", "llamaindex", "openai")


def _open(path: str) -> Any:
    from agentbase_kernel import AgentBase
    from tests.conftest import HashEmbedder

    # a PostgreSQL URL stays a string (tests/postgres runs these workers on a server)
    return AgentBase(path if "://" in path else Path(path), embedder=HashEmbedder(), ner="regex")


def _writers(db: Any, worker: int) -> dict[str, Any]:
    """One write function per adapter: ``fn(text)`` stores ``text`` as one memory of user ``u<worker>``."""
    from langchain_core.messages import HumanMessage
    from llama_index.core.base.llms.types import ChatMessage

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory
    from agentbase_adapters.langgraph import AgentBaseStore
    from agentbase_adapters.llamaindex import AgentBaseChatStore
    from agentbase_adapters.mem0 import Mem0Adapter
    from agentbase_adapters.minimal import MinimalAdapter
    from agentbase_adapters.openai import OpenAIAssistantAdapter

    user = f"u{worker}"
    mem0, minimal, graph = Mem0Adapter(db), MinimalAdapter(db), AgentBaseStore(db)
    history = AgentBaseChatMessageHistory(f"lc-{user}", db=db, user_id=user)
    chats = AgentBaseChatStore(db, user_id=user)
    oa = OpenAIAssistantAdapter(db)
    thread = oa.create_thread(metadata={"user_id": user})
    return {
        "kernel": lambda text: db.sync.add_memory(text, user_id=user),
        "mem0": lambda text: mem0.add(text, user_id=user, infer=False),
        "minimal": lambda text: minimal.remember(text, who=user),
        "langgraph": lambda text: graph.put(("memories", user), text, {"text": text}),
        "langchain": lambda text: history.add_messages([HumanMessage(text)]),
        "llamaindex": lambda text: chats.add_message(f"li-{user}", ChatMessage(role="user", content=text)),
        "openai": lambda text: oa.create_message(thread["id"], role="user", content=text),
    }


def write_mixed(path: str, worker: int, n: int, shared: int) -> dict[str, Any]:
    """``n`` unique writes rotating through every adapter, plus ``shared`` texts every worker also writes.

    The shared texts go through the kernel into one common scope, so concurrent workers race to
    insert the same memory: the file must end up with exactly one entry per shared text.
    """
    errors: list[str] = []
    written: list[str] = []
    db = _open(path)
    try:
        writers = _writers(db, worker)
        for i in range(n):
            adapter = ADAPTERS[(i + worker) % len(ADAPTERS)]
            text = f"worker {worker} write {i} via {adapter} marker w{worker}x{i}"
            try:
                writers[adapter](text)
                written.append(text)
            except Exception as exc:
                errors.append(f"{adapter}: {type(exc).__name__}: {exc}")
            step = max(1, n // shared)
            if shared and i % step == 0 and i // step < shared:
                try:
                    db.sync.add_memory(f"shared fact number {i // step}", user_id="everyone")
                except Exception as exc:
                    errors.append(f"shared: {type(exc).__name__}: {exc}")
    except Exception:
        errors.append(traceback.format_exc())
    finally:
        db.sync.close()
    return {"worker": worker, "written": written, "errors": errors}


def read_loop(path: str, seconds: float) -> dict[str, Any]:
    """Search and list while the writers run; every error is reported."""
    errors: list[str] = []
    reads = 0
    db = _open(path)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            for call in (lambda: db.sync.find("worker write marker", top_k=20),
                         lambda: db.sync.list(limit=50, order="desc"),
                         lambda: db.sync.count(user_id="everyone")):
                try:
                    call()
                    reads += 1
                except Exception as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        db.sync.close()
    return {"reads": reads, "errors": errors}


def ingest_until_killed(path: str, ack_path: str, kind: str, batch: int, start: int) -> None:
    """Bulk-ingest batches forever; after each returned call, append its texts to ``ack_path`` and fsync.

    The parent SIGKILLs this process at a random moment and then checks that every acknowledged
    text is in the file.
    """
    db = _open(path)
    db.sync.initialize()
    with open(ack_path, "a", encoding="utf-8") as ack:
        ack.write("ready\n")
        ack.flush()
        os.fsync(ack.fileno())
        n = start
        while True:
            texts = [f"crash test {kind} item {n + j} marker c{n + j}" for j in range(batch)]
            if kind == "memories":
                db.sync.add_memories([{"text": t, "user_id": "crash", "metadata": {"n": n}} for t in texts])
            else:
                db.sync.add_messages(f"crash-session-{n // 50}", [{"role": "user", "content": t} for t in texts])
            ack.write("".join(t + "\n" for t in texts))
            ack.flush()
            os.fsync(ack.fileno())
            n += batch
