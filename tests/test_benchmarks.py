"""Smoke tests for ``benchmarks/``: every entry point runs on a tiny input, so the harness can't rot.

They use the ``--smoke`` path (projection embedder for agentbase and the baselines, regex NER; Mem0
keeps its own MiniLM): they check the plumbing, the fairness of the inputs and the report, never a
figure or a time.
"""

from __future__ import annotations

import copy
import json

import pytest

from benchmarks import __main__ as cli
from benchmarks import locomo, report, synthetic
from benchmarks.scale import LEGS, run_size
from benchmarks.systems import DEFAULT, SYSTEMS, run_system

TINY = [{
    "sample_id": "conv-t",
    "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy called Biscuit last week!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! I started pottery classes in Lisbon."},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "Look at him.", "img_url": ["x"],
             "blip_caption": "a photo of a small brown dog on a sofa"},
        ],
        "session_2_date_time": "10:00 am on 20 May, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "My pottery teacher Rosa moved to Porto."},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "Biscuit chewed my running shoes yesterday."},
        ],
    },
    "qa": [
        {"question": "What is the name of Ana's dog?", "answer": "Biscuit", "evidence": ["D1:1"], "category": 4},
        {"question": "Where did Ben take pottery classes?", "answer": "Lisbon", "evidence": ["D1:2; D9:9"],
         "category": 1},
        {"question": "What colour is the dog on the sofa?", "answer": "brown", "evidence": ["D1:3"], "category": 2},
        {"question": "What is Ben's cat called?", "answer": "n/a", "evidence": [], "category": 5},
    ],
}]


ASSISTANT = copy.deepcopy(TINY)
ASSISTANT[0]["sample_id"] = "asst-t"
for _qa, _kind in zip(ASSISTANT[0]["qa"], ("preference", "fact", "fact", "preference")):
    _qa["kind"] = _kind


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


@pytest.fixture
def assistant(tmp_path):
    path = tmp_path / "assistant.json"
    path.write_text(json.dumps(ASSISTANT))
    return path


def test_synthetic_is_deterministic_and_prefix_stable():
    first = [m["text"] for m in synthetic.memories(50, 7)]
    assert first == [m["text"] for m in synthetic.memories(50, 7)]
    assert first[:20] == [m["text"] for m in synthetic.memories(20, 7)]
    assert first != [m["text"] for m in synthetic.memories(50, 8)]
    assert synthetic.queries(5, 7) == synthetic.queries(5, 7)


def test_every_system_is_given_the_same_memory_text_with_speaker_and_date():
    turns = locomo.turns_of(TINY)
    assert [t.dia_id for t in turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert turns[0].memory == "(1:56 pm on 8 May, 2023) Ana: I adopted a puppy called Biscuit last week!"
    assert turns[2].memory.endswith("Look at him. [shares a photo: a photo of a small brown dog on a sofa]")
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[3].when.isoformat() == "2023-05-20T10:00:00+00:00" and turns[3].session_id == "conv-t-s2"
    # add calls never straddle a session: exchanges are pairs within one
    assert [[t.dia_id for t in c] for c in locomo.chunks(turns, "exchange")] == [
        ["D1:1", "D1:2"], ["D1:3"], ["D2:1", "D2:2"]]
    assert [len(c) for c in locomo.chunks(turns, "session")] == [3, 2]
    assert [len(c) for c in locomo.chunks(turns, "turn")] == [1] * 5


def test_scores_are_grouped_by_category_and_by_kind():
    ranked = {"What is the name of Ana's dog?": [["D2:2"], ["D1:1"]],
              "Where did Ben take pottery classes?": [["D1:2"]],
              "What colour is the dog on the sofa?": [["D2:1"]]}
    row = locomo.evaluate(lambda q, sample, ref, k: ranked[q], ASSISTANT, progress=False)
    assert row["scores"]["all"]["n"] == 3 and row["scores"]["all"]["hit@1"] == pytest.approx(1 / 3, abs=1e-3)
    assert row["kinds"]["preference"] == {**row["kinds"]["preference"], "n": 1, "hit@1": 0.0, "hit@5": 1.0}
    assert row["kinds"]["fact"]["n"] == 2 and row["kinds"]["fact"]["hit@20"] == 0.5
    assert locomo.evaluate(lambda *a: [], TINY, progress=False)["kinds"] == {}  # LoCoMo has no kinds


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_every_system_ingests_and_scores_in_process(name, tmp_path):
    result = run_system(name, TINY, tmp_path, progress=False, smoke=True)
    scores = result["rows"][0]["scores"]
    assert scores["all"]["n"] == 3  # category 5 is left out
    assert result["rows"][0]["malformed_evidence"] == 1  # "D9:9" points to no turn
    assert result["turns"] == 5 and result["stored_rows"] >= 5
    assert result["add_calls"] == {"turn": 5, "exchange": 3, "session": 2}[SYSTEMS[name].unit]
    in_ram_only = name == "langgraph"  # LangGraph's InMemoryStore writes nothing to disk
    assert (result["bytes"] > 0) != in_ram_only
    assert result["peak_rss"] > 0 and result["ingest_per_s"] > 0
    # every system's hits map back to turns: with 5 turns and top 20, each finds some evidence
    assert 0 < scores["all"]["hit@20"] <= 1


def test_swap_paths_run_beside_the_framework_they_replace():
    for name, system in SYSTEMS.items():
        if system.replaces:
            assert system.group == "swap" and system.replaces in DEFAULT
            assert DEFAULT.index(system.replaces) < DEFAULT.index(name)
            assert SYSTEMS[system.replaces].build is system.build  # the same user code on both
    assert {"agentbase", "agentbase-no-sessions", "mem0", "mem0-swap", "mem0-exchange", "mem0-swap-exchange",
            "langgraph", "langgraph-swap", "minimal", "langchain"} <= set(DEFAULT)


def test_quick_run_on_two_sets_writes_per_kind_rows_and_the_report(tiny, assistant, tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", "--quick", "--smoke", "--data", str(tiny), "--data", str(assistant), "--by-set",
                     "--systems", "agentbase,fts5", "--results-dir", str(out), "--no-progress"]) == 0
    run = json.loads((out / "results" / "run.json").read_text())
    assert list(run["sets"]) == ["tiny", "assistant"] and run["quick"]
    assert [s["system"] for s in run["sets"]["tiny"]["systems"]] == ["agentbase", "fts5"]
    kinds = run["sets"]["assistant"]["systems"][0]["rows"][0]["kinds"]
    assert set(kinds) == {"preference", "fact"}
    text = (out / "RESULTS.md").read_text()
    assert "plain FTS5 BM25" in text and "smoke run" in text and "| mem0ai |" in text
    assert "Per kind" in text and "fact (n = 2)" in text
    assert "All six dev sets at a glance" in text
    assert (out / "quality.png").stat().st_size > 0 and (out / "speed.png").exists()
    # a later run of some systems on one set replaces those rows and keeps the others
    kept = run["sets"]["tiny"]["systems"][0]
    assert cli.main(["run", "--quick", "--smoke", "--data", str(tiny), "--systems", "fts5,dense", "--jobs", "2",
                     "--results-dir", str(out), "--no-progress"]) == 0
    run = json.loads((out / "results" / "run.json").read_text())
    assert [s["system"] for s in run["sets"]["tiny"]["systems"]] == ["agentbase", "fts5", "dense"]
    assert run["sets"]["tiny"]["systems"][0] == kept and "assistant" in run["sets"]
    assert "## Embedders" in (out / "RESULTS.md").read_text()  # the dense row is an embedder's
    # merge adds another run's rows
    other = tmp_path / "other"
    assert cli.main(["run", "--quick", "--smoke", "--data", str(assistant), "--systems", "dense",
                     "--results-dir", str(other), "--no-progress"]) == 0
    assert cli.main(["merge", str(other / "results" / "run.json"), "--results-dir", str(out)]) == 0
    run = json.loads((out / "results" / "run.json").read_text())
    assert [s["system"] for s in run["sets"]["assistant"]["systems"]] == ["agentbase", "fts5", "dense"]
    # LoCoMo dev is where the defaults were tuned: its figures are labelled in-sample
    run["sets"] = {"locomo": run["sets"]["tiny"]}
    (out / "results" / "run.json").write_text(json.dumps(run))
    assert "in-sample" in report.render(out).read_text()
    table = report.readme_table(out)  # the README's table, from the same run.json
    assert "| plain FTS5 BM25 | " in table and "locomo hit@1 / hit@10 (in-sample)" in table


def test_the_six_dev_sets_are_known_and_all_in_sample(tmp_path):
    assert list(locomo.DATASETS) == ["locomo", "realtalk", "beam", "prefeval-explicit", "prefeval-choice", "assistant"]
    assert locomo.IN_SAMPLE == set(locomo.DATASETS)
    with pytest.raises(SystemExit, match="unknown dev sets"):
        cli.main(["run", "--set", "locomo,nope", "--results-dir", str(tmp_path)])


def test_run_refuses_a_missing_dev_set(tmp_path):
    with pytest.raises(SystemExit, match="dev set not found"):
        cli.main(["run", "--data", str(tmp_path / "nope.json"), "--results-dir", str(tmp_path)])
    assert locomo.set_name(locomo.DEFAULT_DATA) == "locomo"
    assert locomo.set_name(locomo.ASSISTANT_DATA) == "assistant"


def test_scale_size_and_report(tmp_path):
    row = run_size(300, tmp_path, n_queries=4, batch=100, progress=False, live_writes=50)
    assert row["size"] == 300 and row["stored"] == 300 and set(row["search"]) == set(LEGS)
    assert row["search"]["find"]["n"] == 4 and row["bytes"] > 0 and "recall_fts" in row["find_steps_mean_ms"]
    (tmp_path / "results").mkdir()
    other = dict(row, size=600, finished="now")
    scale = {"sizes": {"300": dict(row, finished="now"), "600": other}, "versions": {"numpy": "x"}}
    (tmp_path / "results" / "scale.json").write_text(json.dumps(scale))
    text = report.render(tmp_path).read_text()
    assert "Scaling curve" in text and "300→600" in text and (tmp_path / "scale.png").exists()


def test_store_scale_size_and_report(tmp_path):
    """Both LangGraph stores hold the same items and answer every timed search; the page shows both."""
    pytest.importorskip("langgraph")
    from benchmarks.store_scale import run_size as store_size

    cache = tmp_path / "cache"
    cache.mkdir()
    row = store_size(40, tmp_path, cache, n_queries=3, progress=False)
    assert row["size"] == 40 and row["queries"] == 3 and len(list(cache.glob("minilm-*.npy"))) == 1
    for name in ("InMemoryStore", "AgentBaseStore"):
        assert set(row[name]["search"]) == {"p50_ms", "p95_ms"} and row[name]["load_s"] >= 0
    (tmp_path / "b").mkdir()
    # the 40 cached vectors are reused; items 40-59 hold the vectors of items 0-19
    bigger = store_size(60, tmp_path / "b", cache, n_queries=2, embed_at_most=40, load_ner="regex", progress=False)
    assert bigger["size"] == 60 and bigger["embedded"] == 40 and row["embedded"] == 40
    (tmp_path / "results").mkdir()
    doc = {"sizes": {"40": dict(row, finished="now"), "60": dict(bigger, finished="now")}, "versions": {}}
    (tmp_path / "results" / "store_scale.json").write_text(json.dumps(doc))
    text = report.render(tmp_path).read_text()
    assert "LangGraph store search at scale" in text and "| 60 | 2 |" in text
    assert "AgentBaseStore search p50 ≤ InMemoryStore's at 40 items" in text
    assert "at 60 items only the first 40 texts were embedded" in text and "NER while loading: at 60 items" in text


def test_scale_over_several_scopes_searches_one_and_is_shown_apart(tmp_path):
    row = run_size(300, tmp_path, n_queries=3, batch=100, progress=False, live_writes=10, scopes=3)
    assert row["scopes"] == 3 and row["stored"] == 100  # user u0 holds every third memory
    one = run_size(300, tmp_path, n_queries=3, batch=100, progress=False, live_writes=10)
    (tmp_path / "results").mkdir()
    sizes = {"300": dict(one, finished="a"), "300x3": dict(row, finished="b")}
    (tmp_path / "results" / "scale.json").write_text(json.dumps({"sizes": sizes, "versions": {}}))
    (tmp_path / "results" / "scale-postgres.json").write_text(json.dumps({"sizes": sizes}))
    text = report.render(tmp_path).read_text()
    curve, postgres = text.split("## Scaling on PostgreSQL")
    assert "over 3 users" not in curve.split("## Scaling curve")[1]
    assert "| 300 over 3 users (searched: 100) |" in postgres
