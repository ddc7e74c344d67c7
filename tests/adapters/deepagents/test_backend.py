"""``AgentBaseBackend`` answers every file operation as deepagents' own backends do.

The same scripts (hand-written and seeded random: writes, edits, reads with odd windows, ls, grep with
paths / globs / caps, glob, recursive deletes, binary and text uploads, downloads) run on
``StateBackend`` inside a LangGraph node (deepagents' default), on ``StoreBackend`` over LangGraph's
``InMemoryStore`` (its persistent backend) and on ours; the outcomes must be equal call by call.
"""

from __future__ import annotations

import asyncio

import pytest
from deepagents.backends import StoreBackend
from deepagents.backends.protocol import BackendProtocol
from langgraph.store.memory import InMemoryStore

from agentbase_adapters._failopen import FailOpen
from agentbase_adapters.deepagents import AgentBaseBackend
from agentbase_kernel import AgentBase
from tests.adapters.deepagents._ops import random_script, run, run_in_state

SCRIPT = [
    ("write", "/notes.md", "TODO: call Alice\nbuy milk\nTODO: renew passport\n"),
    ("write", "/projects/alpha/plan.md", "alpha plan\nTODO ship it\n"),
    ("write", "/projects/alpha/log.txt", "started\n"),
    ("write", "/projects/beta.md", "beta\n"),
    ("write", "/.hidden/cfg.yml", "key: TODO\n"),
    ("write", "/empty.md", ""),
    ("ls", "/"), ("ls", "/projects"), ("ls", "/projects/"), ("ls", "/nope"),
    ("read", "/notes.md", 0, 2000), ("read", "/notes.md", 1, 1), ("read", "/notes.md", -5, 2),
    ("read", "/notes.md", 10, 5), ("read", "/notes.md", 0, 0), ("read", "/empty.md", 0, 10), ("read", "/missing.md", 0, 10),
    ("grep", "TODO", None, None, None), ("grep", "TODO", "/projects", None, None), ("grep", "TODO", "/notes.md", None, None),
    ("grep", "TODO", None, "*.md", None), ("grep", "TODO", None, "**/*.md", None), ("grep", "TODO", None, "/*.md", None),
    ("grep", "TODO", None, None, 2), ("grep", "TODO", None, None, 4), ("grep", "", "/projects/alpha", None, None),
    ("grep", "todo", None, None, None), ("grep", "TODO", None, "../x", None), ("grep", "TODO", "", None, None),
    ("glob", "*.md", None), ("glob", "**/*.md", "/"), ("glob", "/*.md", None), ("glob", "*.yml", None),
    ("glob", "**/*.yml", None), ("glob", "projects/**", "/"), ("glob", "*.{md,txt}", "/projects"), ("glob", "../*", None),
    ("edit", "/notes.md", "TODO", "DONE", False), ("edit", "/notes.md", "TODO", "DONE", True),
    ("edit", "/notes.md", "absent", "x", False), ("edit", "/notes.md", "", "x", False), ("edit", "/missing.md", "a", "b", False),
    ("edit", "/notes.md", "milk\n\n", "x", False), ("read", "/notes.md", 0, 2000),
    ("upload", [("/img/logo.png", b"\x89PNG\r\n\x1a\n\x00\xff"), ("/notes.md", b"uploaded TODO\n")]),
    ("edit", "/img/logo.png", "PNG", "JPG", False), ("read", "/img/logo.png", 0, 10), ("grep", "PNG", None, None, None),
    ("download", ["/img/logo.png", "/notes.md", "/missing.md"]), ("ls", "/img"),
    ("delete", "/projects"), ("delete", "/projects"), ("delete", "/nope"), ("ls", "/"), ("glob", "**/*", None),
    ("write", "/projects/alpha/plan.md", "recreated TODO\n"), ("grep", "TODO", None, None, None),
]


@pytest.fixture
def ours(db: AgentBase) -> AgentBaseBackend:
    return AgentBaseBackend(db, user_id="alice")


def _store_backend() -> StoreBackend:
    return StoreBackend(store=InMemoryStore(), namespace=lambda _rt: ("filesystem",))


def test_it_is_a_deepagents_backend(ours):
    assert isinstance(ours, BackendProtocol)


def test_the_same_script_gives_what_state_and_store_backends_give(ours):
    expected = run_in_state(SCRIPT)
    assert run(_store_backend(), SCRIPT) == expected  # deepagents' two backends agree with each other
    assert run(ours, SCRIPT) == expected


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_random_scripts_give_what_the_state_backend_gives(db, seed):
    script = random_script(seed, 150)
    expected = run_in_state(script)
    got = run(AgentBaseBackend(db, user_id=f"u{seed}"), script)
    for step, (op, want, have) in enumerate(zip(script, expected, got)):
        assert have == want, (step, op)


async def test_async_twins_answer_as_the_sync_methods(ours):
    assert (await ours.awrite("/a.md", "one TODO\n")).path == "/a.md"
    assert (await ours.aedit("/a.md", "one", "two")).occurrences == 1
    assert (await ours.aread("/a.md")).file_data["content"] == "two TODO\n"
    assert [m["path"] for m in (await ours.agrep("TODO", max_count=1)).matches] == ["/a.md"]
    assert [m["path"] for m in (await ours.aglob("*.md")).matches] == ["/a.md"]
    assert [e["path"] for e in (await ours.als("/")).entries] == ["/a.md"]
    assert (await ours.aupload_files([("/b.bin", b"\x00\xff")]))[0].error is None
    assert (await ours.adownload_files(["/b.bin"]))[0].content == b"\x00\xff"
    assert (await ours.adelete("/a.md")).path == "/a.md"


# -- agentbase specifics ----------------------------------------------------------------------------------------

def test_a_path_is_one_stable_entry_in_the_backends_scope(db, ours):
    ours.write("/notes.md", "Alice is allergic to peanuts\n")
    ours.edit("/notes.md", "peanuts", "peanuts and shellfish")
    ours.write("/notes.md", "Alice is allergic to peanuts and shellfish\nAlice runs on Sundays\n")
    [entry] = db.sync.list(user_id="alice")
    assert (entry.source, entry.metadata["file_path"]) == ("deepagents", "/notes.md")
    assert [e.event for e in db.sync.history(entry.id)] == ["ADD", "UPDATE", "UPDATE"]
    assert db.sync.find("what is alice allergic to", user_id="alice")[0].id == entry.id
    bob = AgentBaseBackend(db, user_id="bob")
    assert bob.read("/notes.md").error == "File '/notes.md' not found"  # same path, other scope
    bob.write("/notes.md", "Bob's notes\n")
    assert db.sync.count(user_id="alice") == 1 and ours.read("/notes.md").file_data["content"].startswith("Alice")


def test_binary_files_are_kept_but_not_indexed_as_text(db, ours):
    ours.upload_files([("/img/logo.png", b"\x89PNG\x00\xff")])
    [entry] = db.sync.list(user_id="alice")
    assert entry.text == "/img/logo.png (binary file, 6 bytes)"
    assert ours.download_files(["/img/logo.png"])[0].content == b"\x89PNG\x00\xff"


def test_scope_can_come_from_the_runtime(db):
    backend = AgentBaseBackend(db, scope=lambda rt: {"user_id": "carol" if rt is None else rt.context["user"]})
    backend.write("/x.md", "outside a graph")
    assert [e.user_id for e in db.sync.list()] == ["carol"]
    with pytest.raises(TypeError, match="either scope"):
        AgentBaseBackend(db, user_id="a", scope=lambda rt: {})


def test_grep_asks_the_store_for_the_files_that_hold_the_pattern(db, ours, monkeypatch):
    for i in range(50):
        ours.write(f"/notes/{i}.md", f"note {i}\n" + ("needle here\n" if i % 10 == 0 else ""))
    seen = []
    original = ours.files.listed
    monkeypatch.setattr(ours.files, "listed", lambda *a, **k: seen.append(out := original(*a, **k)) or out)
    assert len(ours.grep("needle").matches) == 5
    assert len(seen[0]) == 5  # five entries came back from the store, not fifty


def test_a_store_that_goes_away_answers_with_errors_not_exceptions(tmp_path, hash_embedder):
    db = AgentBase(tmp_path / "gone.db", embedder=hash_embedder, ner="regex")
    guard = FailOpen(threshold=2, cooldown=3600)
    backend = AgentBaseBackend(db, user_id="alice", guard=guard)
    backend.write("/a.md", "kept")
    db.sync.close()
    results = [backend.read("/a.md"), backend.write("/b.md", "x"), backend.edit("/a.md", "k", "K"), backend.ls("/"),
               backend.grep("kept"), backend.glob("*.md"), backend.delete("/a.md")]
    assert all(r.error and "memory store unavailable" in r.error for r in results)
    assert backend.upload_files([("/c.md", b"x")])[0].error.startswith("Error: memory store unavailable")
    assert backend.download_files(["/a.md"])[0].error.startswith("Error: memory store unavailable")
    assert guard.stats.failed == 2 and guard.stats.refused == 7 and guard.stats.sent_while_open == 0
    assert asyncio.run(backend.aread("/a.md")).error.startswith("Error: memory store unavailable")


def test_arguments_of_the_wrong_type_are_the_operations_error_not_a_store_failure(db, ours):
    """deepagents' convention is an ``error`` in the result; its own backends raise a raw ``AttributeError`` (or
    store ``None`` as a file) here. Ours answers each with an error and never counts it against the store."""
    ours.write("/kept.md", "kept\n")
    results = {
        "write": ours.write("/x.md", None), "write_path": ours.write(None, "x"), "ls": ours.ls(None),
        "read": ours.read("/kept.md", offset="1"), "edit": ours.edit("/kept.md", None, "y"),
        "edit_flag": ours.edit("/kept.md", "kept", "y", replace_all="yes"), "delete": ours.delete(3),
        "grep": ours.grep(None), "grep_count": ours.grep("kept", max_count="2"), "glob": ours.glob(None),
    }
    for name, result in results.items():
        assert result.error and result.error.startswith("Error: ") and " must be " in result.error, name
    assert results["write"].error == "Error: content must be str, not NoneType"
    assert [r.error for r in ours.upload_files([("/ok.md", b"ok"), ("/bad.md", "not bytes"), None])] == \
        [None, "invalid_path", "invalid_path"]
    assert [(r.path, r.error) for r in ours.download_files(["/ok.md", 7])] == [("/ok.md", None), ("7", "invalid_path")]
    assert sorted(e.metadata["file_path"] for e in db.sync.list(user_id="alice")) == ["/kept.md", "/ok.md"]
    assert ours.guard.stats.failed == 0 and ours.read("/kept.md").file_data["content"] == "kept\n"
