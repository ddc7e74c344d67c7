"""``AgentBaseStorage`` against CrewAI's default storage (``LanceDBStorage``): the same calls, the same answers.

Both get the same records and the same query vectors (from ``AgentBaseStorage.embedder``, so both rank the same
embedding space); every ``StorageBackend`` method's result is compared. Where LanceDB's behaviour is a quirk we
do not copy, the test says so and pins both sides.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests.adapters.crewai._need import need_crewai

need_crewai()

from crewai.memory.storage.backend import StorageBackend  # noqa: E402
from crewai.memory.storage.lancedb_storage import LanceDBStorage  # noqa: E402
from crewai.memory.types import MemoryRecord  # noqa: E402

from agentbase_adapters.crewai import AgentBaseStorage  # noqa: E402
from agentbase_kernel import AgentBase, InvalidArgument  # noqa: E402

T0 = datetime(2026, 1, 5, 9, 0, 0)
ROWS = [  # content, scope, categories, metadata, importance, days after T0, source, private
    ("Alice is vegetarian and loves lentil soup", "/user/alice", ["diet"], {"topic": "food", "n": 1}, 0.9, 0, "alice", False),
    ("Alice prefers window seats on long flights", "/user/alice/travel", ["travel"], {"topic": "travel"}, 0.6, 1, "alice", False),
    ("The alpha deploy runs every Friday at noon", "/project/alpha", ["ops", "schedule"], {"topic": "ops"}, 0.7, 2, None, False),
    ("Alpha's database migration is blocked on the backup", "/project/alpha/db", ["ops"], {"topic": "ops", "n": 2}, 0.4, 3, None, False),
    ("Bob's salary is confidential", "/user/bob", ["hr"], {}, 0.3, 4, "bob", True),
    ("The team lunch is on Thursday", "/", [], {"topic": None}, 0.2, 5, None, False),
    ("Projects beyond alpha start in spring", "/projects", ["planning"], {}, 0.5, 6, None, False),
]


def _record(storage: AgentBaseStorage, i: int, row: tuple) -> MemoryRecord:
    content, scope, cats, meta, importance, day, source, private = row
    return MemoryRecord(id=f"rec-{i}", content=content, scope=scope, categories=cats, metadata=meta,
                        importance=importance, created_at=T0 + timedelta(days=day),
                        last_accessed=T0 + timedelta(days=day), source=source, private=private,
                        embedding=storage.embedder([content])[0])


def _plain(record: MemoryRecord | None) -> Any:
    return None if record is None else record.model_dump(exclude={"embedding", "last_accessed"})


@pytest.fixture
def pair(db: AgentBase, tmp_path) -> tuple[AgentBaseStorage, LanceDBStorage]:
    ours = AgentBaseStorage(db, user_id="alice")
    lance = LanceDBStorage(path=tmp_path / "lance")
    records = [_record(ours, i, row) for i, row in enumerate(ROWS)]
    ours.save([r.model_copy() for r in records])
    lance.save([r.model_copy() for r in records])
    return ours, lance


@pytest.fixture(scope="module")
def searched(tmp_path_factory) -> Any:
    """One pair for the read-only search grid (built once: each search leaves both stores as they were)."""
    from tests.conftest import HashEmbedder

    folder = tmp_path_factory.mktemp("search")
    with AgentBase(folder / "memory.db", embedder=HashEmbedder(), ner="regex") as db:
        ours = AgentBaseStorage(db, user_id="alice")
        lance = LanceDBStorage(path=folder / "lance")
        records = [_record(ours, i, row) for i, row in enumerate(ROWS)]
        ours.save([r.model_copy() for r in records])
        lance.save([r.model_copy() for r in records])
        yield ours, lance


def both(pair: tuple, call: Any) -> tuple[Any, Any]:
    return call(pair[0]), call(pair[1])


def test_it_is_a_crewai_storage_backend(db):
    assert isinstance(AgentBaseStorage(db), StorageBackend)


def test_records_round_trip(pair):
    ours, lance = both(pair, lambda s: [_plain(s.get_record(f"rec-{i}")) for i in range(len(ROWS))] +
                       [_plain(s.get_record("nope"))])
    assert ours == lance and ours[0]["metadata"] == {"topic": "food", "n": 1} and ours[-1] is None


@pytest.mark.parametrize("kwargs", [
    {},
    {"scope_prefix": "/user/alice"},
    {"scope_prefix": "/project/"},
    {"scope_prefix": "/"},
    {"categories": ["ops"]},
    {"categories": ["travel", "diet"]},
    {"metadata_filter": {"topic": "ops"}},
    {"metadata_filter": {"topic": "ops", "n": 2}},
    {"metadata_filter": {"topic": None}},
    {"scope_prefix": "/project", "categories": ["schedule"]},
    {"min_score": 0.5},
    {"limit": 2, "min_score": 0.0},
])
@pytest.mark.parametrize("query", ["what does alice eat", "alpha deploy schedule", "quantum zebra"])
def test_search_finds_the_same_records_with_the_same_scores(searched, query, kwargs):
    pair = searched
    vector = pair[0].embedder([query])[0]
    limit = kwargs.pop("limit", 20)
    ours, lance = both(pair, lambda s: sorted(((r.id, round(score, 4)) for r, score in
                                               s.search(vector, limit=limit, **kwargs)), key=lambda x: (-x[1], x[0])))
    if limit >= len(ROWS):
        assert ours == lance
    else:  # the kernel picks the top by words and meaning, LanceDB by the vector alone
        assert len(ours) == len(lance) == limit and {i for i, _ in lance} & {i for i, _ in ours}


def test_listing_scopes_categories_and_counts_agree(pair):
    calls = {
        "list_records": lambda s: [r.id for r in s.list_records()],
        "list_records_scope": lambda s: [r.id for r in s.list_records("/user", limit=2, offset=1)],
        "list_records_empty": lambda s: s.list_records(limit=0),
        "scope_info_root": lambda s: s.get_scope_info("/").model_dump(),
        "scope_info_project": lambda s: s.get_scope_info("/project").model_dump(),
        "scope_info_missing": lambda s: s.get_scope_info("/nobody").model_dump(),
        "list_scopes": lambda s: (s.list_scopes("/"), s.list_scopes("/project"), s.list_scopes("/user/alice")),
        "list_categories": lambda s: (s.list_categories(), s.list_categories("/project")),
        "count": lambda s: (s.count(), s.count("/"), s.count("/user"), s.count("/project/alpha")),
    }
    for name, call in calls.items():
        ours, lance = both(pair, call)
        assert ours == lance, name


def test_update_and_touch(pair):
    def change(s: Any) -> Any:
        record = s.get_record("rec-0")
        s.update(record.model_copy(update={"content": "Alice is vegan now", "categories": ["diet", "change"],
                                           "embedding": pair[0].embedder(["Alice is vegan now"])[0]}))
        s.touch_records(["rec-1", "missing"])
        return _plain(s.get_record("rec-0")), s.get_record("rec-1").last_accessed > T0 + timedelta(days=1)

    ours, lance = both(pair, change)
    assert ours == lance and ours[0]["content"] == "Alice is vegan now" and ours[1]


@pytest.mark.parametrize("kwargs", [
    {"record_ids": ["rec-1", "rec-3", "missing"]},
    {"categories": ["ops"]},
    {"metadata_filter": {"topic": "travel"}},
    {"scope_prefix": "/user", "categories": ["hr"]},
    {"older_than": T0 + timedelta(days=2)},
    {"scope_prefix": "/project", "metadata_filter": {"n": 2}},
])
def test_delete_removes_the_same_records(pair, kwargs):
    ours, lance = both(pair, lambda s: (s.delete(**kwargs), sorted(r.id for r in s.list_records())))
    assert ours == lance


def test_delete_by_scope_keeps_root_memories_unlike_lancedb(pair):
    """LanceDB's ``delete(scope_prefix=...)`` also deletes every root-scope (``/``) record (its SQL is
    ``scope LIKE 'p%' OR scope = '/'``); ours deletes that scope only."""
    ours, lance = both(pair, lambda s: (s.delete(scope_prefix="/project/alpha"), sorted(r.id for r in s.list_records())))
    assert lance == (3, ["rec-0", "rec-1", "rec-4", "rec-6"])
    assert ours == (2, ["rec-0", "rec-1", "rec-4", "rec-5", "rec-6"])


def test_reset(pair):
    ours, lance = both(pair, lambda s: (s.reset("/user/alice"), s.count(), s.reset(), s.count()))
    assert ours == lance == (None, 5, None, 0)


def test_async_twins(pair):
    ours = pair[0]
    vector = ours.embedder(["lentil soup"])[0]
    assert [r.id for r, _ in asyncio.run(ours.asearch(vector, limit=1))] == ["rec-0"]
    assert asyncio.run(ours.adelete(record_ids=["rec-0"])) == 1
    asyncio.run(ours.asave([_record(ours, 0, ROWS[0])]))
    assert ours.get_record("rec-0").content == ROWS[0][0]


# -- agentbase specifics ----------------------------------------------------------------------------------------

def test_a_vector_from_another_embedder_is_refused_with_a_way_out(pair):
    with pytest.raises(ValueError, match="embedder=storage.embedder"):
        pair[0].search([0.1] * 64)


def test_words_win_where_the_vector_alone_misses(db, tmp_path):
    """A rare exact term ranks its record first in the kernel; LanceDB's vector ranking is what it is."""
    ours = AgentBaseStorage(db, user_id="alice")
    records = [_record(ours, i, ("Note about gardening and tomatoes", "/notes", [], {}, 0.5, i, None, False))
               for i in range(8)]
    records.append(_record(ours, 8, ("Invoice INV-20417 is overdue", "/notes", [], {}, 0.5, 9, None, False)))
    ours.save(records)
    assert [r.id for r, _ in ours.search(ours.embedder(["INV-20417"])[0], limit=1)] == ["rec-8"]


def test_records_are_memories_of_the_storages_scope(db):
    ours = AgentBaseStorage(db, user_id="alice")
    ours.save([_record(ours, 0, ROWS[0])])
    [entry] = db.sync.list(user_id="alice")
    assert (entry.id, entry.source, entry.metadata["crewai_scope"]) == ("rec-0", "crewai", "/user/alice")
    assert "diet" in entry.tags  # the categories are tags too (beside the kernel's entity tags)
    assert db.sync.find("what does alice eat", user_id="alice")[0].id == "rec-0"
    assert AgentBaseStorage(db, user_id="bob").count() == 0


def test_bad_input_raises_what_lancedb_raises_and_never_trips_the_breaker(pair):
    ours, lance = pair
    vector = ours.embedder(["anything"])[0]
    bad = MemoryRecord(id="bad", content="m", metadata={"when": {1, 2}}, embedding=vector)
    for storage in (ours, lance):
        with pytest.raises(TypeError, match="JSON serializable"):
            storage.save([bad])
    with pytest.raises(TypeError, match="JSON serializable"):
        ours.update(bad)
    assert ours.get_record("bad") is None
    with pytest.raises(TypeError, match="older_than must be a datetime"):
        ours.delete(older_than="yesterday")
    with pytest.raises(AttributeError):  # LanceDB's own, raw
        lance.delete(older_than="yesterday")
    with pytest.raises(ValueError, match="list of floats"):
        ours.search("what does alice eat")
    with pytest.raises(InvalidArgument):  # no text to store: ours (LanceDB stores an empty record)
        ours.save([MemoryRecord(content="", embedding=vector)])
    assert ours.count() == len(ROWS) and ours.guard.stats.failed == 0
