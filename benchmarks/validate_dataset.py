"""Check a LoCoMo-format dev set before anything is scored on it.

Usage::

    python -m benchmarks.validate_dataset FILE [--tolerate-bad-evidence] [--min-per-kind N]

Checks the structure (conversations, dated sessions, turns, questions), that every evidence id
names a turn, that no ``dia_id`` repeats, that session dates parse and run forwards in time, and,
when the questions carry a ``kind`` (benchmarks/data/README.md), that the kinds are balanced and
each question fits its kind (a knowledge update's superseded turns come before its evidence, an
aggregation spans sessions, a paraphrase shares no content word with its evidence...).

LoCoMo itself has a few malformed or dangling evidence ids and questions with none;
``--tolerate-bad-evidence`` counts them instead of failing, which is how the scorer treats them. Prints a summary; exits 1 on a problem.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["KINDS", "Report", "content_words", "main", "parse_session_date", "validate"]

KINDS = ("knowledge-update", "preference", "aggregation", "multi-session", "temporal",
         "single-session-user", "single-session-assistant", "paraphrase")
CATEGORIES = (1, 2, 3, 4, 5)  # LoCoMo: multi-hop, temporal, open-domain, single-hop, adversarial
_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "9:14 am on 3 February, 2024", LoCoMo's own format

# Words that carry no content: a paraphrase may share these with its evidence.
_STOPWORDS = frozenset([
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could",
    "did", "do", "does", "doing", "down", "during", "each", "else", "ever", "few", "for", "from", "further",
    "get", "got", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "let", "me", "more", "most",
    "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours",
    "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their",
    "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too",
    "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who",
    "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "one", "ones",
    "thing", "things", "anything", "something", "really",
])


@dataclass
class Report:
    """What a dev set holds and what is wrong with it (``errors`` empty means valid)."""

    conversations: int = 0
    sessions: int = 0
    turns: int = 0
    questions: int = 0
    per_kind: Counter = field(default_factory=Counter)
    per_category: Counter = field(default_factory=Counter)
    sessions_per_conversation: list[int] = field(default_factory=list)
    turns_per_session: list[int] = field(default_factory=list)
    bad_evidence: list[str] = field(default_factory=list)  # counted, when tolerated
    without_evidence: int = 0  # questions of categories 1-4 with an empty list, counted when tolerated
    dates_without_session: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        lines = [(f"{self.conversations} conversations, {self.sessions} sessions, {self.turns} turns, "
                  f"{self.questions} questions")]
        if self.sessions_per_conversation:
            lines.append(f"sessions per conversation {min(self.sessions_per_conversation)}-"
                         f"{max(self.sessions_per_conversation)}, turns per session {min(self.turns_per_session)}-"
                         f"{max(self.turns_per_session)}")
        lines.append("per category: " + ", ".join(f"{c}={n}" for c, n in sorted(self.per_category.items())))
        if self.per_kind:
            lines.append("per kind: " + ", ".join(f"{k}={self.per_kind[k]}" for k in KINDS))
        else:
            lines.append("per kind: none (no question carries a kind)")
        if self.bad_evidence:
            lines.append(f"malformed or dangling evidence ids (tolerated): {len(self.bad_evidence)} "
                         f"{self.bad_evidence}")
        if self.without_evidence:
            lines.append(f"questions without evidence (tolerated; the scorer skips them): {self.without_evidence}")
        if self.dates_without_session:
            lines.append(f"session dates without a session: {self.dates_without_session}")
        lines.append("valid" if self.ok else f"{len(self.errors)} problem(s):")
        lines.extend(f"  - {e}" for e in self.errors)
        return "\n".join(lines)


def parse_session_date(text: str) -> datetime:
    """A ``session_N_date_time`` value; raises ValueError when it is not in LoCoMo's format."""
    return datetime.strptime(text.strip(), _DATE_FORMAT)


def content_words(text: str) -> set[str]:
    """Lower-cased, crudely stemmed words minus stopwords: what a paraphrase must not share."""
    out = set()
    for word in re.findall(r"[a-z0-9]+", text.casefold().replace("'s", "").replace("\u2019s", "")):
        if word in _STOPWORDS or len(word) < 2:
            continue
        for suffix in ("ing", "ed", "es", "s", "ly"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)]
                break
        out.add(word)
    return out


def _split_evidence(value: Any) -> list[str]:
    """LoCoMo sometimes packs two ids in one string ("D8:6; D9:17"); the scorer splits them too."""
    return [p.strip() for p in str(value).replace(";", ",").split(",") if p.strip()]


def validate(data: Any, *, tolerate_bad_evidence: bool = False, min_per_kind: int = 12) -> Report:
    """Check a loaded dev set (a list of conversations); never raises on bad content."""
    report = Report()
    err = report.errors.append
    if not isinstance(data, list) or not data:
        err("the file must hold a non-empty JSON list of conversations")
        return report
    samples: set[str] = set()
    kinds_seen = 0
    for ci, conv in enumerate(data):
        where = f"conversation {ci}"
        if not isinstance(conv, dict):
            err(f"{where}: not an object")
            continue
        sample = conv.get("sample_id")
        if not isinstance(sample, str) or not sample:
            err(f"{where}: no sample_id")
        elif sample in samples:
            err(f"{where}: sample_id {sample!r} repeats")
        else:
            samples.add(sample)
            where = sample
        report.conversations += 1
        turns, assistant = _check_conversation(conv.get("conversation"), where, report)
        qa = conv.get("qa")
        if not isinstance(qa, list) or not qa:
            err(f"{where}: no qa list")
            continue
        for qi, q in enumerate(qa):
            kinds_seen += _check_question(q, f"{where} qa[{qi}]", turns, assistant, report, tolerate_bad_evidence)
    if kinds_seen and kinds_seen != report.questions:
        err(f"{kinds_seen} of {report.questions} questions carry a kind: all or none must")
    if kinds_seen:
        for kind in KINDS:
            if report.per_kind[kind] < min_per_kind:
                err(f"kind {kind!r} has {report.per_kind[kind]} questions (at least {min_per_kind} needed)")
        counts = [report.per_kind[k] for k in KINDS]
        if min(counts) and max(counts) > 2 * min(counts):
            err(f"kinds unbalanced: {max(counts)} vs {min(counts)} questions")
    return report


# (session number, turn position, speaker, text) per dia_id
_Turns = dict[str, tuple[int, int, str, str]]


def _check_conversation(conv: Any, where: str, report: Report) -> tuple[_Turns, str]:
    """Check one conversation object; returns its turns by dia_id and speaker_b's name."""
    err = report.errors.append
    turns: _Turns = {}
    if not isinstance(conv, dict):
        err(f"{where}: no conversation object")
        return turns, ""
    speakers = {conv.get("speaker_a"), conv.get("speaker_b")}
    if None in speakers or len(speakers) != 2:
        err(f"{where}: speaker_a and speaker_b must be two different names")
    numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION_KEY.fullmatch(key)))
    if not numbers:
        err(f"{where}: no sessions")
    dated = {int(m.group(1)) for key in conv if (m := re.fullmatch(r"session_(\d+)_date_time", key))}
    report.dates_without_session += len(dated - set(numbers))
    report.sessions_per_conversation.append(len(numbers))
    previous: tuple[int, datetime] | None = None
    for n in numbers:
        session = conv[f"session_{n}"]
        here = f"{where} session_{n}"
        report.sessions += 1
        when_text = conv.get(f"session_{n}_date_time")
        try:
            when = parse_session_date(str(when_text)) if when_text is not None else None
        except ValueError:
            err(f"{here}: date {when_text!r} does not parse (expected like '9:14 am on 3 February, 2024')")
            when = None
        if when_text is None:
            err(f"{here}: no session_{n}_date_time")
        if when is not None:
            if previous is not None and when <= previous[1]:
                err(f"{here}: dated {when_text!r}, not after session_{previous[0]}")
            previous = (n, when)
        if not isinstance(session, list) or not session:
            err(f"{here}: not a non-empty list of turns")
            continue
        report.turns_per_session.append(len(session))
        for pos, turn in enumerate(session, start=1):
            report.turns += 1
            if not isinstance(turn, dict):
                err(f"{here} turn {pos}: not an object")
                continue
            dia_id, speaker, text = turn.get("dia_id"), turn.get("speaker"), turn.get("text")
            if dia_id in turns:
                err(f"{here}: dia_id {dia_id!r} repeats")
            if dia_id != f"D{n}:{pos}":
                err(f"{here} turn {pos}: dia_id {dia_id!r}, expected 'D{n}:{pos}'")
            if speaker not in speakers:
                err(f"{here} {dia_id}: speaker {speaker!r} is neither speaker_a nor speaker_b")
            if not isinstance(text, str) or not (text.strip() or turn.get("blip_caption")):
                err(f"{here} {dia_id}: empty text")
            if isinstance(dia_id, str):
                turns[dia_id] = (n, pos, str(speaker), str(text or ""))
    return turns, str(conv.get("speaker_b"))


def _check_question(q: Any, where: str, turns: _Turns, assistant: str, report: Report, tolerate: bool) -> int:
    """Check one question; returns 1 when it carries a kind."""
    err = report.errors.append
    if not isinstance(q, dict):
        err(f"{where}: not an object")
        return 0
    report.questions += 1
    question, category = q.get("question"), q.get("category")
    if not isinstance(question, str) or not question.strip():
        err(f"{where}: empty question")
    if category not in CATEGORIES:
        err(f"{where}: category {category!r} is not one of {CATEGORIES}")
    report.per_category[category] += 1
    if category == 5:
        if "answer" not in q and "adversarial_answer" not in q:
            err(f"{where}: neither answer nor adversarial_answer")
    elif q.get("answer") in (None, ""):
        err(f"{where}: no answer")
    evidence: list[str] = []
    raw = q.get("evidence")
    if not isinstance(raw, list):
        err(f"{where}: evidence is not a list")
        raw = []
    for value in raw:
        for part in _split_evidence(value):
            if part in turns:
                evidence.append(part)
            elif tolerate:
                report.bad_evidence.append(part)
            else:
                err(f"{where}: evidence {part!r} names no turn")
    if category != 5 and not raw:
        if tolerate:
            report.without_evidence += 1
        else:
            err(f"{where}: no evidence")
    if len(evidence) != len(set(evidence)):
        err(f"{where}: evidence repeats an id")
    kind = q.get("kind")
    if kind is None:
        return 0
    if kind not in KINDS:
        err(f"{where}: kind {kind!r} is not one of {KINDS}")
        return 1
    report.per_kind[kind] += 1
    if category == 5:
        err(f"{where}: a kinded question needs evidence, so not category 5")
    if evidence:
        _check_kind(q, kind, evidence, where, turns, assistant, report)
    return 1


def _check_kind(q: dict[str, Any], kind: str, evidence: list[str], where: str, turns: _Turns, assistant: str,
                report: Report) -> None:
    err = report.errors.append
    sessions = {turns[e][0] for e in evidence}
    superseded = q.get("superseded")
    if kind == "knowledge-update":
        if not isinstance(superseded, list) or not superseded:
            err(f"{where}: a knowledge update lists the earlier values' turns in 'superseded'")
        else:
            missing = [s for s in superseded if s not in turns]
            if missing:
                err(f"{where}: superseded {missing} name no turn")
            latest_old = max((turns[s][:2] for s in superseded if s in turns), default=(0, 0))
            if min(turns[e][:2] for e in evidence) <= latest_old:
                err(f"{where}: the evidence must come after every superseded turn (the answer is the latest value)")
    elif superseded is not None:
        err(f"{where}: only a knowledge update has 'superseded'")
    if kind in ("aggregation", "multi-session") and len(sessions) < 2:
        err(f"{where}: a {kind} question's evidence must span at least two sessions")
    if kind in ("single-session-user", "single-session-assistant") and len(sessions) != 1:
        err(f"{where}: a {kind} question's evidence must lie in one session")
    if kind == "single-session-user" and any(turns[e][2] == assistant for e in evidence):
        err(f"{where}: a single-session-user question's evidence is what the user said")
    if kind == "single-session-assistant" and not any(turns[e][2] == assistant for e in evidence):
        err(f"{where}: a single-session-assistant question's evidence includes an {assistant} turn")
    if kind == "paraphrase":
        shared = content_words(str(q.get("question", ""))) & set().union(
            *(content_words(turns[e][3]) for e in evidence))
        if shared:
            err(f"{where}: a paraphrase shares {sorted(shared)} with its evidence")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--tolerate-bad-evidence", action="store_true",
                        help="count malformed, dangling or missing evidence instead of failing (LoCoMo has a few)")
    parser.add_argument("--min-per-kind", type=int, default=12)
    args = parser.parse_args(argv)
    try:
        data = json.loads(Path(args.file).read_text())
    except (OSError, ValueError) as exc:
        print(f"{args.file}: cannot read a JSON file: {exc}", file=sys.stderr)
        return 1
    report = validate(data, tolerate_bad_evidence=args.tolerate_bad_evidence, min_per_kind=args.min_per_kind)
    print(f"{args.file}:\n{report.summary()}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
