"""Smoke tests for ``benchmarks/``: every entry point runs on a tiny input, so the harness can't rot.

They use the ``--smoke`` path (projection embedder, regex NER): they check the plumbing and the
report, never a figure.
"""

from __future__ import annotations

import json

import pytest

from benchmarks import __main__ as cli
from benchmarks import report, synthetic
from benchmarks.scale import LEGS, run_size
from benchmarks.systems import SYSTEMS, run_system

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


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


def test_synthetic_is_deterministic_and_prefix_stable():
    first = [m["text"] for m in synthetic.memories(50, 7)]
    assert first == [m["text"] for m in synthetic.memories(50, 7)]
    assert first[:20] == [m["text"] for m in synthetic.memories(20, 7)]
    assert first != [m["text"] for m in synthetic.memories(50, 8)]
    assert synthetic.queries(5, 7) == synthetic.queries(5, 7)


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_every_system_ingests_and_scores_in_process(name, tmp_path):
    result = run_system(name, TINY, tmp_path, progress=False, smoke=True)
    scores = result["rows"][0]["scores"]
    assert scores["all"]["n"] == 3  # category 5 is left out
    assert result["rows"][0]["malformed_evidence"] == 1  # "D9:9" points to no turn
    assert result["turns"] == 5
    in_ram_only = name == "langgraph"  # LangGraph's InMemoryStore writes nothing to disk
    assert (result["bytes"] > 0) != in_ram_only
    assert result["peak_rss"] > 0 and result["ingest_per_s"] > 0
    assert 0 <= scores["all"]["hit@20"] <= 1


def test_run_command_spawns_a_worker_and_writes_the_report(tiny, tmp_path):
    out = tmp_path / "out"
    assert cli.main(["run", "--data", str(tiny), "--smoke", "--systems", "fts5", "--results-dir", str(out),
                     "--no-progress"]) == 0
    run = json.loads((out / "results" / "run.json").read_text())
    assert [s["system"] for s in run["systems"]] == ["fts5"]
    text = (out / "RESULTS.md").read_text()
    assert "plain FTS5 BM25" in text and "smoke run" in text and "| mem0ai |" in text
    assert (out / "quality.png").stat().st_size > 0 and (out / "speed.png").exists()


def test_scale_size_and_report(tmp_path):
    row = run_size(300, tmp_path, n_queries=4, batch=100, progress=False)
    assert row["size"] == 300 and set(row["search"]) == set(LEGS)
    assert row["search"]["find"]["n"] == 4 and row["bytes"] > 0
    (tmp_path / "results").mkdir()
    other = dict(row, size=600, finished="now")
    scale = {"sizes": {"300": dict(row, finished="now"), "600": other}, "versions": {"numpy": "x"}}
    (tmp_path / "results" / "scale.json").write_text(json.dumps(scale))
    text = report.render(tmp_path).read_text()
    assert "Scaling curve" in text and "300→600" in text and (tmp_path / "scale.png").exists()
