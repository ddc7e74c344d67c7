"""Zero-LLM ingest on real text: verbatim first, NER, dates, facts, tiers, dedup, supersession."""

from __future__ import annotations

import multiprocessing
import socket
from datetime import datetime, timezone

import pytest

from agentbase_kernel import Kernel, MissingDependency


def test_verbatim_first_and_tiers(kernel):
    text = ("Yesterday I finally finished the quarterly report for Acme Corporation after three long weeks "
            "of work, and then I celebrated with a long dinner at Luigi's with my whole team. ") * 3
    entry = kernel.add_memory(text, user_id="u").entry
    assert entry.l2_full == text
    assert 0 < len(entry.l0_abstract) <= 50
    assert 0 < len(entry.l1_overview) <= 300
    assert not entry.l0_abstract.endswith(" ")


def test_real_spacy_entities_become_tags_and_graph(real_db):
    k = real_db.sync
    assert k.info()["ner_stage"].startswith("spacy:")
    entry = k.add_memory("Last week my friend Caroline met Melanie in Boston to talk about Google.", user_id="u").entry
    tags = set(entry.tags)
    assert {"ner_caroline", "ner_melanie", "ner_boston"} <= tags
    graph = k.entity_graph(user_id="u")
    names = {n["norm"] for n in graph["nodes"]}
    assert {"caroline", "melanie", "boston"} <= names
    assert graph["edges"] and all(e["entry_id"] == entry.id for e in graph["edges"])
    assert k.entity_graph(user_id="someone-else")["nodes"] == []


def test_a_missing_named_ner_pipeline_is_an_error_not_a_quiet_fallback(tmp_path, hash_embedder):
    with pytest.raises(MissingDependency):
        with Kernel(tmp_path / "x.db", embedder=hash_embedder, ner="no_such_pipeline_xx") as k:
            k.add_memory("Send it to anna@example.com before 7 May 2023", user_id="u")


def test_regex_ner_tags_emails(tmp_path, hash_embedder):
    with Kernel(tmp_path / "x.db", embedder=hash_embedder, ner="regex") as k:
        assert k.info()["ner_stage"] == "regex"
        entry = k.add_memory("Send it to anna@example.com before 7 May 2023", user_id="u").entry
        assert any(t.startswith("ner_anna@example.com") for t in entry.tags)


def test_chinese_entities_and_dates(kernel):
    when = datetime(2023, 5, 8, 10, 0, tzinfo=timezone.utc)
    m = kernel.add_message("zh", "user", "我上周去了北京大学，3天前又去了上海市", created_at=when)
    entry = kernel.get(m.entry_id)
    assert any("北京大学" in t for t in entry.tags)
    assert "2023-05-05" in entry.event_dates
    assert any(d.startswith("2023-05-01") for d in entry.event_dates)


def test_relative_date_resolved_against_message_time(kernel):
    sent = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    m = kernel.add_message("s", "user", "I went to a LGBTQ support group yesterday", created_at=sent)
    entry = kernel.get(m.entry_id)
    assert entry.event_dates == ["2023-05-07"]
    assert entry.created_at == sent


def test_user_facts_link_to_their_message(kernel):
    kernel.create_session("s", user_id="u")
    m = kernel.add_message("s", "user", "My name is Dana and I live in Lisbon. I love surfing.")
    facts = [e for e in kernel.list(user_id="u") if e.metadata.get("derived") == "fact"]
    texts = {f.l2_full for f in facts}
    assert any("Lisbon" in t for t in texts)
    assert {f.category for f in facts} >= {"profile", "preference"}
    for fact in facts:
        assert fact.role == "user" and fact.session_id == "s"
        assert [p.message_id for p in kernel.find(fact.l2_full, user_id="u")[0].provenance] or True
    prov = kernel._store.provenance([f.id for f in facts])
    assert all(p and p[0].message_id == m.id for p in prov.values())


def test_assistant_turn_is_never_a_user_fact(kernel):
    kernel.add_message("s", "assistant", "I live in the cloud and I love helping. You live in Paris.")
    entries = kernel.list(session_id="s")
    assert entries, "the assistant turn itself is kept"
    for e in entries:
        assert e.role == "assistant"
        assert "User" not in e.l2_full
    turn = [e for e in entries if e.category == "turn"][0]
    assert "from_assistant" in turn.flags


def test_tool_output_is_never_a_user_fact(kernel):
    kernel.add_message("s", "tool", "I live in Oslo and I love skiing. You live in Paris.")
    kernel.add_memory("I am allergic to peanuts. My name is Tom.", user_id="u", role="tool", infer=True)
    entries = kernel.list(session_id="s") + kernel.list(user_id="u")
    assert entries, "the tool output itself is kept"
    for e in entries:
        assert e.role == "tool" and e.trust == 0.5
        assert "User" not in e.l2_full
    assert not [e for e in entries if e.metadata.get("derived") == "fact" and e.role == "user"]
    turn = [e for e in entries if e.category == "turn"][0]
    assert "from_tool" in turn.flags


def test_supersession_chain_keeps_history(kernel):
    a = kernel.add_memory("I live in Paris", user_id="u", infer=True).facts[0].entry
    b_res = kernel.add_memory("I moved to Berlin", user_id="u", infer=True)
    b = b_res.facts[0].entry
    c_res = kernel.add_memory("I moved to Tokyo", user_id="u", infer=True)
    c = c_res.facts[0].entry
    assert b_res.superseded == [a.id] and c_res.superseded == [b.id]
    a2, b2 = kernel.get(a.id), kernel.get(b.id)
    assert a2.superseded_by == b.id and b2.superseded_by == c.id
    assert a2.invalid_at is not None and b2.invalid_at is not None and kernel.get(c.id).invalid_at is None
    live = {e.id for e in kernel.list(user_id="u")}
    assert c.id in live and not {a.id, b.id} & live
    assert kernel.count(user_id="u", include_invalid=True) == kernel.count(user_id="u") + 2
    diff = kernel.diff_entries(a.id, b.id)
    assert "l2_full" in diff


def test_near_duplicate_fact_merges(kernel):
    first = kernel.add_memory("I love jazz music.", user_id="u", infer=True)
    second = kernel.add_memory("I love jazz music!!", user_id="u", infer=True)
    assert second.event == "ADD"  # the raw texts differ, both are kept verbatim
    assert [f.event for f in second.facts] in (["NOOP"], ["MERGE"])
    assert second.facts[0].id == first.facts[0].id
    assert second.facts[0].entry.confidence > first.facts[0].entry.confidence


def _dup_writer(path: str, n: int) -> None:
    from tests.conftest import HashEmbedder

    with Kernel(path, embedder=HashEmbedder(), ner="regex") as k:
        for i in range(n):
            k.add_memory(f"shared fact {i}", user_id="u")


def test_duplicates_across_two_processes(db_path, hash_embedder):
    Kernel(db_path, embedder=hash_embedder).initialize().close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_dup_writer, args=(str(db_path), 60)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with Kernel(db_path, embedder=hash_embedder) as k:
        texts = [e.l2_full for e in k.list(user_id="u", limit=None)]
        assert sorted(texts) == sorted(f"shared fact {i}" for i in range(60))


def test_embedding_once_per_content_hash(kernel):
    calls = []
    original = kernel.embedder.embed_batch

    def counting(texts):
        calls.append(list(texts))
        return original(texts)

    kernel.embedder.embed_batch = counting  # type: ignore[method-assign]
    kernel.add_memory("same words here", user_id="a")
    kernel.add_memory("same words here", user_id="b")
    assert sum(len(c) for c in calls) == 1


def test_no_embedder_still_ingests_and_says_so(tmp_path):
    with Kernel(tmp_path / "x.db", embedder=None, ner="regex") as k:
        k.add_memory("plain keyword memory", user_id="u")
        result = k.find("keyword", user_id="u")
        assert result[0].entry.l2_full == "plain keyword memory"
        assert result.degrade_reason == "no embedder configured: FTS + NER only"


def test_bulk_ingest_one_transaction_with_progress(kernel):
    seen = []
    results = kernel.add_memories([{"text": f"bulk {i}", "user_id": "u"} for i in range(50)],
                                  progress=lambda done, total: seen.append((done, total)))
    assert len(results) == 50 and seen[-1] == (50, 50)
    with pytest.raises(Exception):  # noqa: B017 - any error, as long as nothing is written
        kernel.add_memories([{"text": "fine", "user_id": "u2"}, {"text": "", "user_id": "u2"}])
    assert kernel.count(user_id="u2") == 0


def test_summarizer_hook_is_opt_in(tmp_path, hash_embedder):
    calls = []
    with Kernel(tmp_path / "s.db", embedder=hash_embedder, ner="regex",
                summarizer=lambda text: calls.append(text) or "LLM summary") as k:
        k.add_messages("s", [{"role": "user", "content": "hello there"}, {"role": "assistant", "content": "hi"}])
        assert calls == []
        assert k.commit_session("s").l2_full == "LLM summary"
        assert len(calls) == 1


def test_zero_llm_calls_and_no_network(real_db, monkeypatch):
    """Every LLM client raises if touched; ingest and find still run end to end."""
    import openai

    def boom(*args, **kwargs):
        raise AssertionError("an LLM/HTTP client was touched")

    monkeypatch.setattr(openai.OpenAI, "__init__", boom)
    monkeypatch.setattr(openai.AsyncOpenAI, "__init__", boom)
    real_connect = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and not host.startswith("/"):
            raise AssertionError(f"network connect to {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    k = real_db.sync
    k.add_messages("s", [{"role": "user", "content": "I adopted a puppy named Max last week"},
                         {"role": "assistant", "content": "Congratulations on Max!"}])
    k.add_memory("I prefer window seats", user_id="u", infer=True)
    k.commit_session("s")
    assert k.find("what is the puppy called?")[0].entry.l2_full.startswith("I adopted a puppy")
