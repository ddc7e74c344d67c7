"""Process entry points for the two-writers runs test (spawned processes import this module by name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def echo(messages: list[dict[str, str]], context: list[dict[str, Any]]) -> str:
    return f"echo: {messages[-1]['content']}"


def create_runs(path: str, thread_id: str, tag: str, n: int, rounds: int) -> None:
    """``n`` runs on ``thread_id``, each from a fresh adapter instance, tagged ``tag`` in run metadata;
    then ``rounds`` metadata changes of every one of them (each a read-modify-write of the thread's runs)."""
    from agentbase_adapters.openai import OpenAIAssistantAdapter
    from agentbase_kernel import AgentBase
    from tests.conftest import HashEmbedder

    db = AgentBase(path if "://" in path else Path(path), embedder=HashEmbedder(), ner="regex")  # a Postgres URL stays a string
    try:
        runs = []
        for i in range(n):
            oa = OpenAIAssistantAdapter(db, responder=echo)
            runs.append(oa.create_run(thread_id, assistant_id="asst_1", metadata={"writer": tag, "i": str(i)}))
        for r in range(rounds):
            for i, run in enumerate(runs):
                oa.modify_run(thread_id, run["id"], metadata={"writer": tag, "i": str(i), "round": str(r)})
    finally:
        db.sync.close()
