"""CrewAI's own ``Memory`` and ``Crew`` on agentbase, driven offline by a scripted CrewAI LLM.

The same user code runs with ``Memory(storage=LanceDBStorage(...))`` (CrewAI's default storage) and with
``Memory(storage=AgentBaseStorage(...))``, both on ``storage.embedder``; what it returns must match. A crew
remembers across kickoffs on both. Then the store dies mid-run: CrewAI treats memory as optional in a crew,
and the circuit breaker stops asking.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.adapters.crewai._need import need_crewai

need_crewai()

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.memory.storage.lancedb_storage import LanceDBStorage  # noqa: E402
from crewai.memory.unified_memory import Memory  # noqa: E402

from agentbase_adapters._failopen import FailOpen  # noqa: E402
from agentbase_adapters.crewai import AgentBaseStorage  # noqa: E402
from agentbase_kernel import AgentBase  # noqa: E402
from tests.adapters.crewai._fake_llm import ScriptedLLM  # noqa: E402

FACTS = [
    ("Alice is vegetarian", "/user/alice", ["diet"], 0.9),
    ("Alice prefers window seats", "/user/alice/travel", ["travel"], 0.6),
    ("The alpha deploy runs every Friday", "/project/alpha", ["ops"], 0.7),
    ("Bob manages the alpha budget", "/project/alpha/people", ["people"], 0.5),
]


def _user_code(memory: Memory) -> list[Any]:
    """What an application does with CrewAI's Memory (every field given: no LLM analysis on save)."""
    out: list[Any] = []
    saved = [memory.remember(text, scope=scope, categories=cats, importance=imp, metadata={"src": "test"})
             for text, scope, cats, imp in FACTS]
    out.append([(r.content, r.scope, r.categories, r.importance) for r in saved])
    memory.remember_many(["Carol joins the alpha team in May", "The office is closed on Monday"],
                         scope="/project/alpha", categories=["news"], importance=0.4)
    for query, kwargs in (("what does alice eat", {}), ("alpha deploy", {"scope": "/project"}),
                          ("seats", {"categories": ["travel"]}), ("who is on the alpha team", {"limit": 2})):
        matches = memory.recall(query, depth="shallow", **kwargs)
        out.append(sorted((m.record.content, round(m.score, 4)) for m in matches))
    out.append(sorted(m.record.content for m in memory.recall("alice diet", limit=3)))  # deep recall, short query
    out.append((memory.list_scopes(), memory.list_scopes("/project"), memory.list_categories(), memory.tree()))
    info = memory.info("/project")
    out.append((info.record_count, info.categories, info.child_scopes))
    record = next(m.record for m in memory.recall("window seats", depth="shallow", limit=1))
    updated = memory.update(record.id, content="Alice prefers aisle seats now")
    out.append((updated.content, updated.scope, updated.categories))
    alpha = memory.scope("/project/alpha")
    out.append(sorted(m.record.content for m in alpha.recall("deploy", depth="shallow")))
    out.append(memory.forget(categories=["news"]))
    out.append(sorted(r.content for r in memory.list_records()))
    return out


def test_the_same_memory_code_on_lancedb_and_on_agentbase(db: AgentBase, tmp_path):
    storage = AgentBaseStorage(db, user_id="alice")
    reference = _user_code(Memory(storage=LanceDBStorage(path=tmp_path / "lance"), embedder=storage.embedder,
                                  llm=ScriptedLLM()))
    ours = _user_code(Memory(storage=storage, embedder=storage.embedder, llm=ScriptedLLM()))
    for step, (want, have) in enumerate(zip(reference, ours)):
        assert have == want, step
    assert ("Alice is vegetarian", pytest.approx(reference[1][0][1])) in ours[1]


def _crew(memory: Memory, answer: str, turn: int) -> tuple[str, ScriptedLLM]:
    llm = ScriptedLLM([answer])
    agent = Agent(role="assistant", goal="help Alice", backstory="A helpful assistant.", llm=llm)
    task = Task(description=f"Turn {turn}: which tea should I buy for Alice?", expected_output="a tea", agent=agent)
    result = Crew(agents=[agent], tasks=[task], memory=memory).kickoff()
    memory.drain_writes()
    return result.raw, llm


def _two_kickoffs(memory: Memory) -> list[Any]:
    first, _ = _crew(memory, "Alice's favourite tea is oolong.", 0)
    second, llm = _crew(memory, "Buy oolong.", 1)
    return [first, second, any("Alice's favourite tea is oolong" in prompt for prompt in llm.seen)]


def test_a_crew_remembers_across_kickoffs_on_lancedb_and_on_ours(db: AgentBase, tmp_path):
    storage = AgentBaseStorage(db, user_id="alice")
    reference = _two_kickoffs(Memory(storage=LanceDBStorage(path=tmp_path / "lance"), embedder=storage.embedder,
                                     llm=ScriptedLLM()))
    ours = _two_kickoffs(Memory(storage=storage, embedder=storage.embedder, llm=ScriptedLLM()))
    assert ours == reference == ["Alice's favourite tea is oolong.", "Buy oolong.", True]
    assert "Alice's favourite tea is oolong." in [e.l2_full for e in db.sync.list(user_id="alice")]


def test_a_store_killed_mid_run_never_breaks_a_kickoff(tmp_path, hash_embedder):
    db = AgentBase(tmp_path / "dies.db", embedder=hash_embedder, ner="regex")
    guard = FailOpen(threshold=3, cooldown=3600, name="crewai")
    storage = AgentBaseStorage(db, user_id="alice", guard=guard)
    memory = Memory(storage=storage, embedder=storage.embedder, llm=ScriptedLLM())
    kickoffs, errors, answers = 12, 0, []
    for turn in range(kickoffs):
        if turn == 5:
            db.sync.close()  # the store goes away mid-run
        try:
            answers.append(_crew(memory, f"answer {turn}", turn)[0])
        except Exception:  # counting what reaches the caller of the crew
            errors += 1
    assert errors == 0 and answers == [f"answer {t}" for t in range(kickoffs)]
    # each kickoff recalls then saves; after 3 failures nothing more was sent
    assert guard.stats.failed == 3 and guard.stats.sent_while_open == 0 and guard.stats.refused > 0


def test_a_foreign_embedder_is_refused_clearly_but_a_crew_goes_on(db: AgentBase):
    storage = AgentBaseStorage(db, user_id="alice")
    memory = Memory(storage=storage, embedder=lambda texts: [[0.5] * 8 for _ in texts], llm=ScriptedLLM())
    with pytest.raises(ValueError, match="embedder=storage.embedder"):
        memory.recall("anything", depth="shallow")
    assert _crew(memory, "still answering", 0)[0] == "still answering"


def test_timestamps_are_crewais_naive_utc(db: AgentBase):
    storage = AgentBaseStorage(db, user_id="alice")
    memory = Memory(storage=storage, embedder=storage.embedder, llm=ScriptedLLM())
    before = datetime.utcnow()
    record = memory.remember("Alice planted tomatoes", scope="/garden", categories=[], importance=0.5)
    stored = storage.get_record(record.id)
    assert stored.created_at.tzinfo is None and stored.created_at >= before.replace(microsecond=0)
    assert db.sync.get(record.id).created_at.tzinfo is not None  # the kernel keeps aware UTC
