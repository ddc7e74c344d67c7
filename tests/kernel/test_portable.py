"""The portable export format: a lossless round trip, scope filters, idempotent re-import,
bad lines refused whole, and vectors kept or re-embedded by embedder."""

from __future__ import annotations

import dataclasses
import io
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from agentbase_kernel import InvalidArgument, Kernel
from tests.conftest import HashEmbedder


class OtherEmbedder(HashEmbedder):
    name = "test-hash-32"
    dim = 32


def records(path: Path) -> list[dict]:
    """The file's records, between its header and its trailer (whose digest covers the header's time)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "trailer"
    return lines[1:-1]


def header(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8").splitlines()[0])


@pytest.fixture
def populated(tmp_path: Path) -> Kernel:
    """A file with every kind of row: facts and their links, updates, supersession, a deleted
    entry's history, expired and duplicate-keeping entries, sessions with turns, a trace."""
    k = Kernel(tmp_path / "src.db", embedder=HashEmbedder())
    k.initialize()
    old = datetime(2024, 3, 1, 9, 30, tzinfo=timezone.utc)
    k.add_memory("I like green tea in the morning", user_id="alice", tags=["drink"], metadata={"src": "chat", "n": 2},
                 created_at=old, category="preference")
    k.add_memory("My name is Alice and I work at Acme in Berlin", user_id="alice", infer=True)
    k.add_memory("I live in Paris", user_id="alice", infer=True)
    k.add_memory("I moved to Lisbon last month", user_id="alice", infer=True)
    changed = k.add_memory("Bob likes coffee", user_id="bob", agent_id="helper").entry
    k.update(changed.id, text="Bob likes espresso", metadata={"v": 2})
    gone = k.add_memory("temporary note", user_id="alice").entry
    k.delete(gone.id)
    k.add_memory("expired coupon code 1234", user_id="alice", expires_at=old + timedelta(days=1))
    k.add_memory("same value", user_id="bob", dedup=False)
    k.add_memory("same value", user_id="bob", dedup=False)
    k.create_session("s-alice", user_id="alice", metadata={"channel": "web"})
    k.add_messages("s-alice", [
        {"role": "user", "content": "Hi, I am Alice. I adopted a cat named Tom.", "name": "Alice", "created_at": old},
        {"role": "assistant", "content": "Nice to meet you Alice! How is Tom?", "created_at": old + timedelta(minutes=1)},
    ])
    k.commit_session("s-alice")
    k.create_session("s-bob", user_id="bob")
    k.add_messages("s-bob", [{"role": "user", "content": "Remind me to call Carol on Friday"}])
    k.find("what does alice drink", user_id="alice")
    return k


def test_round_trip_is_lossless(populated: Kernel, tmp_path: Path) -> None:
    first = tmp_path / "first.jsonl"
    counts = populated.export(first, traces=True)
    assert {"entry", "entity", "vector", "session", "message", "session_entry", "entry_source", "entry_link",
            "history", "trace"} <= set(counts)
    with Kernel(tmp_path / "copy.db", embedder=HashEmbedder()) as copy:
        summary = copy.import_(first)
        assert summary["vectors_dropped"] == 0 and summary["reembedded"] == 0
        second = tmp_path / "second.jsonl"
        copy.export(second, traces=True)
        assert copy.verify()["ok"]
        stats, source = copy.stats(), populated.stats()
        # vectors of texts no entry holds any more (deleted, replaced) are not exported
        assert stats.pop("vectors") == counts["vector"] < source.pop("vectors")
        assert stats == source
        hit = copy.find("green tea", user_id="alice")[0]
    assert records(first) == records(second)
    h1, h2 = header(first), header(second)
    assert h1.pop("exported_at") and h2.pop("exported_at")
    assert h1 == h2 and h1["embedder"] == {"name": "test-hash-64", "dim": 64}
    assert hit.entry.l2_full == "I like green tea in the morning"
    assert hit.entry.created_at == datetime(2024, 3, 1, 9, 30, tzinfo=timezone.utc)


def test_history_times_links_survive(populated: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "all.jsonl"
    populated.export(path)
    with Kernel(tmp_path / "copy.db", embedder=HashEmbedder()) as copy:
        copy.import_(path)
        for entry in populated.list(include_invalid=True, include_expired=True, limit=None):
            again = copy.get(entry.id)
            # access counters are a ranking hint of the database that served the searches: not exported
            assert dataclasses.replace(again, access_count=0, last_accessed_at=None) == dataclasses.replace(
                entry, access_count=0, last_accessed_at=None)
            assert copy.history(entry.id) == populated.history(entry.id)
        deleted = [r for r in records(path) if r["type"] == "history"]
        assert deleted and copy.history(deleted[0]["entry_id"])[-1].event == "DELETE"
        assert [m.content for m in copy.list_messages("s-alice")] == [m.content for m in populated.list_messages("s-alice")]
        assert copy.get_session("s-alice") == populated.get_session("s-alice")
        assert by_name(copy.entity_graph(user_id="alice")) == by_name(populated.entity_graph(user_id="alice"))


def by_name(graph: dict) -> tuple:
    """An entity graph with the database's own entity numbers replaced by (norm, label)."""
    names = {n["id"]: (n["norm"], n["label"]) for n in graph["nodes"]}
    nodes = sorted((n["norm"], n["label"], n["text"], n["entries"]) for n in graph["nodes"])
    edges = sorted((*sorted([names[e["a"]], names[e["b"]]]), e["entry_id"], e["observed_at"]) for e in graph["edges"])
    return nodes, edges


def test_reimport_is_idempotent_and_newer_rows_win(populated: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "all.jsonl"
    populated.export(path)
    with Kernel(tmp_path / "copy.db", embedder=HashEmbedder()) as copy:
        copy.import_(path)
        before = copy.stats()
        again = copy.import_(path)
        assert all(c["inserted"] == 0 and c["updated"] == 0 for c in again["by_type"].values())
        assert copy.stats() == before
        # a later export of a changed entry updates it; an older one is skipped
        target = next(e for e in populated.list(user_id="alice", limit=None) if "green tea" in e.l2_full)
        populated.update(target.id, text="I like jasmine tea in the morning")
        newer = tmp_path / "newer.jsonl"
        populated.export(newer, user_id="alice")
        result = copy.import_(newer)
        assert result["by_type"]["entry"]["updated"] == 1
        assert copy.get(target.id).l2_full == "I like jasmine tea in the morning"
        assert [h.event for h in copy.history(target.id)] == ["ADD", "UPDATE"]
        assert copy.import_(path)["by_type"]["entry"]["updated"] == 0
        assert copy.get(target.id).l2_full == "I like jasmine tea in the morning"


def test_scope_filter_exports_one_user(populated: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "bob.jsonl"
    populated.export(path, user_id="bob")
    recs = records(path)
    assert header(path)["filters"] == {"user_id": "bob"}
    entries = [r for r in recs if r["type"] == "entry"]
    assert entries and {r["user_id"] for r in entries} == {"bob"}
    assert {r["id"] for r in recs if r["type"] == "session"} == {"s-bob"}
    assert not [r for r in recs if r["type"] == "history"]  # a deleted entry's scope is unknown
    with Kernel(tmp_path / "bob.db", embedder=HashEmbedder()) as copy:
        copy.import_(path)
        assert copy.count(user_id="alice") == 0
        assert copy.count(user_id="bob", include_invalid=True, include_expired=True) == len(entries)
        assert copy.find("espresso", user_id="bob")[0].entry.l2_full == "Bob likes espresso"


def test_other_embedder_drops_vectors_and_reembeds(populated: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "all.jsonl"
    populated.export(path)
    with Kernel(tmp_path / "other.db", embedder=OtherEmbedder()) as copy:
        summary = copy.import_(path)
        assert summary["vectors_dropped"] > 0 and summary["reembedded"] > 0
        assert copy.verify()["texts_without_vector"] == 0
        hit = copy.find("green tea", user_id="alice")[0]
        assert "green tea" in hit.entry.l2_full


def test_no_vectors_option_and_reembedding(populated: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "novec.jsonl"
    counts = populated.export(path, vectors=False)
    assert "vector" not in counts
    with Kernel(tmp_path / "copy.db", embedder=HashEmbedder()) as copy:
        assert copy.import_(path)["reembedded"] > 0
        assert copy.verify()["ok"]


def test_vectors_are_base64_float32_little_endian(populated: Kernel, tmp_path: Path) -> None:
    import base64

    path = tmp_path / "all.jsonl"
    populated.export(path)
    vec = next(r for r in records(path) if r["type"] == "vector")
    arr = np.frombuffer(base64.b64decode(vec["vector"]), dtype="<f4")
    assert arr.shape == (64,)
    text = next(r["l2_full"] for r in records(path) if r["type"] == "entry" and r["content_hash"] == vec["content_hash"])
    assert np.allclose(arr, HashEmbedder().embed_batch([text])[0], atol=1e-6)


def test_bad_line_is_named_and_nothing_is_written(populated: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "all.jsonl"
    populated.export(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    bad_cases = {
        "{not json": "not valid JSON",
        json.dumps({"type": "entry", "id": "x"}): "lacks",
        json.dumps({"type": "spaceship"}): "unknown record type",
        json.dumps({**next(r for r in records(path) if r["type"] == "message"), "seq": "one"}): "seq must be int",
    }
    for bad, why in bad_cases.items():
        broken = tmp_path / "broken.jsonl"
        broken.write_text("\n".join([*lines[:6], bad, *lines[6:]]) + "\n", encoding="utf-8")
        with Kernel(tmp_path / f"target-{len(bad)}.db", embedder=HashEmbedder()) as copy:
            with pytest.raises(InvalidArgument, match=f"line 7: .*{why}"):
                copy.import_(broken)
            assert copy.stats()["entries"] == 0 and copy.stats()["vectors"] == 0
    bad_time = [json.loads(x) for x in lines]
    first_entry = next(i for i, r in enumerate(bad_time) if r["type"] == "entry")
    bad_time[first_entry]["created_at"] = "yesterday"
    broken.write_text("\n".join(json.dumps(r) for r in bad_time) + "\n", encoding="utf-8")
    with Kernel(tmp_path / "target-time.db", embedder=HashEmbedder()) as copy:
        with pytest.raises(InvalidArgument, match=f"line {first_entry + 1}: entry.created_at is not an ISO 8601 time"):
            copy.import_(broken)
        assert copy.stats()["entries"] == 0


def test_header_is_required_and_versioned(tmp_path: Path) -> None:
    with Kernel(tmp_path / "t.db", embedder=None) as k:
        with pytest.raises(InvalidArgument, match="not an agentbase export"):
            k.import_(io.StringIO('{"type": "entry"}\n'))
        newer = {"type": "header", "format": "agentbase-export", "format_version": 99}
        with pytest.raises(InvalidArgument, match="format_version 99"):
            k.import_(io.StringIO(json.dumps(newer) + "\n"))
        with pytest.raises(InvalidArgument, match="empty"):
            k.import_(io.StringIO(""))


def test_dry_run_counts_and_writes_nothing(populated: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "all.jsonl"
    counts = populated.export(path)
    with Kernel(tmp_path / "dry.db", embedder=HashEmbedder()) as copy:
        summary = copy.import_(path, dry_run=True)
        assert summary["by_type"] == counts and summary["dry_run"]
        assert copy.stats()["entries"] == 0


def test_stream_out_and_in(populated: Kernel, tmp_path: Path) -> None:
    buf = io.StringIO()
    populated.export(buf, session_id="s-bob")
    buf.seek(0)
    with Kernel(tmp_path / "s.db", embedder=HashEmbedder()) as copy:
        copy.import_(buf)
        assert [m.content for m in copy.list_messages("s-bob")] == ["Remind me to call Carol on Friday"]


def test_source_records_are_ingested_with_their_times(tmp_path: Path) -> None:
    """What importers hand over: memories and chat messages analysed like API writes, times kept."""
    made = "2023-05-04T10:00:00+00:00"
    recs = [
        {"type": "header", "format": "agentbase-export", "format_version": 1, "source": "test", "embedder": None},
        {"type": "memory", "id": "m-1", "text": "Alice is allergic to peanuts", "user_id": "alice",
         "metadata": {"k": "v"}, "created_at": made, "updated_at": "2023-06-01T00:00:00+00:00",
         "history": [{"id": "h1", "event": "ADD", "old_value": None, "new_value": "Alice is allergic to nuts",
                      "created_at": made},
                     {"id": "h2", "event": "UPDATE", "old_value": "Alice is allergic to nuts",
                      "new_value": "Alice is allergic to peanuts", "created_at": "2023-06-01T00:00:00+00:00"}]},
        {"type": "session", "id": "conv-1", "user_id": "alice", "metadata": {"title": "trip"},
         "created_at": made, "updated_at": made},
        {"type": "chat_message", "session_id": "conv-1", "id": "msg-1", "role": "user", "name": "Alice",
         "content": "We fly to Tokyo in April", "created_at": made},
        {"type": "chat_message", "session_id": "conv-1", "id": "msg-2", "role": "assistant",
         "content": "Enjoy Tokyo!", "created_at": "2023-05-04T10:00:05+00:00"},
    ]
    with Kernel(tmp_path / "t.db", embedder=HashEmbedder()) as k:
        summary = k.import_(recs)
        assert summary["by_type"]["memory"]["inserted"] == 1 and summary["by_type"]["chat_message"]["inserted"] == 2
        entry = k.get("m-1")
        assert entry.created_at.isoformat() == made and entry.metadata == {"k": "v"}
        assert entry.updated_at.isoformat() == "2023-06-01T00:00:00+00:00"
        assert [h.id for h in k.history("m-1")] == ["h1", "h2"]
        assert k.get_session("conv-1").updated_at.isoformat() == made
        msgs = k.list_messages("conv-1")
        assert [(m.id, m.role, m.name) for m in msgs] == [("msg-1", "user", "Alice"), ("msg-2", "assistant", None)]
        hit = k.find("when do we fly to Tokyo", user_id="alice")[0]
        assert hit.entry.l2_full == "We fly to Tokyo in April" and hit.entry.created_at.isoformat() == made
        again = k.import_(recs)
        assert again["by_type"]["memory"] == {"inserted": 0, "updated": 0, "skipped": 1}
        assert again["by_type"]["chat_message"]["skipped"] == 2
        assert len(k.list_messages("conv-1")) == 2


async def test_async_twins(populated: Kernel, tmp_path: Path) -> None:
    from agentbase_kernel import AgentBase

    path = tmp_path / "a.jsonl"
    populated.export(path)
    async with AgentBase(tmp_path / "async.db", embedder=HashEmbedder()) as db:
        assert (await db.import_(path))["by_type"]["entry"]["inserted"] > 0
        counts = await db.export(tmp_path / "b.jsonl")
    assert records(path) == records(tmp_path / "b.jsonl") and counts["entry"] > 0


def test_same_text_under_another_id_is_kept_once(populated: Kernel, tmp_path: Path) -> None:
    path = tmp_path / "alice.jsonl"
    populated.export(path, user_id="alice")
    with Kernel(tmp_path / "t.db", embedder=HashEmbedder()) as k:
        mine = k.add_memory("I like green tea in the morning", user_id="alice").entry
        summary = k.import_(path)
        assert summary["by_type"]["entry"]["skipped"] == 1
        teas = [e for e in k.list(user_id="alice", limit=None) if e.l2_full == "I like green tea in the morning"]
        assert [e.id for e in teas] == [mine.id]
        assert k.verify()["ok"]


def test_failed_export_leaves_no_file(populated: Kernel, tmp_path: Path) -> None:
    def stop(done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    path = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        populated.export(path, progress=stop)
    assert not path.exists() and not (tmp_path / "out.jsonl.partial").exists()
    with pytest.raises(InvalidArgument, match="does not exist"):
        populated.export(tmp_path / "no" / "such" / "dir.jsonl")
