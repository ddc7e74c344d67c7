"""audit_replay: the audit log, replayed in sequence into an empty database, reproduces the governed
state - entries, proposals, confidence, policies, zones - on SQLite and on PostgreSQL."""

from __future__ import annotations

import dataclasses

import pytest

from agentbase_kernel import Config, IncompleteAuditLog, InvalidArgument, Kernel, Scope

_DERIVED = {"access_count", "last_accessed_at", "conflicts"}


@pytest.fixture(params=["sqlite", "postgres"])
def pair(request, tmp_path, hash_embedder):
    if request.param == "sqlite":
        locations = [tmp_path / "source.db", tmp_path / "target.db"]
    else:
        server = request.getfixturevalue("postgres_server")
        locations = [server.create_database(), server.create_database()]
    source, target = (Kernel(at, embedder=hash_embedder, ner="regex").initialize() for at in locations)
    yield source, target
    source.close()
    target.close()
    if request.param == "postgres":
        for url in locations:
            server.drop_database(str(url).rsplit("/", 1)[1])


def governed_state(k: Kernel) -> dict:
    store = k._ready()
    entries = k.list(include_invalid=True, include_expired=True, archived=None, limit=None)
    return {
        "entries": sorted(({f.name: getattr(e, f.name) for f in dataclasses.fields(e) if f.name not in _DERIVED}
                           for e in entries), key=lambda e: e["id"]),
        "confidence": store.confidence_counts([e.id for e in entries]),
        "proposals": [dataclasses.asdict(p) for p in k.list_proposals(status=None)],
        "outcomes": [dataclasses.asdict(o) for o in k.list_outcomes(limit=None)],
        "policies": sorted((p.agent, p.scope, p.read, p.write) for p in k.policies()),
        "zones": [(z.id, z.scope, z.key_prefix, z.category) for z in k.zones()],
    }


def populate(k: Kernel) -> None:
    a = k.add_memory("Alice drinks green tea", user_id="alice", session_id="s1", category="habit").entry
    b = k.add_memory("Alice lives in Oslo", user_id="alice", infer=True).entry
    k.add_memory("Alice moved to Bergen", user_id="alice", infer=True)  # a newer fact supersedes the older
    c = k.add_memory("Temporary note", user_id="alice", tags=["tmp"], metadata={"n": 1}).entry
    k.update(a.id, text="Alice drinks green tea at noon", metadata={"k": "v"})
    k.delete(c.id)
    k.archive(b.id)
    k.find("green tea", user_id="alice", session_id="s1")
    first = k.record_outcome("s1", "failure", user_id="alice")
    k.record_outcome("s1", "success", entry_ids=[a.id])
    k.revert_outcome(first.id)
    k.grant("bot", user_id="alice", read=True, write=True)
    k.grant("spy", user_id="bob", read=True)
    k.revoke("spy", user_id="bob")
    k.protect(project_id="handbook")
    bot = k.view(agent="bot")
    kept = bot.add_memory("Deploys run on Fridays", project_id="handbook").proposal_id
    dropped = bot.add_memory("Deploys never run", project_id="handbook").proposal_id
    k.approve(kept, reviewer="dana")
    k.reject(dropped, reason="wrong", reviewer="dana")
    k.propose("Bob likes jazz", user_id="bob")  # still pending


def test_replay_into_an_empty_database_equals_the_original(pair):
    source, target = pair
    populate(source)
    summary = source.audit_replay(target)
    assert summary["applied"] > 0 and summary["by_kind"]["proposal"] == 5
    assert governed_state(target) == governed_state(source)
    # what replay rebuilt is searchable there
    assert target.find("green tea noon", user_id="alice").hits
    # replaying more from where it stopped carries only the new rows
    source.add_memory("Alice likes hiking", user_id="alice")
    more = source.audit_replay(target, from_sequence=summary["last_sequence"])
    assert more["by_kind"] == {"write": 1}
    assert governed_state(target) == governed_state(source)


def test_replay_refuses_a_target_that_is_not_empty_and_bad_sequences(pair):
    source, target = pair
    source.add_memory("x", user_id="u")
    target.add_memory("y", user_id="u")
    with pytest.raises(InvalidArgument, match="empty target"):
        source.audit_replay(target)
    with pytest.raises(InvalidArgument, match="from_sequence"):
        source.audit_replay(target, from_sequence=-1)
    with pytest.raises(InvalidArgument, match="another database"):
        source.audit_replay(source)


def test_a_pruned_or_switched_off_log_cannot_be_replayed(tmp_path, hash_embedder):
    small = Config().with_(lifecycle={"audit_max_rows": 3})
    with Kernel(tmp_path / "s.db", embedder=hash_embedder, ner="regex", config=small) as k:
        for n in range(5):
            k.add_memory(f"note {n}", user_id="u")
        with pytest.raises(IncompleteAuditLog, match="pruned"):
            k.audit_replay(tmp_path / "t.db")
    off = Config().with_(lifecycle={"audit": False})
    with Kernel(tmp_path / "o.db", embedder=hash_embedder, ner="regex", config=off) as k:
        k.add_memory("unaudited", user_id="u")
    with Kernel(tmp_path / "o.db", embedder=hash_embedder, ner="regex") as k:
        with pytest.raises(IncompleteAuditLog, match="switched off"):
            k.audit_replay(tmp_path / "t2.db")


def test_replay_to_a_path_opens_and_closes_it(tmp_path, hash_embedder):
    with Kernel(tmp_path / "s.db", embedder=hash_embedder, ner="regex") as k:
        k.add_memory("a memory", user_id="u")
        k.audit_replay(tmp_path / "copy.db")
        want = governed_state(k)
    with Kernel(tmp_path / "copy.db", embedder=hash_embedder, ner="regex") as copy:
        assert governed_state(copy) == want
        assert copy.list(user_id="u")[0].scope == Scope(user_id="u")


def test_replay_keeps_texts_a_backend_escapes(pair):
    source, target = pair
    odd = "nul \x00 and \ufffe0 and \ufffe\ufffe kept"
    e = source.add_memory(odd, user_id="u", metadata={"k": "v\x00w"}).entry
    source.audit_replay(target)
    got = target.get(e.id)
    assert (got.l2_full, got.metadata) == (odd, {"k": "v\x00w"})
