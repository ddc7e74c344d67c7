"""LoCoMo-format dev sets: the turns every system is given, and the one scoring function.

A dev set is a JSON list of conversations in LoCoMo's shape (``shared/data/README.md``); the
assistant-style set in ``benchmarks/data/`` uses the same shape and gives each QA item a ``kind``.
Every system is handed the same :class:`Turn` stream: one memory per turn whose text is
``"(<session date>) <Speaker>: <what was said>"`` (a shared photo's caption is part of what was
said), plus the speaker, the session and its date as separate fields where a system's API has a
slot for them. Questions of categories 1-4 are searched in their own conversation; the scores
follow ``shared/data/README.md`` and are grouped by category and, when QA items have one, by kind.

Usage (the kernel's own ablation tool: the session API, each retrieval step toggled)::

    python -m benchmarks.locomo [DATA_FILE] [--quick] [--no-ablations] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

KS = (1, 5, 10, 20)
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DEFAULT_DATA = SHARED_DATA / "locomo_dev.json"
ASSISTANT_DATA = Path(__file__).resolve().parent / "data" / "assistant_dev.json"
# The six development sets (shared/data/README.md), in the order they are run and shown
DATASETS = {
    "locomo": DEFAULT_DATA,
    "realtalk": SHARED_DATA / "realtalk_dev.json",
    "beam": SHARED_DATA / "beam100k_dev.json",
    "prefeval-explicit": SHARED_DATA / "prefeval_explicit_dev.json",
    "prefeval-choice": SHARED_DATA / "prefeval_choice_dev.json",
    "assistant": ASSISTANT_DATA,
}
TITLES = {"locomo": "LoCoMo dev", "realtalk": "REALTALK dev", "beam": "BEAM-100K dev",
          "prefeval-explicit": "PrefEval explicit dev", "prefeval-choice": "PrefEval choice dev",
          "assistant": "Assistant-style dev"}
# Every dev set is in-sample: the retrieval defaults (and the learned ranker) are chosen on them;
# held-out halves of the same sources are scored elsewhere.
_IN_SAMPLE = "in-sample: the retrieval defaults are chosen on these conversations"
SAMPLE_NOTES = {
    "locomo": _IN_SAMPLE + " (since the first round)",
    "realtalk": _IN_SAMPLE,
    "beam": _IN_SAMPLE,
    "prefeval-explicit": _IN_SAMPLE,
    "prefeval-choice": _IN_SAMPLE,
    "assistant": _IN_SAMPLE + " (the project wrote this set)",
}
IN_SAMPLE = frozenset(name for name, note in SAMPLE_NOTES.items() if note.startswith("in-sample"))
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y", "%d %B, %Y", "%d %B %Y",
                 "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d")


def load(path: Path) -> list[dict[str, Any]]:
    with open(path) as fh:
        data = json.load(fh)
    if not isinstance(data, list) or not all(isinstance(c, dict) and "conversation" in c and "qa" in c for c in data):
        raise SystemExit(f"{path}: not a LoCoMo-format dev set (a list of {{sample_id, conversation, qa}})")
    return data


def set_name(path: Path | str) -> str:
    """``locomo`` / ``assistant`` for the known files, else the file's stem."""
    resolved = Path(path).resolve()
    for name, known in DATASETS.items():
        if resolved == known.resolve():
            return name
    return Path(path).stem


def session_date(text: str) -> datetime | None:
    """A session's ``date_time`` ("1:56 pm on 8 May, 2023") as an aware UTC datetime, or None."""
    cleaned = " ".join(str(text or "").replace("am", "AM").replace("pm", "PM").split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    return None


def sessions_of(conv: dict[str, Any]) -> list[tuple[int, str, list[dict[str, Any]]]]:
    out = []
    for key, turns in conv.items():
        if key.startswith("session_") and not key.endswith("date_time") and isinstance(turns, list):
            n = int(key.split("_")[1])
            out.append((n, conv.get(f"session_{n}_date_time", ""), turns))
    return sorted(out)


def turn_text(turn: dict[str, Any]) -> str:
    text = turn.get("text", "")
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {caption}]"
    return text


@dataclass(frozen=True)
class Turn:
    """One turn as every system receives it: ``memory`` is the text, the rest are optional fields."""

    conversation: str  # sample_id: each conversation is one user's scope
    session: int
    date: str  # the session's date as written
    when: datetime | None
    speaker: str
    role: str  # "user" for the conversation's speaker_a, "assistant" for the other speaker
    said: str  # what was said, the photo caption included
    dia_id: str

    @property
    def memory(self) -> str:
        """The one memory text every system is given."""
        return f"({self.date}) {self.speaker}: {self.said}" if self.date else f"{self.speaker}: {self.said}"

    @property
    def session_id(self) -> str:
        return f"{self.conversation}-s{self.session}"


def turns_of(data: list[dict[str, Any]]) -> list[Turn]:
    """Every non-empty turn of every conversation, in order."""
    out = []
    for conv in data:
        first = conv["conversation"].get("speaker_a")
        for n, date, turns in sessions_of(conv["conversation"]):
            when = session_date(date)
            for t in turns:
                said = turn_text(t)
                if not said.strip():
                    continue
                speaker = str(t.get("speaker") or "")
                out.append(Turn(conv["sample_id"], n, date, when, speaker,
                                "user" if first is None or speaker == first else "assistant", said, str(t["dia_id"])))
    return out


def chunks(turns: list[Turn], unit: str) -> Iterator[list[Turn]]:
    """The turn stream cut into add calls: one per ``turn``, ``exchange`` (two turns) or ``session``."""
    if unit == "turn":
        yield from ([t] for t in turns)
        return
    group: list[Turn] = []
    for t in turns:
        if group and (t.session_id != group[0].session_id or (unit == "exchange" and len(group) == 2)):
            yield group
            group = []
        group.append(t)
    if group:
        yield group


def reference_times(data: list[dict[str, Any]]) -> dict[str, datetime | None]:
    """Each conversation's last session date: the reference for relative dates in its questions."""
    refs = {}
    for conv in data:
        dates = [session_date(when) for _, when, _ in sessions_of(conv["conversation"])]
        known = [d for d in dates if d]
        refs[conv["sample_id"]] = known[-1] if known else None
    return refs


def questions_of(data: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(sample_id, qa) for every scored question: categories 1-4 (5 is adversarial)."""
    return [(conv["sample_id"], q) for conv in data for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)]


Search = Callable[[str, str, "datetime | None", int], list[list[str]]]
"""(question, sample_id, reference time, k) -> the dia_ids of each hit, best first."""


def evaluate(search: Search, data: list[dict[str, Any]], *, label: str = "default",
             progress: bool = True) -> dict[str, Any]:
    """Score one system's ``search`` on every question: hit@k / recall@k overall, per category, per kind."""
    refs = reference_times(data)
    valid = {t["dia_id"] for conv in data for _, _, turns in sessions_of(conv["conversation"]) for t in turns}
    groups: dict[str, dict[str, dict[str, list[float]]]] = {"category": defaultdict(lambda: defaultdict(list)),
                                                            "kind": defaultdict(lambda: defaultdict(list))}
    latencies: list[float] = []
    malformed = 0
    questions = questions_of(data)
    pbar = _bar(len(questions), label, progress)
    for sample, qa in questions:
        evidence = set()
        for e in qa.get("evidence", []):
            for part in str(e).replace(";", ",").split(","):
                part = part.strip()
                if part in valid:
                    evidence.add(part)
                elif part:
                    malformed += 1
        t0 = time.perf_counter()
        ranked = search(str(qa["question"]), sample, refs[sample], max(KS))
        latencies.append((time.perf_counter() - t0) * 1000)
        pbar.update(1)
        if not evidence:
            continue
        keys = [("category", "all"), ("category", qa["category"])]
        if qa.get("kind"):
            keys.append(("kind", str(qa["kind"])))
        for k in KS:
            got = {d for ids in ranked[:k] for d in ids}
            found = len(evidence & got)
            for group, key in keys:
                groups[group][key][f"hit@{k}"].append(1.0 if found else 0.0)
                groups[group][key][f"recall@{k}"].append(found / len(evidence))
    pbar.close()

    def table(per: dict[Any, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
        return {str(key): {m: round(sum(v) / len(v), 4) for m, v in metrics.items()} | {"n": len(metrics["hit@1"])}
                for key, metrics in per.items()}

    from .common import percentiles

    return {"label": label, "scores": table(groups["category"]), "kinds": table(groups["kind"]),
            "malformed_evidence": malformed, **percentiles(latencies), "search_ms": latencies}


def _bar(total: int, desc: str, enabled: bool) -> Any:
    try:
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, disable=not (enabled and sys.stderr.isatty()), file=sys.stderr, leave=False)
    except ImportError:  # tqdm is a dev dependency; without it, no bar
        class _Null:
            def update(self, n: int) -> None: ...
            def close(self) -> None: ...

        return _Null()


# every step toggled against the default, so each one's contribution is measured, not assumed
ABLATIONS: dict[str, dict[str, Any]] = {
    "fts only": {"vectors": False},
    "vectors only": {"fts": False},
    "no NER boost": {"ner_boost": False},
    "+ NER mention boosts": {"experimental": {"ner_mentions": True}},
    "+ keyword intents": {"experimental": {"intents": True}},
    "no date window": {"date_window": False},
    "+ decomposition": {"experimental": {"decompose": True}},
    "no co-retrieval": {"co_retrieval": False},
    "+ heuristic rerank": {"experimental": {"rerank": True}},
    "no context vectors": {"context_vector_weight": 0.0},
    "no date-said boost": {"date_said_boost": 1.0},
    "facts unweighted": {"derived_weight": 1.0},
    "RRF fusion (k=60, 0.85/0.15)": {"fusion": "rrf"},
    "RRF, design weights 0.4/0.6": {"fusion": "rrf", "fts_weight": 0.4, "vector_weight": 0.6},
}


def format_row(row: dict[str, Any]) -> str:
    s = row["scores"]["all"]
    return (f"| {row['label']} | " + " | ".join(f"{s[f'hit@{k}']:.3f}" for k in KS) + " | "
            + " | ".join(f"{s[f'recall@{k}']:.3f}" for k in KS) + f" | {s['n']} | {row['p50_ms']} | {row['p95_ms']} |")


def header() -> str:
    return ("| configuration | " + " | ".join(f"hit@{k}" for k in KS) + " | " + " | ".join(f"recall@{k}" for k in KS)
            + " | n | p50 ms | p95 ms |\n|" + "---|" * (2 * len(KS) + 4))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The kernel's session path on a LoCoMo-format dev set, "
                                                 "with one ablation row per retrieval step")
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--no-ablations", action="store_true")
    parser.add_argument("--quick", action="store_true", help="first conversation only")
    parser.add_argument("--json", help="write all rows to this file")
    parser.add_argument("--db", help="database file (default: a temporary one)")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="--db already holds this data: skip ingest")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agentbase_kernel import Kernel

    from .kernel_paths import kernel_search, session_ingest

    data = load(Path(args.data))
    if args.quick:
        data = data[:1]
    path = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "locomo.db"
    progress = not args.no_progress
    with Kernel(path) as kernel:
        info = kernel.info()
        print(f"agentbase on {path}: vectors={info['vector_backend']} ner={info['ner_stage']} embedder={info['embedder']}")
        turns = turns_of(data)
        if not args.reuse:
            started = time.perf_counter()
            for batch in chunks(turns, "session"):
                session_ingest(kernel, batch)
            seconds = time.perf_counter() - started
            print(f"ingested {len(turns)} turns in {seconds:.1f} s ({len(turns) / seconds:.0f} turns/s)")
        rows = [evaluate(kernel_search(kernel), data, label="default", progress=progress)]
        if not args.no_ablations:
            for label, change in ABLATIONS.items():
                rows.append(evaluate(kernel_search(kernel, kernel.config.with_(retrieval=change).retrieval), data,
                                     label=label, progress=progress))
    print()
    print(header())
    for row in rows:
        print(format_row(row))
    default = rows[0]
    print("\nper category (default):")
    for cat in sorted(k for k in default["scores"] if k != "all"):
        s = default["scores"][cat]
        print(f"  category {cat}: n={s['n']} hit@10={s['hit@10']:.3f} recall@10={s['recall@10']:.3f}")
    for kind, s in sorted(default["kinds"].items()):
        print(f"  kind {kind}: n={s['n']} hit@1={s['hit@1']:.3f} hit@10={s['hit@10']:.3f} "
              f"recall@10={s['recall@10']:.3f}")
    print(f"malformed or dangling evidence ids: {default['malformed_evidence']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": [{k: v for k, v in r.items() if k != "search_ms"}
                                                        for r in rows]}, indent=2, default=str))
    s = default["scores"]["all"]
    print(f"hit@10={s['hit@10']:.3f} recall@10={s['recall@10']:.3f} n={s['n']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
