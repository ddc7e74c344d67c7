"""Both dev sets pass the validator, and the validator catches what it claims to catch."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.validate_dataset import KINDS, content_words, main, validate

ROOT = Path(__file__).resolve().parents[1]
ASSISTANT_DEV = ROOT / "benchmarks" / "data" / "assistant_dev.json"
LOCOMO_DEV = ROOT.parent / "shared" / "data" / "locomo_dev.json"


@pytest.fixture(scope="module")
def assistant() -> list[dict[str, Any]]:
    return json.loads(ASSISTANT_DEV.read_text())


def test_assistant_set_is_valid_and_balanced(assistant: list[dict[str, Any]]) -> None:
    report = validate(assistant)
    assert report.errors == []
    assert report.conversations >= 12
    assert report.questions >= 120
    assert all(report.per_kind[kind] >= 12 for kind in KINDS), report.per_kind
    assert 6 <= min(report.sessions_per_conversation) and max(report.sessions_per_conversation) <= 12
    assert 8 <= min(report.turns_per_session) and max(report.turns_per_session) <= 20
    assert report.bad_evidence == [] and report.without_evidence == 0


def test_assistant_set_is_one_user_and_the_assistant(assistant: list[dict[str, Any]]) -> None:
    users = {conv["conversation"]["speaker_a"] for conv in assistant}
    assert len(users) == len(assistant)  # a different person in every conversation
    assert {conv["conversation"]["speaker_b"] for conv in assistant} == {"Assistant"}


def test_assistant_json_is_what_the_builder_writes(assistant: list[dict[str, Any]]) -> None:
    from benchmarks.data.build_assistant_dev import build

    assert build() == assistant


def test_cli_accepts_the_assistant_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(ASSISTANT_DEV)]) == 0
    out = capsys.readouterr().out
    assert "valid" in out and "per kind: knowledge-update=" in out


@pytest.mark.skipif(not LOCOMO_DEV.exists(), reason="LoCoMo dev data is not on this machine")
def test_locomo_known_bad_evidence_is_counted_not_fatal(capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(LOCOMO_DEV.read_text())
    strict = validate(data)
    assert len(strict.errors) == 5 and all("evidence" in e for e in strict.errors)
    tolerant = validate(data, tolerate_bad_evidence=True)
    assert tolerant.errors == []
    assert sorted(tolerant.bad_evidence) == ["D", "D10:19", "D:11:26"]
    assert tolerant.without_evidence == 2
    assert tolerant.per_kind == {}  # LoCoMo has categories, no kinds
    assert main([str(LOCOMO_DEV)]) == 1
    assert main([str(LOCOMO_DEV), "--tolerate-bad-evidence"]) == 0
    assert "tolerated): 3" in capsys.readouterr().out


def _first_question(data: list[dict[str, Any]], kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    for conv in data:
        for q in conv["qa"]:
            if q["kind"] == kind:
                return conv, q
    raise AssertionError(kind)


def _errors_after(data: list[dict[str, Any]], change: Any) -> list[str]:
    broken = copy.deepcopy(data)
    change(broken)
    return validate(broken).errors


def test_validator_catches_structural_problems(assistant: list[dict[str, Any]]) -> None:
    def duplicate_dia_id(d: list[dict[str, Any]]) -> None:
        d[0]["conversation"]["session_1"][1]["dia_id"] = "D1:1"

    def dangling_evidence(d: list[dict[str, Any]]) -> None:
        d[0]["qa"][0]["evidence"] = ["D99:1"]

    def sessions_out_of_order(d: list[dict[str, Any]]) -> None:
        d[0]["conversation"]["session_2_date_time"] = "9:00 am on 1 January, 2001"

    def unparsable_date(d: list[dict[str, Any]]) -> None:
        d[0]["conversation"]["session_1_date_time"] = "sometime in spring"

    def stranger(d: list[dict[str, Any]]) -> None:
        d[0]["conversation"]["session_1"][0]["speaker"] = "Mallory"

    def repeated_sample(d: list[dict[str, Any]]) -> None:
        d[1]["sample_id"] = d[0]["sample_id"]

    for change, expected in [(duplicate_dia_id, "repeats"), (dangling_evidence, "names no turn"),
                             (sessions_out_of_order, "not after"), (unparsable_date, "does not parse"),
                             (stranger, "neither speaker_a"), (repeated_sample, "sample_id")]:
        errors = _errors_after(assistant, change)
        assert any(expected in e for e in errors), (change.__name__, errors)


def test_validator_checks_each_question_fits_its_kind(assistant: list[dict[str, Any]]) -> None:
    def superseded_after_evidence(d: list[dict[str, Any]]) -> None:
        _, q = _first_question(d, "knowledge-update")
        q["evidence"], q["superseded"] = q["superseded"][:1], q["evidence"]

    def aggregation_in_one_turn(d: list[dict[str, Any]]) -> None:
        _, q = _first_question(d, "aggregation")
        q["evidence"] = q["evidence"][:1]

    def assistant_question_on_user_turn(d: list[dict[str, Any]]) -> None:
        _, q = _first_question(d, "single-session-assistant")
        q["evidence"] = ["D1:1"]

    def paraphrase_sharing_words(d: list[dict[str, Any]]) -> None:
        conv, q = _first_question(d, "paraphrase")
        turn = next(t for s in conv["conversation"].values() if isinstance(s, list) for t in s
                    if t["dia_id"] == q["evidence"][0])
        q["question"] = turn["text"]

    def unknown_kind(d: list[dict[str, Any]]) -> None:
        d[0]["qa"][0]["kind"] = "vibes"

    def too_few_of_a_kind(d: list[dict[str, Any]]) -> None:
        for conv in d:
            conv["qa"] = [q for q in conv["qa"] if q["kind"] != "temporal"] or conv["qa"]

    for change, expected in [(superseded_after_evidence, "after every superseded"),
                             (aggregation_in_one_turn, "two sessions"),
                             (assistant_question_on_user_turn, "includes an Assistant turn"),
                             (paraphrase_sharing_words, "a paraphrase shares"), (unknown_kind, "'vibes'"),
                             (too_few_of_a_kind, "kind 'temporal'")]:
        errors = _errors_after(assistant, change)
        assert any(expected in e for e in errors), (change.__name__, errors)


def test_content_words_ignore_stopwords_and_plain_suffixes() -> None:
    assert content_words("I was running to the dentist's") == {"runn", "dentist"}
    assert content_words("What did you recommend?") == {"recommend"}


def test_cli_reports_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main([str(bad)]) == 1
    assert "cannot read" in capsys.readouterr().err
