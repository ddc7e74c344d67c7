"""An import file cannot take over another user's data: one attack per record type.

Bob's data is in the database; mallory hands over a file built from bob's own export (ids she
learnt) or pointing at his rows. Whatever the file says, an import never changes the owner of a
row, and never writes into a row, session or link of a scope the file does not bring:

* by default (``on_conflict="fail"``) the import raises ``ImportConflict`` and writes nothing;
* ``"skip"`` leaves the offending record (or pointer) out and reports it;
* ``"rekey"`` imports mallory's own rows under new ids, still leaving bob's alone.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest

from agentbase_kernel import ImportConflict, Kernel

HEADER = {"type": "header", "format": "agentbase-export", "format_version": 2, "embedder": None}
LATER = (datetime.now(timezone.utc) + timedelta(days=365)).isoformat()
NOW = datetime.now(timezone.utc).isoformat()


def exported(kernel: Kernel, **scope: Any) -> list[dict[str, Any]]:
    """The records of an export (no header, trailer or traces), as a list of dicts."""
    buf = io.StringIO()
    kernel.export(buf, vectors=False, **scope)
    return [r for r in map(json.loads, buf.getvalue().splitlines()) if r["type"] not in ("header", "trailer", "trace")]


class Bob:
    """Bob's rows, and what of the whole database mentions any of them."""

    def __init__(self, kernel: Kernel) -> None:
        self.pin = kernel.add_memory("Bob keeps his bank PIN hint under the dog's name", user_id="bob").entry
        self.city = kernel.add_memory("Bob lives in Oslo", user_id="bob").entry
        gone = kernel.add_memory("Bob's old locker code note", user_id="bob").entry
        kernel.delete(gone.id)
        self.gone = gone
        kernel.create_session("s-bob", user_id="bob")
        self.messages = kernel.add_messages("s-bob", [{"role": "user", "content": "Bob's secret plan for Friday"}])
        mine = exported(kernel, user_id="bob")
        self.entry = next(r for r in mine if r["type"] == "entry" and r["id"] == self.pin.id)
        self.session = next(r for r in mine if r["type"] == "session")
        self.ids = {self.pin.id, self.city.id, gone.id, "s-bob",
                    *(m.id for m in self.messages), *(m.entry_id for m in self.messages if m.entry_id)}

    def touched(self, kernel: Kernel) -> list[dict[str, Any]]:
        """Every record of the whole database naming one of bob's ids (his rows and links to them)."""
        return [r for r in exported(kernel) if self.ids & {v for v in r.values() if isinstance(v, str)}]


@pytest.fixture
def bob(kernel: Kernel) -> Bob:
    return Bob(kernel)


def _mallory_entry(text: str = "Mallory's note", **fields: Any) -> dict[str, Any]:
    return {"type": "entry", "id": "mallory-entry-1", "context_type": "memory", "l0_abstract": text,
            "l1_overview": text, "l2_full": text, "content_hash": f"hash-of-{text}", "search_text": text,
            "created_at": NOW, "updated_at": NOW, "user_id": "mallory", **fields}


def _mallory_session(**fields: Any) -> dict[str, Any]:
    return {"type": "session", "id": "s-mallory", "user_id": "mallory", "created_at": NOW, "updated_at": NOW,
            **fields}


def _message(session_id: str, message_id: str = "msg-mallory-1", **fields: Any) -> dict[str, Any]:
    return {"type": "message", "id": message_id, "session_id": session_id, "seq": 1, "role": "user",
            "content": "HACKED", "created_at": NOW, **fields}


# Each attack: records built from what mallory knows of bob's rows.
ATTACKS: dict[str, Callable[[Bob], list[dict[str, Any]]]] = {
    "entry-takes-over-bobs-row": lambda b: [{**b.entry, "user_id": "mallory", "l2_full": "HACKED",
                                             "updated_at": LATER, "history": []}],
    "entry-in-bobs-session": lambda b: [_mallory_entry(session_id="s-bob")],
    "entry-superseded-by-bobs": lambda b: [_mallory_entry(superseded_by=b.pin.id, invalid_at=NOW)],
    "session-takes-over-bobs": lambda b: [{**b.session, "user_id": "mallory", "updated_at": LATER}],
    "session-summary-is-bobs-entry": lambda b: [_mallory_session(summary_entry_id=b.pin.id)],
    "message-into-bobs-session": lambda b: [_message("s-bob")],
    "message-with-bobs-message-id": lambda b: [_mallory_session(), _message("s-mallory", b.messages[0].id)],
    "message-turn-is-bobs-entry": lambda b: [_mallory_session(), _message("s-mallory", entry_id=b.pin.id)],
    "memory-takes-over-bobs-row": lambda b: [{"type": "memory", "id": b.pin.id, "text": "HACKED", "user_id": "mallory",
                                              "updated_at": LATER}],
    "memory-in-bobs-session": lambda b: [{"type": "memory", "text": "Mallory was here", "user_id": "mallory",
                                          "session_id": "s-bob"}],
    "chat-message-into-bobs-session": lambda b: [{"type": "chat_message", "session_id": "s-bob", "role": "user",
                                                  "content": "HACKED"}],
    "history-event-on-bobs-entry": lambda b: [{"type": "history", "entry_id": b.pin.id, "id": "forged-event",
                                               "event": "UPDATE", "old_value": "x", "new_value": "HACKED",
                                               "created_at": NOW}],
    "history-event-on-bobs-deleted-entry": lambda b: [{"type": "history", "entry_id": b.gone.id, "id": "forged-event",
                                                       "event": "RESTORE", "created_at": NOW}],
    "entry-link-to-bobs-entry": lambda b: [_mallory_entry(), {"type": "entry_link", "src": "mallory-entry-1",
                                                              "dst": b.pin.id, "relation": "supersedes",
                                                              "created_at": NOW}],
    "session-entry-into-bobs-session": lambda b: [_mallory_entry(), {"type": "session_entry", "session_id": "s-bob",
                                                                     "entry_id": "mallory-entry-1"}],
    "session-entry-to-bobs-entry": lambda b: [_mallory_session(), {"type": "session_entry", "session_id": "s-mallory",
                                                                   "entry_id": b.pin.id}],
    "entry-source-is-bobs-message": lambda b: [_mallory_entry(), {"type": "entry_source", "entry_id": "mallory-entry-1",
                                                                  "message_id": b.messages[0].id}],
}
# the attacks whose offending record is a row of mallory's own, which "rekey" imports under a new id
REKEYED = {"entry-takes-over-bobs-row", "session-takes-over-bobs", "message-with-bobs-message-id",
           "memory-takes-over-bobs-row"}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_conflict_fails_the_import_and_writes_nothing(kernel: Kernel, bob: Bob, attack: str) -> None:
    before = exported(kernel)
    with pytest.raises(ImportConflict, match="another scope|not in the file") as caught:
        kernel.import_([HEADER, *ATTACKS[attack](bob)])
    assert caught.value.where.startswith("record ")
    assert exported(kernel) == before


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_skip_leaves_bobs_rows_alone_and_reports(kernel: Kernel, bob: Bob, attack: str) -> None:
    before = bob.touched(kernel)
    summary = kernel.import_([HEADER, *ATTACKS[attack](bob)], on_conflict="skip")
    assert summary["conflicts_total"] >= 1, summary
    assert {c["action"] for c in summary["conflicts"]} <= {"skipped", "dropped superseded_by",
                                                           "dropped summary_entry_id", "dropped entry_id"}
    assert bob.touched(kernel) == before
    assert kernel.get(bob.pin.id).l2_full.startswith("Bob keeps") and kernel.get(bob.pin.id).scope.user_id == "bob"
    assert kernel.get_session("s-bob").scope.user_id == "bob"
    assert [m.content for m in kernel.list_messages("s-bob")] == ["Bob's secret plan for Friday"]
    assert not [h for h in kernel.find("HACKED Mallory", user_id="bob").hits if "bob" not in h.content.lower()]


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_rekey_imports_mallorys_rows_under_new_ids(kernel: Kernel, bob: Bob, attack: str) -> None:
    before = bob.touched(kernel)
    summary = kernel.import_([HEADER, *ATTACKS[attack](bob)], on_conflict="rekey")
    assert bob.touched(kernel) == before
    assert kernel.get(bob.pin.id).scope.user_id == "bob"
    if attack in REKEYED:
        [conflict] = summary["conflicts"]
        assert conflict["action"] == "rekeyed" and conflict["new_id"] not in bob.ids
        if attack.startswith(("entry", "memory")):
            moved = kernel.get(conflict["new_id"])
            assert moved.l2_full == "HACKED" and moved.scope.user_id == "mallory"
        elif attack.startswith("session"):
            assert kernel.get_session(conflict["new_id"]).scope.user_id == "mallory"
        else:
            assert kernel.get_message("s-mallory", conflict["new_id"]).content == "HACKED"


def test_a_vector_for_a_text_not_in_the_file_is_not_written(kernel: Kernel, bob: Bob) -> None:
    vector = {"type": "vector", "content_hash": "some-other-users-text",
              "vector": base64.b64encode(np.ones(64, dtype="<f4").tobytes()).decode()}
    header = {**HEADER, "embedder": {"name": "test-hash-64", "dim": 64}}
    summary = kernel.import_([header, vector])
    assert summary["by_type"]["vector"] == {"inserted": 0, "updated": 0, "skipped": 1}


def test_a_forced_user_replaces_every_records_own(kernel: Kernel, hash_embedder: Any, tmp_path: Any) -> None:
    """``user_id=`` is the target scope: the file's users are replaced (not filled in)."""
    path = tmp_path / "all.jsonl"
    with Kernel(tmp_path / "source.db", embedder=hash_embedder, ner="regex") as source:
        source.add_memory("Alice likes tea", user_id="alice")
        source.add_memory("A note of nobody in particular", agent_id="bot")
        source.create_session("s-alice", user_id="alice")
        source.add_messages("s-alice", [{"role": "user", "content": "Hello from Alice"}])
        source.find("tea", user_id="alice")
        source.export(path, traces=True)
    kernel.import_(path, user_id="carol")
    entries = kernel.list(include_invalid=True, include_expired=True, limit=None)
    assert entries and {e.scope.user_id for e in entries} == {"carol"}
    assert {e.scope.agent_id for e in entries} == {None, "bot"}
    assert kernel.get_session("s-alice").scope.user_id == "carol"
    assert [m.content for m in kernel.list_messages("s-alice")] == ["Hello from Alice"]
    assert kernel.list(user_id="alice", limit=None) == []


def test_forcing_a_scope_never_merges_into_rows_of_another(kernel: Kernel, bob: Bob) -> None:
    """Bob's own export, imported for carol: his ids are his, so each is a conflict - never a merge."""
    mine = [HEADER, *exported(kernel, user_id="bob")]
    before = bob.touched(kernel)
    with pytest.raises(ImportConflict):
        kernel.import_(mine, user_id="carol")
    summary = kernel.import_(mine, user_id="carol", on_conflict="rekey")
    assert bob.touched(kernel) == before
    copies = kernel.list(user_id="carol", limit=None)
    assert sorted(e.l2_full for e in copies) == sorted(e.l2_full for e in kernel.list(user_id="bob", limit=None))
    assert not {e.id for e in copies} & bob.ids
    assert summary["conflicts_total"] >= 3
    [session] = [s for s in kernel.list_sessions(user_id="carol")]
    assert [m.content for m in kernel.list_messages(session.id)] == ["Bob's secret plan for Friday"]


def test_the_same_scope_reimports_as_before(kernel: Kernel, bob: Bob) -> None:
    """Bob's own backup into his own scope: nothing conflicts; a newer copy of a row updates it."""
    mine = [HEADER, *exported(kernel, user_id="bob")]
    again = kernel.import_(mine)
    assert again["conflicts_total"] == 0
    assert all(c["inserted"] == 0 and c["updated"] == 0 for c in again["by_type"].values())
    newer = [HEADER, {**bob.entry, "l2_full": "Bob moved the PIN hint", "updated_at": LATER}]
    assert kernel.import_(newer)["by_type"]["entry"]["updated"] == 1


def test_on_conflict_must_be_one_of_three(kernel: Kernel) -> None:
    with pytest.raises(ValueError, match="on_conflict must be one of fail, skip, rekey"):
        kernel.import_([HEADER], on_conflict="merge")
