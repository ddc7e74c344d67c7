"""Sessions and messages: order by sequence, insertion, status, ingest links, commit."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone

import pytest

from agentbase_kernel import InvalidArgument, MessageNotFound, ScopeError, SessionNotFound


def test_messages_keep_insertion_order_with_equal_timestamps(kernel):
    same = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    kernel.create_session("s", user_id="u")
    for i in range(20):
        kernel.add_message("s", "user" if i % 2 == 0 else "assistant", f"turn {i}", created_at=same)
    assert [m.content for m in kernel.list_messages("s")] == [f"turn {i}" for i in range(20)]
    assert [m.content for m in kernel.list_messages("s", order="desc", limit=3)] == ["turn 19", "turn 18", "turn 17"]


def test_insert_at_position_and_cursors(kernel):
    kernel.add_messages("s", [{"role": "user", "content": c} for c in ("a", "b", "d")])
    kernel.add_message("s", "user", "c", position=2)
    kernel.add_message("s", "user", "start", position=0)
    msgs = kernel.list_messages("s")
    assert [m.content for m in msgs] == ["start", "a", "b", "c", "d"]
    after_b = kernel.list_messages("s", after=msgs[2].id)
    assert [m.content for m in after_b] == ["c", "d"]
    before_c_desc = kernel.list_messages("s", order="desc", after=msgs[3].id)
    assert [m.content for m in before_c_desc] == ["b", "a", "start"]
    assert [m.content for m in kernel.list_messages("s", before=msgs[2].id)] == ["start", "a"]
    with pytest.raises(MessageNotFound):
        kernel.list_messages("s", after="msg_missing")


def test_turns_become_memories_in_the_session_scope(kernel):
    kernel.create_session("s1", user_id="alice", agent_id="bot")
    m = kernel.add_message("s1", "user", "I adopted a dog named Rex", metadata={"dia_id": "D1:1"})
    assert m.entry_id is not None
    entry = kernel.get(m.entry_id)
    assert (entry.user_id, entry.agent_id, entry.session_id, entry.role) == ("alice", "bot", "s1", "user")
    hits = kernel.find("dog named Rex", user_id="alice")
    assert hits[0].id == m.entry_id
    assert hits[0].provenance[0].metadata == {"dia_id": "D1:1"}
    assert len(kernel.find("dog named Rex", user_id="mallory")) == 0


def test_system_messages_are_not_memories(kernel):
    m = kernel.add_message("s", "system", "You are a helpful assistant")
    assert m.entry_id is None
    assert kernel.count() == 0


def test_delete_message_removes_its_turn_entry(kernel):
    m1 = kernel.add_message("s", "user", "remember the blue door")
    m2 = kernel.add_message("s", "user", "and the red window")
    deleted = kernel.delete_message("s", m1.id)
    assert deleted.id == m1.id
    assert [m.id for m in kernel.list_messages("s")] == [m2.id]
    assert m1.entry_id not in {h.id for h in kernel.find("blue door")}
    assert kernel.count() == 1
    with pytest.raises(MessageNotFound):
        kernel.delete_message("s", m1.id)


def test_status_archive_and_counts(kernel):
    msgs = kernel.add_messages("s", [{"role": "user", "content": f"m{i}"} for i in range(4)])
    kernel.update_message("s", msgs[0].id, status="archived")
    assert kernel.count_messages("s") == 4
    assert kernel.count_messages("s", status="active") == 3
    assert [m.content for m in kernel.list_messages("s", status="archived")] == ["m0"]
    kernel.clear_session("s", status="archived")
    assert kernel.count_messages("s") == 3


def test_set_messages_replaces(kernel):
    kernel.add_messages("s", [{"role": "user", "content": "old one"}])
    kernel.set_messages("s", [{"role": "user", "content": "new one"}, {"role": "assistant", "content": "ok"}])
    assert [m.content for m in kernel.list_messages("s")] == ["new one", "ok"]
    assert {h.entry.l2_full for h in kernel.find("old one", session_id="s")} <= {"new one", "ok"}


def test_payload_round_trip(kernel):
    payload = {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c1", "name": "f", "args": {"x": 1}}]}}
    m = kernel.add_message("s", "assistant", "", payload=payload)
    assert kernel.get_message("s", m.id).payload == payload


def test_session_scope_conflict(kernel):
    kernel.create_session("s", user_id="alice")
    assert kernel.create_session("s", user_id="alice").scope.user_id == "alice"
    with pytest.raises(ScopeError):
        kernel.create_session("s", user_id="bob")
    with pytest.raises(SessionNotFound):
        kernel.get_session("s", user_id="bob")


def test_commit_writes_summary_and_links(kernel):
    kernel.create_session("s", user_id="u")
    kernel.add_messages("s", [
        {"role": "user", "content": "I'm planning a trip to Japan in April"},
        {"role": "assistant", "content": "Kyoto is lovely in April for cherry blossoms"},
        {"role": "user", "content": "Great, I will book a hotel in Kyoto"},
    ])
    summary = kernel.commit_session("s")
    assert summary.category == "session_summary"
    assert summary.session_id == "s" and summary.user_id == "u"
    session = kernel.get_session("s")
    assert session.committed_at is not None and session.summary_entry_id == summary.id
    exported = io.StringIO()
    kernel.export(exported)
    linked = [record["entry_id"] for record in map(json.loads, exported.getvalue().splitlines())
              if record["type"] == "session_entry" and record["session_id"] == "s"]
    turn_ids = {m.entry_id for m in kernel.list_messages("s")}
    assert turn_ids | {summary.id} <= set(linked)


def test_a_summary_s_own_labels_are_not_tagged_as_names(real_db):
    kernel = real_db.sync  # the real spaCy tagger reads "Topics:" at a sentence start as a name
    kernel.add_messages("s", [{"role": "user", "content": "My sister Ana is visiting Lisbon in March."},
                              {"role": "assistant", "content": "Lisbon in spring is lovely; try the tram."}], user_id="u")
    summary = kernel.commit_session("s")
    assert summary.l2_full.count("Topics:") == 1 and "Last:" in summary.l2_full
    assert {"ner_ana", "ner_lisbon"} <= set(summary.tags)
    assert not {"ner_topics", "ner_last", "ner_first request"} & set(summary.tags)


def test_bad_message_input(kernel):
    with pytest.raises(InvalidArgument):
        kernel.add_message("s", "", "x")
    with pytest.raises(InvalidArgument):
        kernel.add_message("s", "user", 5)  # type: ignore[arg-type]
    with pytest.raises(ScopeError):
        kernel.add_message("", "user", "x")
    assert kernel.list_sessions() == []


def test_add_messages_checks_scope_in_the_same_transaction(kernel):
    kernel.add_messages("s", [{"role": "user", "content": "hi"}], user_id="alice")
    assert kernel.get_session("s").scope.user_id == "alice"
    with pytest.raises(ScopeError):
        kernel.add_messages("s", [{"role": "user", "content": "intruder"}], user_id="bob")
    assert [m.content for m in kernel.list_messages("s")] == ["hi"]


def test_bulk_status_and_delete(kernel):
    msgs = kernel.add_messages("s", [{"role": "user", "content": f"m{i}"} for i in range(5)])
    kernel.update_messages("s", [m.id for m in msgs[:2]], status="archived")
    assert kernel.count_messages("s", status="archived") == 2
    with pytest.raises(MessageNotFound):
        kernel.delete_messages("s", [msgs[2].id, "msg_missing"])
    assert kernel.count_messages("s") == 5
    gone = kernel.delete_messages("s", [msgs[3].id, msgs[4].id])
    assert [m.content for m in gone] == ["m3", "m4"]
    assert [m.content for m in kernel.list_messages("s")] == ["m0", "m1", "m2"]


def _patcher(path: str, worker: int) -> None:
    from agentbase_kernel import Kernel

    with Kernel(path, embedder=None, ner=None) as k:
        for i in range(25):
            k.update_session("shared", metadata_patch={f"w{worker}-{i}": i})


def test_metadata_patches_from_processes_never_lose_keys(db_path):
    import multiprocessing

    from agentbase_kernel import Kernel

    with Kernel(db_path, embedder=None, ner=None) as k:
        k.create_session("shared", metadata={"keep": "yes", "drop": "x"})
        k.update_session("shared", metadata_patch={"drop": None})
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_patcher, args=(str(db_path), w)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Kernel(db_path, embedder=None, ner=None) as k:
        meta = k.get_session("shared").metadata
    assert meta["keep"] == "yes" and "drop" not in meta
    assert len(meta) == 1 + 2 * 25
