"""Consolidation: older low-importance memories folded into one linked summary,
sources archived, idempotent; a caller's summariser; the background schedule; the CLI command."""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from agentbase_cli.app import cli
from agentbase_kernel import AgentBase, Kernel
from agentbase_kernel.config import Config
from agentbase_kernel.errors import InvalidArgument, ScopeError
from agentbase_kernel.lifecycle.consolidate import rule_summary

OLD = datetime(2025, 3, 1, tzinfo=UTC)
NOTES = [
    "Went hiking with Priya near Sintra on Saturday.",
    "Went hiking with Priya near Sintra on Saturday.  Great views.",
    "Booked a dentist appointment for the 14th. The clinic is in Alvalade.",
    "Tried the new ramen place on Rua Augusta, too salty.",
    "Paid the electricity bill.",
]


def _fill(k, user="u"):
    ids = [k.add_memory(text, user_id=user, created_at=OLD + timedelta(days=i), importance=0.3).id
           for i, text in enumerate(NOTES)]
    keep = k.add_memory("I am allergic to penicillin", user_id=user, created_at=OLD, importance=0.95).id
    fresh = k.add_memory("Meeting Tom tomorrow at 10", user_id=user, importance=0.3).id
    return ids, keep, fresh


def _consolidated_from(location, summary_id: str) -> list[str]:
    """The ``consolidates`` links of a summary, read outside the kernel (psycopg on a PostgreSQL URL)."""
    if isinstance(location, str) and "://" in location:  # AGENTBASE_TEST_BACKEND=postgres
        import psycopg

        with psycopg.connect(location) as pg:
            rows = pg.execute("SELECT dst FROM entry_links WHERE src = %s AND relation = 'consolidates'",
                              (summary_id,)).fetchall()
        return [r[0] for r in rows]
    with sqlite3.connect(location) as conn:
        rows = conn.execute("SELECT dst FROM entry_links WHERE src = ? AND relation = 'consolidates'",
                            (summary_id,)).fetchall()
    return [r[0] for r in rows]


def test_consolidate_folds_old_low_importance_memories_and_is_idempotent(kernel):
    ids, keep, fresh = _fill(kernel)
    kernel.add_memory("someone else's old note", user_id="v", created_at=OLD, importance=0.1)
    result = kernel.consolidate(user_id="u", older_than=timedelta(days=30), max_importance=0.5, actor="nightly")
    assert result and sorted(result.sources) == sorted(ids)
    summary = result.summary
    assert summary.category == "consolidation" and summary.role == "system" and summary.user_id == "u"
    assert summary.metadata["consolidated"] == len(ids)
    text = summary.l2_full
    assert text.startswith("Summary of 5 earlier memories (2025-03-01 to 2025-03-05):")
    assert "[2025-03-01] Went hiking with Priya near Sintra on Saturday." in text
    assert text.count("hiking") == 1  # the near-repeat of the first note is left out
    assert "Alvalade" in text and "ramen" in text and "penicillin" not in text and "Tom" not in text
    # sources: archived, not deleted, linked from the summary
    live = {e.id for e in kernel.list(user_id="u")}
    assert live == {keep, fresh, summary.id}
    assert {e.id for e in kernel.list(user_id="u", archived=True)} == set(ids)
    assert all(kernel.history(i)[-1].event == "ARCHIVE" and kernel.history(i)[-1].actor == "nightly" for i in ids)
    assert kernel.history(ids[0])[-1].new_value == f"consolidated into {summary.id}"
    assert sorted(_consolidated_from(kernel.path, summary.id)) == sorted(ids)
    archive_rows = kernel.audit(user_id="u", kinds="archive")
    assert sorted(i for e in archive_rows for i in e.entry_ids) == sorted(ids)
    assert {e.detail["reason"] for e in archive_rows} == {f"consolidated into {summary.id}"}
    assert kernel.count(user_id="v") == 1  # another scope is untouched
    # the summary is searchable; the sources are not
    hits = [h.id for h in kernel.find("dentist Alvalade", user_id="u")]
    assert summary.id in hits and ids[2] not in hits
    # idempotent
    again = kernel.consolidate(user_id="u", older_than=timedelta(days=30), max_importance=0.5)
    assert not again and again.summary is None and again.sources == []
    assert kernel.count(user_id="u", category="consolidation") == 1
    # a restored source is back in search; a later run may fold it again, with the summary left alone
    kernel.restore(ids[4], user_id="u")
    assert kernel.get(ids[4]).archived_at is None


def test_too_few_sources_makes_no_summary(kernel):
    kernel.add_memory("one old note", user_id="u", created_at=OLD, importance=0.1)
    kernel.add_memory("another old note", user_id="u", created_at=OLD, importance=0.1)
    assert kernel.consolidate(user_id="u", older_than=1, min_items=3).summary is None
    assert kernel.count(user_id="u") == 2
    assert kernel.consolidate(user_id="u", older_than=1, min_items=2).summary is not None
    assert kernel.count(user_id="u") == 1


def test_cutoff_as_datetime_and_default_settings(kernel):
    ids, _, _ = _fill(kernel)
    assert kernel.consolidate(user_id="u", older_than=OLD + timedelta(days=2), min_items=2).sources == ids[:2]
    assert kernel.consolidate(user_id="u").sources == ids[2:]  # 30 days, importance <= 0.6 by default


def test_caller_summariser_gets_the_dated_lines(kernel):
    ids, _, _ = _fill(kernel)
    seen = []

    def summarise(text: str) -> str:
        seen.append(text)
        return "Errands and outings in early March 2025."

    result = kernel.consolidate(user_id="u", older_than=30, max_importance=0.5, summarizer=summarise)
    assert result.summary.l2_full == "Errands and outings in early March 2025."
    assert seen[0].splitlines()[0] == "[2025-03-01] Went hiking with Priya near Sintra on Saturday."
    with pytest.raises(InvalidArgument):
        kernel.consolidate(user_id="u", summarizer=lambda text: None, older_than=0, max_importance=1.0, min_items=2)


def test_bad_arguments(kernel):
    with pytest.raises(ScopeError):
        kernel.consolidate()
    for bad in ({"older_than": -1}, {"older_than": "old"}, {"max_importance": 2.0}, {"min_items": -1},
                {"summarizer": "not callable"}):
        with pytest.raises(InvalidArgument):
            kernel.consolidate(user_id="u", **bad)


def test_rule_summary_uses_entity_and_keyword_coverage(kernel):
    entries = [kernel.add_memory(t, user_id="w", created_at=OLD).entry for t in NOTES]
    text = rule_summary(entries, None, max_chars=120)
    assert text.splitlines()[0].startswith("Summary of 5 earlier memories")
    assert 1 <= len(text.splitlines()) - 1 < len(NOTES)  # the budget keeps only the most covering lines


def test_scheduled_consolidation_runs_in_the_background_after_n_writes(db_path, hash_embedder):
    cfg = Config().with_(lifecycle={"consolidate_every_writes": 3, "consolidate_older_than_days": 30.0,
                                    "consolidate_max_importance": 0.5})
    with Kernel(db_path, embedder=hash_embedder, ner="regex", config=cfg) as k:
        for i, text in enumerate(NOTES[:2]):
            k.add_memory(text, user_id="u", created_at=OLD + timedelta(days=i), importance=0.2)
        assert k.wait_consolidated(10)
        assert k.count(user_id="u", category="consolidation") == 0  # 2 writes: not yet
        k.add_memory(NOTES[2], user_id="u", created_at=OLD + timedelta(days=2), importance=0.2)
        assert k.wait_consolidated(30)
        summaries = k.list(user_id="u", category="consolidation")
        assert len(summaries) == 1 and summaries[0].actor == "agentbase:schedule"
        assert k.count(user_id="u", archived=True) == 3
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:  # off by default
        for text in ("a", "b", "c", "d"):
            k.add_memory(f"old {text}", user_id="x", created_at=OLD, importance=0.1)
        assert k.wait_consolidated(5)
        assert k.count(user_id="x", category="consolidation") == 0


async def test_async_twin(db_path, hash_embedder):
    async with AgentBase(db_path, embedder=hash_embedder, ner="regex") as db:
        for i, text in enumerate(NOTES):
            await db.add_memory(text, user_id="u", created_at=OLD + timedelta(days=i), importance=0.3)
        result = await db.consolidate(user_id="u", older_than=30)
        assert len(result.sources) == 5
        assert await db.wait_consolidated(1)


def test_cli_consolidate(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTBASE_PATH", raising=False)
    monkeypatch.setenv("AGENTBASE_EMBEDDER", "none")
    monkeypatch.setenv("AGENTBASE_NER", "regex")
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(cli, list(args), prog_name="agentbase")

    assert run("init").exit_code == 0
    with Kernel(tmp_path / "agentbase.db", embedder=None, ner="regex") as k:
        for i, text in enumerate(NOTES):
            k.add_memory(text, user_id="u", created_at=OLD + timedelta(days=i), importance=0.3)
    usage = run("consolidate")
    assert usage.exit_code == 2 and "--user-id" in usage.output
    done = run("consolidate", "--user-id", "u", "--older-than", "30", "--actor", "cron", "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert len(report["sources"]) == 5 and report["summary"]["category"] == "consolidation"
    again = run("consolidate", "--user-id", "u", "--older-than", "30")
    assert again.exit_code == 0 and again.stdout.startswith("Nothing to consolidate")
    with Kernel(tmp_path / "agentbase.db", embedder=None, ner="regex") as k:
        assert k.count(user_id="u", archived=True) == 5
        assert k.audit(user_id="u", kinds="archive")[0].actor == "cron"


def test_concurrent_runs_make_one_summary(db_path, hash_embedder):
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as k:
        ids, _, _ = _fill(k)
        results = []
        barrier = threading.Barrier(3)

        def run() -> None:
            barrier.wait()
            results.append(k.consolidate(user_id="u", older_than=30, max_importance=0.5))

        threads = [threading.Thread(target=run) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        made = [r for r in results if r]
        assert len(results) == 3 and len(made) == 1
        assert sorted(made[0].sources) == sorted(ids)
        assert k.count(user_id="u", category="consolidation") == 1


async def test_real_models_summary_keeps_the_named_facts(real_db):
    """With the real spaCy NER and MiniLM: every place and person of the sources is in the summary,
    the repeated outing once, and the summary is what a search for them finds."""
    for i, text in enumerate(NOTES):
        await real_db.add_memory(text, user_id="u", created_at=OLD + timedelta(days=i), importance=0.3)
    result = await real_db.consolidate(user_id="u", older_than=30)
    text = result.summary.l2_full
    for name in ("Priya", "Sintra", "Alvalade", "Rua Augusta"):
        assert name in text
    assert text.count("Sintra") == 1
    hits = await real_db.find("When is the dentist appointment?", user_id="u")
    assert hits[0].id == result.summary.id


def test_scheduled_consolidation_on_idle(db_path, hash_embedder):
    cfg = Config().with_(lifecycle={"consolidate_idle_seconds": 0.2, "consolidate_max_importance": 0.5})
    with Kernel(db_path, embedder=hash_embedder, ner="regex", config=cfg) as k:
        for i, text in enumerate(NOTES):
            k.add_memory(text, user_id="u", created_at=OLD + timedelta(days=i), importance=0.2)
        k.add_memory("old note of another user", user_id="v", created_at=OLD, importance=0.2)
        assert k.wait_consolidated(30)
        summaries = k.list(user_id="u", category="consolidation")
        assert len(summaries) == 1 and summaries[0].actor == "agentbase:schedule"
        assert k.count(user_id="u", archived=True) == len(NOTES)
        assert k.count(user_id="v", archived=True) == 0  # one memory: too few to fold
    with pytest.raises(InvalidArgument):
        Config().with_(lifecycle={"consolidate_idle_seconds": -1.0})
