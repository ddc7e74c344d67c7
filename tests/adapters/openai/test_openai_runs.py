"""Runs across processes and adapter instances, and a run's own messages."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from agentbase_adapters.openai import OpenAIAssistantAdapter
from agentbase_kernel import AgentBase
from tests.adapters.openai import _workers

N = 8
ROUNDS = 15


def test_two_processes_writing_runs_to_one_thread_lose_none(db_path: Path, hash_embedder: Any) -> None:
    with AgentBase(db_path, embedder=hash_embedder, ner="regex") as db:
        thread = OpenAIAssistantAdapter(db).create_thread(messages=[{"role": "user", "content": "hello"}])
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_workers.create_runs, args=(str(db_path), thread["id"], tag, N, ROUNDS)) for tag in "ab"]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=180)
    assert [w.exitcode for w in workers] == [0, 0]

    with AgentBase(db_path, embedder=hash_embedder, ner="regex") as db:
        oa = OpenAIAssistantAdapter(db, responder=_workers.echo)
        runs = oa.list_runs(thread["id"], limit=100, order="asc")["data"]
        assert sorted((r["metadata"]["writer"], int(r["metadata"]["i"]), r["metadata"]["round"]) for r in runs) == [
            (tag, i, str(ROUNDS - 1)) for tag in "ab" for i in range(N)
        ]
        assert all(r["status"] == "completed" for r in runs)
        for run in runs:  # each run's reply is found by the ids recorded with the run
            [reply] = oa.list_messages(thread["id"], run_id=run["id"])["data"]
            assert (reply["role"], reply["run_id"]) == ("assistant", run["id"])


def test_two_adapter_instances_on_one_thread_keep_both_runs(db: AgentBase) -> None:
    first = OpenAIAssistantAdapter(db, responder=_workers.echo)
    second = OpenAIAssistantAdapter(db, responder=_workers.echo)
    thread = first.create_thread(messages=[{"role": "user", "content": "hello"}])
    a = first.create_run(thread["id"], assistant_id="asst_1")
    b = second.create_run(thread["id"], assistant_id="asst_1")
    second.modify_run(thread["id"], a["id"], metadata={"seen": "yes"})
    assert [r["id"] for r in first.list_runs(thread["id"], order="asc")["data"]] == [a["id"], b["id"]]
    assert first.retrieve_run(thread["id"], a["id"])["metadata"] == {"seen": "yes"}


def test_run_messages_page_with_cursors_and_skip_other_runs(db: AgentBase) -> None:
    oa = OpenAIAssistantAdapter(db, responder=_workers.echo)
    thread = oa.create_thread(messages=[{"role": "user", "content": "one"}])
    first = oa.create_run(thread["id"], assistant_id="asst_1")
    oa.create_message(thread["id"], role="user", content="two")
    second = oa.create_run(thread["id"], assistant_id="asst_1")
    [mine] = oa.list_messages(thread["id"], run_id=second["id"])["data"]
    assert mine["content"][0]["text"]["value"] == "echo: two"
    everything = oa.list_messages(thread["id"], order="asc")["data"]
    assert oa.list_messages(thread["id"], run_id=second["id"], after=everything[0]["id"])["data"] == [mine]
    assert oa.list_messages(thread["id"], run_id=second["id"], before=mine["id"])["data"] == []
    assert oa.list_messages(thread["id"], run_id=first["id"], order="asc")["data"][0]["run_id"] == first["id"]
    assert oa.list_messages(thread["id"], run_id="run_unknown")["data"] == []
    oa.delete_message(thread["id"], mine["id"])
    assert oa.list_messages(thread["id"], run_id=second["id"])["data"] == []
