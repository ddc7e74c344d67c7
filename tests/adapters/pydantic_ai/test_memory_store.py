"""``AgentBaseMemoryStore`` against the harness's own stores: the same calls, the same answers.

Every contract test runs on the harness's ``InMemoryStore`` (the ``Memory`` capability's default),
its ``SqliteMemoryStore`` and ours; a seeded random run of mixed operations is replayed on the
default store and on ours and the outcomes compared call by call. Versions are opaque on both
sides, so they are compared by what they identify, never by spelling.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from pydantic_ai_harness.memory import (
    InMemoryStore,
    MemoryConflictError,
    MemoryOperation,
    MemoryOperationConflictError,
    MemoryStore,
    MetadataMemoryStore,
    SearchableMemoryStore,
    SqliteMemoryStore,
)

from agentbase_adapters.pydantic_ai import OPERATIONS_SESSION, AgentBaseMemoryStore, namespace_scope
from agentbase_kernel import AgentBase

KINDS = ("in_memory", "sqlite", "agentbase")


@pytest.fixture(params=KINDS)
def store(request, tmp_path, db: AgentBase) -> Any:
    if request.param == "in_memory":
        return InMemoryStore()
    if request.param == "sqlite":
        return SqliteMemoryStore(database=tmp_path / "harness.sqlite3")
    return AgentBaseMemoryStore(db)


def test_it_is_every_store_protocol_the_harness_checks_for(db):
    ours = AgentBaseMemoryStore(db)
    assert isinstance(ours, MemoryStore)
    assert isinstance(ours, MetadataMemoryStore)
    assert isinstance(ours, SearchableMemoryStore)


async def test_compare_and_set(store):
    made = await store.write("alice/main/MEMORY.md", "- tea\n", expected_version=None)
    assert (made.replayed, made.existed) == (False, False)
    read = await store.read("alice/main/MEMORY.md", max_chars=100)
    assert (read.content, read.version, read.operation_id, read.truncated) == ("- tea\n", made.version, None, False)
    changed = await store.write("alice/main/MEMORY.md", "- tea\n- rain\n", expected_version=made.version)
    assert changed.existed and changed.version != made.version
    with pytest.raises(MemoryConflictError):
        await store.write("alice/main/MEMORY.md", "stale", expected_version=made.version)
    with pytest.raises(MemoryConflictError):
        await store.write("alice/main/MEMORY.md", "as if new", expected_version=None)
    with pytest.raises(MemoryConflictError):
        await store.delete("alice/main/MEMORY.md", expected_version=made.version)
    gone = await store.delete("alice/main/MEMORY.md", expected_version=changed.version)
    assert (gone.version, gone.existed, gone.replayed) == (None, True, False)
    assert await store.read("alice/main/MEMORY.md", max_chars=100) is None
    with pytest.raises(MemoryConflictError):  # a version that was never issued
        await store.write("alice/main/MEMORY.md", "x", expected_version="12345")


async def test_a_recreated_file_never_gets_an_old_version(store):
    first = await store.write("n.md", "same", expected_version=None)
    await store.delete("n.md", expected_version=first.version)
    again = await store.write("n.md", "same", expected_version=None)
    assert again.version != first.version
    with pytest.raises(MemoryConflictError):
        await store.write("n.md", "stale", expected_version=first.version)


async def test_bounded_reads_and_sorted_listings(store):
    made = await store.write("t/main/a.md", "0123456789", expected_version=None)
    for name in ("c.md", "b.md"):
        await store.write(f"t/main/{name}", name, expected_version=None)
    await store.write("t/main/deeper/x.md", "x", expected_version=None)
    await store.write("u/main/a.md", "other tenant", expected_version=None)
    head = await store.read("t/main/a.md", max_chars=4)
    assert (head.content, head.truncated, head.version) == ("0123", True, made.version)
    assert await store.list_paths("t/main/", limit=10) == ["t/main/a.md", "t/main/b.md", "t/main/c.md",
                                                           "t/main/deeper/x.md"]
    assert await store.list_paths("t/main/", limit=2) == ["t/main/a.md", "t/main/b.md"]
    assert await store.list_paths(limit=100) == sorted(await store.list_paths(limit=100))
    assert len(await store.list_paths(limit=100)) == 5


async def test_operation_receipts_make_mutations_idempotent(store):
    op = MemoryOperation(id="run-1:step-1:call-1", fingerprint="write t/main/MEMORY.md one")
    first = await store.write("t/main/MEMORY.md", "one", expected_version=None, operation=op)
    replay = await store.write("t/main/MEMORY.md", "one", expected_version=None, operation=op)
    assert (replay.version, replay.replayed, replay.existed) == (first.version, True, False)
    assert await store.get_operation(op) == replay
    assert (await store.read("t/main/MEMORY.md", max_chars=10)).operation_id == op.id
    with pytest.raises(MemoryOperationConflictError):
        await store.get_operation(MemoryOperation(id=op.id, fingerprint="something else"))
    with pytest.raises(MemoryOperationConflictError):
        await store.write("t/main/MEMORY.md", "two", expected_version=first.version,
                          operation=MemoryOperation(id=op.id, fingerprint="something else"))
    assert await store.get_operation(MemoryOperation(id="never", fingerprint="x")) is None
    drop = MemoryOperation(id="run-1:step-2:call-1", fingerprint="delete t/main/gone.md")
    missing = await store.delete("t/main/gone.md", expected_version=None, operation=drop)
    assert (missing.existed, missing.replayed) == (False, False)
    assert (await store.delete("t/main/gone.md", expected_version=None, operation=drop)).replayed
    # a replayed write changes nothing, even when the file moved on since
    later = await store.write("t/main/MEMORY.md", "later", expected_version=first.version)
    assert (await store.write("t/main/MEMORY.md", "one", expected_version=None, operation=op)).replayed
    assert (await store.read("t/main/MEMORY.md", max_chars=10)).version == later.version


async def test_write_metadata_describes_the_current_version_only(store):
    if not isinstance(store, MetadataMemoryStore):
        pytest.skip("FileStore has no write metadata")
    made = await store.write_with_metadata("u/main/MEMORY.md", "typed by the user", expected_version=None,
                                           metadata={"updated_by": "ui"})
    assert (await store.read("u/main/MEMORY.md", max_chars=50)).metadata == {"updated_by": "ui"}
    op = MemoryOperation(id="op-m", fingerprint="f")
    agent = await store.write("u/main/MEMORY.md", "edited by the agent", expected_version=made.version, operation=op)
    assert (await store.read("u/main/MEMORY.md", max_chars=50)).metadata is None
    again = await store.write_with_metadata("u/main/MEMORY.md", "ui again", expected_version=agent.version,
                                            metadata={"updated_by": "ui"})
    replay = await store.write_with_metadata("u/main/MEMORY.md", "edited by the agent", expected_version=made.version,
                                             metadata={"updated_by": "someone"}, operation=op)
    assert replay.replayed and (await store.read("u/main/MEMORY.md", max_chars=50)).metadata == {"updated_by": "ui"}
    await store.write_with_metadata("u/main/MEMORY.md", "empty mapping", expected_version=again.version, metadata={})
    assert (await store.read("u/main/MEMORY.md", max_chars=50)).metadata is None


@pytest.mark.parametrize(("metadata", "error"), [
    pytest.param({"k": 1}, TypeError, id="not-a-string"),
    pytest.param({"k": "a\x00b"}, ValueError, id="nul"),
    pytest.param({"k": "x" * 5000}, ValueError, id="too-long"),
])
async def test_bad_write_metadata_is_refused_before_anything_is_written(store, metadata, error):
    with pytest.raises(error):
        await store.write_with_metadata("u/main/MEMORY.md", "text", expected_version=None, metadata=metadata)
    assert await store.read("u/main/MEMORY.md", max_chars=10) is None


@pytest.mark.parametrize("path", ["../escape.md", "/absolute.md", "a//b.md", "a/./b.md", "a b.md", "a/..x/b.md", ""])
async def test_unsafe_paths_raise_value_error(store, path):
    with pytest.raises(ValueError, match="invalid memory path"):
        await store.read(path, max_chars=10)
    with pytest.raises(ValueError, match="invalid memory path"):
        await store.write(path, "x", expected_version=None)


async def test_non_positive_bounds_raise_value_error(store):
    with pytest.raises(ValueError, match="max_chars"):
        await store.read("a.md", max_chars=0)
    with pytest.raises(ValueError, match="limit"):
        await store.list_paths(limit=0)


async def test_search_stays_in_the_scope_and_within_its_bounds(store):
    for path, content in (("acme/main/alpha.md", "alpha alpha beta"), ("acme/main/beta.md", "alpha once"),
                          ("acme/main/other.md", "unrelated words"), ("acme/main/nested/deep.md", "alpha deep"),
                          ("zeta/main/private.md", "alpha alpha alpha alpha")):
        await store.write(path, content, expected_version=None)
    result = await store.search("acme/main/", "alpha", limit=10, max_files=10, max_chars=80, max_file_chars=1000)
    assert [m.path for m in result.matches] == ["acme/main/alpha.md", "acme/main/beta.md"]
    assert (result.scanned, result.truncated) == (3, False)
    assert sum(len(m.path) - len("acme/main/") + len(m.snippet) for m in result.matches) <= 80
    one = await store.search("acme/main/", "alpha", limit=1, max_files=10, max_chars=80, max_file_chars=1000)
    assert [m.path for m in one.matches] == ["acme/main/alpha.md"] and one.truncated
    tiny = await store.search("acme/main/", "alpha", limit=10, max_files=10, max_chars=1, max_file_chars=1000)
    assert tiny.matches == [] and tiny.truncated
    named = await store.search("acme/main/", "other", limit=10, max_files=10, max_chars=80, max_file_chars=1000)
    assert [m.path for m in named.matches] == ["acme/main/other.md"]  # a file name matches too
    for query, limit, max_chars in (("", 10, 80), ("   ", 10, 80), ("alpha", 0, 80), ("alpha", 10, 0)):
        empty = await store.search("acme/main/", query, limit=limit, max_files=10, max_chars=max_chars,
                                   max_file_chars=1000)
        assert (empty.matches, empty.scanned, empty.truncated) == ([], 0, False)


async def test_snippets_are_windows_around_the_first_term(store):
    await store.write("s.md", "0123456789 " * 5 + "needle in the middle " + "abcdefghij " * 5, expected_version=None)
    [match] = (await store.search("", "needle", limit=1, max_files=5, max_chars=40, max_file_chars=1000)).matches
    assert "needle" in match.snippet and match.snippet.startswith("...") and match.snippet.endswith("...")
    assert len(match.snippet) == 40 - len("s.md")


# -- differential: a random run on the default store and on ours ------------------------------------------------

PATHS = ["alice/main/MEMORY.md", "alice/main/travel.md", "bob/main/MEMORY.md", "main/MEMORY.md", "bad path.md"]


async def _apply(store: Any, op: tuple, versions: dict[str, str]) -> Any:
    """One operation; its outcome with versions replaced by the label of the write that issued them."""
    kind, path, arg, op_id = op
    label = {v: k for k, v in versions.items()}
    operation = MemoryOperation(id=op_id[0], fingerprint=op_id[1]) if op_id else None
    try:
        if kind == "read":
            file = await store.read(path, max_chars=arg)
            return None if file is None else (file.content, label.get(file.version), file.truncated,
                                              file.operation_id)
        if kind == "list":
            return await store.list_paths(path, limit=arg)
        expected = versions.get(arg) if arg else None
        if kind == "write":
            result = await store.write(path, f"content {len(versions)}", expected_version=expected,
                                       operation=operation)
        else:
            result = await store.delete(path, expected_version=expected, operation=operation)
        if result.version is not None and result.version not in label:
            versions[f"v{len(versions)}"] = result.version
            label = {v: k for k, v in versions.items()}
        return (kind, label.get(result.version), result.replayed, result.existed)
    except (MemoryConflictError, MemoryOperationConflictError, ValueError) as exc:
        return type(exc).__name__


def _script(seed: int, steps: int) -> list[tuple]:
    rng = random.Random(seed)
    ops: list[tuple] = []
    for i in range(steps):
        kind = rng.choice(["read", "write", "write", "delete", "list"])
        path = rng.choice(PATHS)
        if kind == "read":
            ops.append((kind, path, rng.choice([1, 5, 100]), None))
        elif kind == "list":
            ops.append((kind, rng.choice(["", "alice/", "alice/main/", "main/"]), rng.choice([1, 3, 10]), None))
        else:
            version = rng.choice([None, None, *(f"v{n}" for n in range(i))]) if i else None
            op_id = (f"op{rng.randrange(6)}", rng.choice(["a", "b"])) if rng.random() < 0.4 else None
            ops.append((kind, path, version, op_id))
    return ops


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_a_random_run_has_the_same_outcomes_as_on_the_default_store(db, seed):
    """Reads, listings, writes and deletes (stale, fresh, replayed, reused ids, bad paths) in a seeded order."""
    script = _script(seed, 120)
    default, ours = InMemoryStore(), AgentBaseMemoryStore(db)
    theirs_versions: dict[str, str] = {}
    our_versions: dict[str, str] = {}
    for step, op in enumerate(script):
        expected = await _apply(default, op, theirs_versions)
        got = await _apply(ours, op, our_versions)
        assert got == expected, (step, op)
    assert set(theirs_versions) == set(our_versions)


# -- agentbase specifics ----------------------------------------------------------------------------------------

async def test_a_file_is_one_entry_in_the_namespaces_scope_findable_by_the_kernel(db):
    store = AgentBaseMemoryStore(db)
    first = await store.write("alice/main/MEMORY.md", "- Alice is allergic to peanuts\n", expected_version=None)
    await store.write("alice/main/MEMORY.md", "- Alice is allergic to peanuts\n- Alice runs on Sundays\n",
                      expected_version=first.version)
    await store.write("bob/main/MEMORY.md", "- Bob is allergic to cats\n", expected_version=None)
    [entry] = db.sync.list(user_id="alice")
    assert (entry.agent_id, entry.source, entry.metadata["file_path"]) == ("main", "pydantic-ai", "alice/main/MEMORY.md")
    assert [e.event for e in db.sync.history(entry.id)] == ["ADD", "UPDATE"]
    hits = db.sync.find("what is alice allergic to", user_id="alice")
    assert [h.id for h in hits] == [entry.id]
    assert db.sync.list_messages(OPERATIONS_SESSION) == []  # no operation, no receipt
    assert namespace_scope("acme/alice/main/notes.md") == {"user_id": "acme/alice", "agent_id": "main"}
    assert namespace_scope("main/MEMORY.md") == {"agent_id": "main"} and namespace_scope("x.md") == {}


async def test_receipts_are_session_messages_not_memories(db):
    store = AgentBaseMemoryStore(db)
    await store.write("a/main/n.md", "text", expected_version=None, operation=MemoryOperation("o1", "f1"))
    [receipt] = db.sync.list_messages(OPERATIONS_SESSION)
    assert receipt.entry_id is None and receipt.metadata["fingerprint"] == "f1"
    assert db.sync.count() == 1


async def test_empty_and_whitespace_files_round_trip(db):
    store = AgentBaseMemoryStore(db)
    for content in ("", "   \n\t", "x\r\n\x00y"):
        made = await store.write("e/main/f.md", content, expected_version=(await _version(store, "e/main/f.md")))
        assert (await store.read("e/main/f.md", max_chars=100)).content == content
        assert made.version == await _version(store, "e/main/f.md")


async def _version(store: AgentBaseMemoryStore, path: str) -> str | None:
    file = await store.read(path, max_chars=1)
    return None if file is None else file.version


async def test_semantic_matches_only_when_asked(db):
    plain = AgentBaseMemoryStore(db)
    await plain.write("a/main/diet.md", "Alice never eats meat or fish", expected_version=None)
    db.sync.wait_embedded()
    assert (await plain.search("a/main/", "vegetarian", limit=5, max_files=10, max_chars=200,
                               max_file_chars=100)).matches == []
    loose = AgentBaseMemoryStore(db, min_similarity=-1.0)
    found = await loose.search("a/main/", "vegetarian", limit=5, max_files=10, max_chars=200, max_file_chars=100)
    assert [m.path for m in found.matches] == ["a/main/diet.md"]
    with pytest.raises(ValueError, match="min_similarity"):
        AgentBaseMemoryStore(db, min_similarity=2)


async def test_a_kept_listing_follows_every_change_made_through_another_connection(tmp_path, hash_embedder):
    """Listings are kept between calls (the capability lists before every run); a file created, deleted or
    replaced by another process on the same database shows at once."""
    path = tmp_path / "shared.db"
    with AgentBase(path, embedder=hash_embedder, ner="regex") as mine, \
            AgentBase(path, embedder=hash_embedder, ner="regex") as theirs:
        ours, other = AgentBaseMemoryStore(mine), AgentBaseMemoryStore(theirs)
        for name in ("a.md", "b.md"):
            await ours.write(f"t/main/{name}", name, expected_version=None)
        assert await ours.list_paths("t/main/", limit=10) == ["t/main/a.md", "t/main/b.md"]
        await other.write("t/main/c.md", "c", expected_version=None)
        assert await ours.list_paths("t/main/", limit=10) == ["t/main/a.md", "t/main/b.md", "t/main/c.md"]
        a = await other.read("t/main/a.md", max_chars=10)
        await other.delete("t/main/a.md", expected_version=a.version)
        assert await ours.list_paths("t/main/", limit=10) == ["t/main/b.md", "t/main/c.md"]
        b = await other.read("t/main/b.md", max_chars=10)
        await other.delete("t/main/b.md", expected_version=b.version)  # one gone, one new: the same count
        await other.write("t/main/d.md", "d", expected_version=None)
        assert await ours.list_paths("t/main/", limit=10) == ["t/main/c.md", "t/main/d.md"]
        c = await other.read("t/main/c.md", max_chars=10)
        await other.write("t/main/c.md", "c again", expected_version=c.version)
        assert await ours.list_paths("t/main/", limit=1) == ["t/main/c.md"]
        assert (await ours.read("t/main/c.md", max_chars=10)).content == "c again"
