"""Per-turn prefetch: profile + relevant + recent, deduplicated, within a budget."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agentbase_kernel.errors import InvalidArgument
from agentbase_kernel.lifecycle import Prefetch

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

MEMORIES = [
    "We repainted the kitchen walls a pale yellow last spring",
    "My sister Ana is getting married in Porto in June",
    "The car needs new tyres before the winter",
    "I started learning the cello in January",
    "My laptop battery dies after two hours",
    "Our neighbours have a loud parrot called Kiwi",
    "I booked a dentist appointment for the 14th",
    "The quarterly report is due next Friday",
]


def _seed(kernel) -> dict[str, str]:
    ids = {}
    for i, text in enumerate(MEMORIES):
        ids[text] = kernel.add_memory(text, user_id="alice", created_at=T0 + timedelta(days=i)).id
    ids["pref"] = kernel.add_memory("Alice prefers vegetarian food", user_id="alice", category="preference",
                                    created_at=T0).id
    ids["fact"] = kernel.add_memory("Alice works as a nurse in Lisbon", user_id="alice", category="fact",
                                    created_at=T0).id
    kernel.add_memory("Bob hates cello music", user_id="bob", category="preference")
    return ids


def test_sections_with_the_real_model(real_db):
    k = real_db.sync
    ids = _seed(k)
    extracted = k.add_memory("I live in Coimbra", user_id="alice", infer=True,
                             created_at=T0 + timedelta(days=20))
    p = k.prefetch("Any tips for my wedding speech for my sibling?", user_id="alice", token_budget=400)
    assert isinstance(p, Prefetch)
    profile = {e.l2_full for e in p.profile}
    assert {"Alice prefers vegetarian food", "Alice works as a nurse in Lisbon"} <= profile
    assert extracted.facts and any(f.entry.l2_full in profile for f in extracted.facts)  # a fact ingest extracted from her words
    # a paraphrase, no shared keyword: only the embedding finds it, and it must rank first
    assert p.relevant and p.relevant[0].entry.id == ids["My sister Ana is getting married in Porto in June"]
    # the newest memory of the scope is in the prompt: first among the recent ones, unless relevance put it higher
    assert extracted.id in {h.entry.id for h in p.relevant} | {p.recent[0].id}
    assert [e.created_at for e in p.recent] == sorted((e.created_at for e in p.recent), reverse=True)
    chosen = [e.id for e in p.entries]
    assert len(chosen) == len(set(chosen))  # nothing twice across sections
    assert all(e.user_id == "alice" for e in p.entries)
    text = p.text()
    assert text.startswith("## What you know about the user\n- ")
    assert "## Memories relevant to this message" in text and "Porto" in text and "Bob" not in text
    assert p.tokens <= 400


def test_superseded_facts_are_not_profile(real_db):
    k = real_db.sync
    first = k.add_memory("I live in Paris", user_id="u", infer=True)
    k.add_memory("I moved to Berlin", user_id="u", infer=True)
    profile = [e.l2_full for e in k.prefetch("hello", user_id="u").profile]
    assert any("Berlin" in t for t in profile)
    assert first.facts[0].entry.l2_full not in profile


def test_budget_is_kept_and_shared(kernel):
    _seed(kernel)
    for budget in (20, 60, 150, 2000):
        p = kernel.prefetch("cello lessons", user_id="alice", token_budget=budget, relevant_k=3)
        assert p.tokens <= budget
        if budget >= 150:
            assert p.profile and p.relevant and p.recent
    big = kernel.prefetch("cello lessons", user_id="alice", token_budget=2000)
    # a large budget holds everything found once: profile + hits + recent, no duplicates
    assert len(big.entries) == len({e.id for e in big.entries})
    assert len(big.entries) == len(MEMORIES) + 2
    small = kernel.prefetch("cello lessons", user_id="alice", token_budget=20)
    assert len(small.entries) < len(big.entries)


def test_dedup_across_sections_by_id_and_text(kernel):
    kernel.add_memory("I like cello music", user_id="u", category="preference")
    kernel.add_memory("I like cello music", user_id="u", dedup=False)  # same text, another entry
    p = kernel.prefetch("cello", user_id="u", token_budget=500)
    assert [e.l2_full for e in p.entries] == ["I like cello music"]
    assert len(p.profile) == 1 and not p.relevant and not p.recent


def test_empty_scope_and_empty_message(kernel):
    p = kernel.prefetch("anything", user_id="nobody")
    assert not p and p.text() == "" and p.tokens == 0
    kernel.add_memory("The car needs new tyres", user_id="u")
    p = kernel.prefetch("   ", user_id="u")
    assert not p.relevant and [e.l2_full for e in p.recent] == ["The car needs new tyres"]


def test_session_scope_reads_profile_across_sessions(kernel):
    kernel.add_memory("Alice prefers tea", user_id="alice", category="preference", session_id="s1")
    kernel.add_memory("We talked about trains", user_id="alice", session_id="s2")
    p = kernel.prefetch("trains", user_id="alice", session_id="s2")
    assert [e.l2_full for e in p.profile] == ["Alice prefers tea"]
    assert all(e.session_id == "s2" for e in [*(h.entry for h in p.relevant), *p.recent])


def test_prefetch_reinforces_what_find_returned(kernel):
    e = kernel.add_memory("The car needs new tyres", user_id="u")
    kernel.prefetch("car tyres", user_id="u")
    kernel.prefetch("car tyres", user_id="u", reinforce=False)
    kernel.flush_lifecycle()
    assert kernel.get(e.id).access_count == 1


def test_bad_arguments(kernel):
    for kwargs in ({"token_budget": 0}, {"token_budget": "10"}, {"relevant_k": 0}, {"recent_k": -1}):
        with pytest.raises(InvalidArgument):
            kernel.prefetch("x", user_id="u", **kwargs)
    with pytest.raises(InvalidArgument):
        kernel.prefetch(None, user_id="u")


async def test_async_twin(db):
    await db.add_memory("Alice prefers tea", user_id="alice", category="preference")
    p = await db.prefetch("drinks", user_id="alice")
    assert "Alice prefers tea" in p.text()
