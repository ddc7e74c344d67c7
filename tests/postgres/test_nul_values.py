"""NUL (U+0000) in texts and metadata: kept exactly on both backends, and the metadata filters stay exact.

PostgreSQL's ``text`` and ``jsonb`` cannot hold U+0000, so the Postgres store escapes it (and U+0001/U+0002,
which the escape uses) in every string it writes (``agentbase_kernel/store/postgres/escape.py``). Each test
runs the same calls on a SQLite file and on a Postgres database and expects the same answers: what was
stored comes back unchanged through every path (add, update, sessions, export/import, Mem0, LangGraph), and
``eq`` / ``contains`` / ``startswith`` / ``icontains`` / ``gt`` on values holding those characters match
exactly what Python says, with no false hit on values that look like the escape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentbase_kernel import AgentBase, Kernel
from tests.conftest import HashEmbedder

pytestmark = pytest.mark.postgres

# values chosen to catch a naive escape: the escape's own characters, a "0" after them, U+FFFE
VALUES = {
    "nul": "a\x00b",
    "nul_first": "\x00abc",
    "zero_text": "0abc",
    "one": "a\x01b",
    "two": "a\x02b",
    "esc_like": "a\x01\x01\x01\x02b",  # what the escape writes for "a\x00b", given literally
    "fffe": "a\ufffe0b",
    "plain": "ab",
    "nul_nul": "\x00\x00",
}
NEEDLES = ["\x00", "a\x00", "\x00b", "0abc", "\x01", "\x02", "\x01\x01", "b", "\ufffe0", "\x00\x00", "A\x00B"]


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    if request.param == "sqlite":
        return tmp_path / "memory.db"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def kernel(location: Path | str) -> Any:
    with Kernel(location, embedder=HashEmbedder(), ner="regex") as k:
        yield k


def _fill(kernel: Kernel) -> dict[str, str]:
    ids = {}
    for name, value in VALUES.items():
        ids[name] = kernel.add_memory(f"memory {name} text {value} end", user_id="u",
                                      metadata={"v": value, "k\x00ey": value, "n": {"v": value}}).id
    return ids


def _names(kernel: Kernel, flt: dict[str, Any], ids: dict[str, str]) -> set[str]:
    by_id = {v: k for k, v in ids.items()}
    return {by_id[e.id] for e in kernel.list(user_id="u", metadata=flt, limit=None)}


def test_texts_and_metadata_come_back_exactly(kernel: Kernel) -> None:
    ids = _fill(kernel)
    for name, value in VALUES.items():
        entry = kernel.get(ids[name], user_id="u")
        assert entry.l2_full == f"memory {name} text {value} end"
        assert entry.metadata == {"v": value, "k\x00ey": value, "n": {"v": value}}


def test_metadata_filters_are_exact_on_values_holding_nul(kernel: Kernel, location: Path | str) -> None:
    ids = _fill(kernel)
    # SQLite's JSON ->> hands the case-folding function a value cut at its first NUL, so icontains there
    # misses what follows a NUL (a SQLite-store limitation, reported); every other operator is exact on both
    check_icontains = not isinstance(location, Path)
    for key in ("v", "k\x00ey", "n.v"):
        for name, value in VALUES.items():
            assert _names(kernel, {key: value}, ids) == {name}, (key, name)
        for needle in NEEDLES:
            expected = {n for n, v in VALUES.items() if needle in v}
            assert _names(kernel, {key: {"contains": needle}}, ids) == expected, (key, needle)
            if check_icontains:
                expected = {n for n, v in VALUES.items() if needle.lower() in v.lower()}
                assert _names(kernel, {key: {"icontains": needle}}, ids) == expected, (key, needle)
            expected = {n for n, v in VALUES.items() if v.startswith(needle)}
            assert _names(kernel, {key: {"startswith": needle}}, ids) == expected, (key, needle)
            expected = {n for n, v in VALUES.items() if v > needle}
            assert _names(kernel, {key: {"gt": needle}}, ids) == expected, (key, needle)
        assert _names(kernel, {key: {"in": ["a\x00b", "ab"]}}, ids) == {"nul", "plain"}
        assert _names(kernel, {key: {"ne": "a\x00b"}}, ids) == set(VALUES) - {"nul"}


def test_update_sessions_and_history_keep_nul(kernel: Kernel) -> None:
    entry = kernel.add_memory("first version", user_id="u", tags=["t\x00g"])
    updated = kernel.update(entry.id, user_id="u", text="second\x00version", metadata={"why": "fix\x00ed"})
    assert updated.l2_full == "second\x00version" and updated.metadata == {"why": "fix\x00ed"}
    assert kernel.get(entry.id, user_id="u").tags == ["t\x00g"]
    assert [e.id for e in kernel.list(user_id="u", tags=["t\x00g"])] == [entry.id]
    assert [h.new_value for h in kernel.history(entry.id)][-1] == "second\x00version"
    assert [h.id for h in kernel.find("second\x00version", user_id="u")][:1] == [entry.id]
    assert kernel.trace_session(user_id="u")[0]["query"] == "second\x00version"  # the trace keeps the query

    session = kernel.create_session(user_id="u", metadata={"channel": "w\x00eb"})
    message = kernel.add_message(session.id, "user", "hello\x00there", metadata={"m": "\x00"})
    assert kernel.get_session(session.id, user_id="u").metadata == {"channel": "w\x00eb"}
    got = kernel.get_message(session.id, message.id)
    assert (got.content, got.metadata) == ("hello\x00there", {"m": "\x00"})
    kernel.update_message(session.id, message.id, metadata={"m": "\x00\x01\x02"})
    assert kernel.get_message(session.id, message.id).metadata == {"m": "\x00\x01\x02"}


def test_export_import_across_backends_keeps_nul(kernel: Kernel, location: Path | str, tmp_path: Path,
                                                  request: pytest.FixtureRequest) -> None:
    ids = _fill(kernel)
    dump = tmp_path / "export.jsonl"
    kernel.export(dump)
    other = str(request.getfixturevalue("postgres_url")) if isinstance(location, Path) else tmp_path / "other.db"
    with Kernel(other, embedder=HashEmbedder(), ner="regex") as target:
        target.import_(dump)
        for name, value in VALUES.items():
            entry = target.get(ids[name], user_id="u")
            assert entry.metadata["k\x00ey"] == value and entry.l2_full.endswith(f"{value} end")
        assert _names(target, {"v": {"contains": "\x00"}}, ids) == {"nul", "nul_first", "nul_nul"}


def test_mem0_metadata_and_langgraph_values_keep_nul(location: Path | str) -> None:
    from agentbase_adapters.langgraph import AgentBaseStore
    from agentbase_adapters.mem0 import Mem0Adapter

    db = AgentBase(location, embedder=HashEmbedder(), ner="regex")
    try:
        memory = Mem0Adapter(db)
        added = memory.add("I like green tea", user_id="u", metadata={"note": "n\x00ul"}, infer=False)
        memory_id = added["results"][0]["id"]
        assert memory.get(memory_id)["metadata"]["note"] == "n\x00ul"
        hits = memory.get_all(user_id="u", filters={"note": "n\x00ul"})["results"]
        assert [h["id"] for h in hits] == [memory_id]

        store = AgentBaseStore(db)
        store.put(("users", "u"), "k", {"value": "v\x00al", "n\x00": [1, "\x00"]})
        assert store.get(("users", "u"), "k").value == {"value": "v\x00al", "n\x00": [1, "\x00"]}
    finally:
        db.sync.close()
