"""The retrieval steps that did not help live in one section, ``RetrievalConfig.experimental``.

The new spelling works everywhere config is given (keywords, ``with_``, TOML, environment); the old
flat spelling keeps working, folded into the section, with a DeprecationWarning that names the new
one; a bad value raises ``InvalidArgument`` either way.
"""

from __future__ import annotations

import warnings
from dataclasses import fields, replace
from pathlib import Path

import pytest

from agentbase_kernel import InvalidArgument, Kernel
from agentbase_kernel.config import Config, ExperimentalRetrieval, RetrievalConfig


def test_defaults_are_unchanged_and_all_off() -> None:
    x = RetrievalConfig().experimental
    assert x == ExperimentalRetrieval()
    assert not (x.intents or x.ner_mentions or x.decompose or x.rerank or x.ranker)
    assert (x.aggregation_top_k, x.max_subqueries, x.subquery_weight, x.ranker_pool) == (120, 6, 0.5, 150)
    assert not {f.name for f in fields(ExperimentalRetrieval)} & {f.name for f in fields(RetrievalConfig)}


def test_the_new_spelling_warns_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = RetrievalConfig(experimental=ExperimentalRetrieval(intents=True, rerank_relevance=0.5))
        changed = Config().with_(retrieval={"experimental": {"ranker": True}})
        env = Config.load(env={"AGENTBASE_RETRIEVAL__EXPERIMENTAL__DECOMPOSE": "yes",
                               "AGENTBASE_RETRIEVAL__EXPERIMENTAL__MAX_SUBQUERIES": "3"})
    assert cfg.experimental.intents and cfg.experimental.rerank_relevance == 0.5
    assert changed.retrieval.experimental.ranker and not changed.retrieval.experimental.intents
    assert env.retrieval.experimental.decompose and env.retrieval.experimental.max_subqueries == 3


def test_with_keeps_the_sections_other_keys() -> None:
    cfg = Config().with_(retrieval={"experimental": {"intents": True}})
    both = cfg.with_(retrieval={"experimental": {"rerank": True}, "rrf_k": 50})
    assert both.retrieval.experimental.intents and both.retrieval.experimental.rerank
    assert both.retrieval.rrf_k == 50.0
    whole = cfg.with_(retrieval={"experimental": ExperimentalRetrieval(ner_mentions=True)})
    assert whole.retrieval.experimental == ExperimentalRetrieval(ner_mentions=True)


def test_old_keyword_spelling_still_works_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match=r"RetrievalConfig\(experimental=ExperimentalRetrieval\(intents=\.\.\.\)\)"):
        cfg = RetrievalConfig(intents=True)
    assert cfg.experimental == ExperimentalRetrieval(intents=True)
    with pytest.warns(DeprecationWarning, match="ranker"):
        ranked = replace(cfg, ranker=True, ranker_pool=99)  # replace() keeps the section's other keys
    assert ranked.experimental == ExperimentalRetrieval(intents=True, ranker=True, ranker_pool=99)
    with pytest.warns(DeprecationWarning, match=r"RetrievalConfig\.experimental\.ranker"):
        assert ranked.ranker is True
    with pytest.warns(DeprecationWarning, match=r"with_\(retrieval=\{'experimental': \{'rerank': \.\.\.\}\}\)"):
        changed = Config().with_(retrieval={"rerank": "true"})
    assert changed.retrieval.experimental.rerank is True


def test_old_environment_spelling_still_works_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="AGENTBASE_RETRIEVAL__EXPERIMENTAL__INTENTS"):
        cfg = Config.load(env={"AGENTBASE_RETRIEVAL__INTENTS": "true", "AGENTBASE_RETRIEVAL__RRF_K": "61"})
    assert cfg.retrieval.experimental.intents and cfg.retrieval.rrf_k == 61.0


def test_toml_file_both_spellings(tmp_path: Path) -> None:
    file = tmp_path / "agentbase.toml"
    file.write_text("[retrieval]\nrerank = true\nrrf_k = 50\n\n[retrieval.experimental]\nranker_pool = 99\n")
    with pytest.warns(DeprecationWarning, match=r"rerank under \[retrieval\].*\[retrieval\.experimental\]"):
        cfg = Config.load(file=file, env={"AGENTBASE_RETRIEVAL__EXPERIMENTAL__RANKER_POOL": "77"})
    assert cfg.retrieval.experimental.rerank and cfg.retrieval.rrf_k == 50.0
    assert cfg.retrieval.experimental.ranker_pool == 77  # the environment comes after the file


@pytest.mark.parametrize(("env", "message"), [
    ({"AGENTBASE_RETRIEVAL__EXPERIMENTAL__INTENTS": "maybe"}, "'intents' expects bool"),
    ({"AGENTBASE_RETRIEVAL__EXPERIMENTAL__RANKER_POOL": "many"}, "'ranker_pool' expects int"),
    ({"AGENTBASE_RETRIEVAL__EXPERIMENTAL__NOPE": "1"}, "Unknown config key 'nope' in ExperimentalRetrieval"),
    ({"AGENTBASE_RETRIEVAL__EXPERIMENTAL": "1"}, "'experimental' is a section"),
    ({"AGENTBASE_RETRIEVAL__RRF_K__X": "1"}, "'rrf_k' expects float"),
])
def test_a_bad_value_raises_our_config_error(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        Config.load(env=env)


def test_a_bad_old_spelled_value_raises_our_config_error() -> None:
    with pytest.warns(DeprecationWarning), pytest.raises(InvalidArgument, match="'intents' expects bool"):
        Config.load(env={"AGENTBASE_RETRIEVAL__INTENTS": "maybe"})
    with pytest.raises(InvalidArgument, match="must be an ExperimentalRetrieval"):
        RetrievalConfig(experimental={"intents": True})  # type: ignore[arg-type]


def test_the_kernel_reads_the_section(db_path: Path, hash_embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both environment spellings reach ``find``: keyword intents show in the trace only when on."""
    monkeypatch.setenv("AGENTBASE_RETRIEVAL__EXPERIMENTAL__INTENTS", "true")
    with Kernel(db_path, embedder=hash_embedder, ner="regex") as kernel:
        kernel.add_memory("I prefer green tea in the morning", user_id="u")
        assert kernel.config.retrieval.experimental.intents
        assert "preference" in kernel.find("what do I prefer to drink?", user_id="u").trace.intents
        off = replace(kernel.config.retrieval, experimental=ExperimentalRetrieval())
        assert kernel.find("what do I prefer to drink?", user_id="u", config=off).trace.intents == []
    monkeypatch.delenv("AGENTBASE_RETRIEVAL__EXPERIMENTAL__INTENTS")
    monkeypatch.setenv("AGENTBASE_RETRIEVAL__INTENTS", "true")
    with pytest.warns(DeprecationWarning, match="AGENTBASE_RETRIEVAL__EXPERIMENTAL__INTENTS"):
        kernel = Kernel(db_path, embedder=hash_embedder, ner="regex")
    with kernel:
        assert "preference" in kernel.find("what do I prefer to drink?", user_id="u").trace.intents
