"""LoCoMo retrieval benchmark: hit@k / recall@k for agentbase, with one ablation row per step.

Usage::

    python -m benchmarks.locomo [DATA_FILE] [--quick] [--no-ablations] [--json OUT]

Each LoCoMo session becomes an agentbase session (user_id = the conversation's sample_id), each
turn a message with its session's date as timestamp and its ``dia_id`` in metadata; a shared
photo's caption is part of what was said. Questions of categories 1-4 are searched in their own
conversation only, with the last session's date as reference time. A hit's ``dia_id``s come from
its provenance (derived facts and summaries cite the turns they came from). Scoring follows
``shared/data/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

KS = (1, 5, 10, 20)
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo_dev.json"


def load(path: Path) -> list[dict[str, Any]]:
    with open(path) as fh:
        return json.load(fh)


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


def ingest(kernel: Any, data: list[dict[str, Any]], progress: bool = True) -> dict[str, Any]:
    """Ingest every conversation through the public session API; returns timing and per-sample refs."""
    from agentbase_kernel.text.dates import parse_datetime

    refs: dict[str, Any] = {}
    n_turns = 0
    started = time.perf_counter()
    total = sum(len(t) for conv in data for _, _, t in sessions_of(conv["conversation"]))
    bar = _bar(total, "ingest", progress)
    for conv in data:
        sample = conv["sample_id"]
        last = None
        for n, when, turns in sessions_of(conv["conversation"]):
            created = parse_datetime(when)
            last = created or last
            sid = f"{sample}:s{n}"
            kernel.create_session(sid, user_id=sample, metadata={"date": when})
            messages = [{"role": "user", "content": turn_text(t), "name": t.get("speaker"),
                         "metadata": {"dia_id": t.get("dia_id")}, "created_at": created} for t in turns if turn_text(t)]
            kernel.add_messages(sid, messages)
            n_turns += len(messages)
            bar.update(len(turns))
        refs[sample] = last
    bar.close()
    return {"turns": n_turns, "seconds": time.perf_counter() - started, "refs": refs}


def reference_times(data: list[dict[str, Any]]) -> dict[str, Any]:
    """Each conversation's last session date: the reference for relative dates in its questions."""
    from agentbase_kernel.text.dates import parse_datetime

    refs = {}
    for conv in data:
        dates = [parse_datetime(when) for _, when, _ in sessions_of(conv["conversation"])]
        refs[conv["sample_id"]] = [d for d in dates if d][-1] if any(dates) else None
    return refs


def dia_ids(hit: Any) -> list[str]:
    ids = [p.metadata.get("dia_id") for p in hit.provenance if p.metadata.get("dia_id")]
    if not ids and hit.entry.metadata.get("dia_id"):
        ids = [hit.entry.metadata["dia_id"]]
    return ids


def evaluate(kernel: Any, data: list[dict[str, Any]], refs: dict[str, Any], *, retrieval: Any = None,
             label: str = "default", progress: bool = True) -> dict[str, Any]:
    valid = {t["dia_id"] for conv in data for _, _, turns in sessions_of(conv["conversation"]) for t in turns}
    per_cat: dict[Any, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    latencies: list[float] = []
    malformed = 0
    questions = [(conv["sample_id"], q) for conv in data for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)]
    bar = _bar(len(questions), label, progress)
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
        result = kernel.find(str(qa["question"]), top_k=max(KS), user_id=sample, reference_time=refs[sample],
                             config=retrieval)
        latencies.append((time.perf_counter() - t0) * 1000)
        bar.update(1)
        if not evidence:
            continue
        for k in KS:
            got = {d for hit in result[:k] for d in dia_ids(hit)}
            found = len(evidence & got)
            for cat in ("all", qa["category"]):
                per_cat[cat][f"hit@{k}"].append(1.0 if found else 0.0)
                per_cat[cat][f"recall@{k}"].append(found / len(evidence))
    bar.close()
    table = {str(cat): {m: round(sum(v) / len(v), 4) for m, v in metrics.items()} | {"n": len(metrics["hit@1"])}
             for cat, metrics in per_cat.items()}
    latencies.sort()
    return {"label": label, "scores": table, "malformed_evidence": malformed,
            "p50_ms": round(statistics.median(latencies), 2),
            "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 2)}


def _bar(total: int, desc: str, enabled: bool) -> Any:
    try:
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, disable=not enabled, file=sys.stderr, leave=False)
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
    "+ NER mention boosts": {"ner_mentions": True},
    "+ keyword intents": {"intents": True},
    "no date window": {"date_window": False},
    "+ decomposition": {"decompose": True},
    "no co-retrieval": {"co_retrieval": False},
    "+ heuristic rerank": {"rerank": True},
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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

    data = load(Path(args.data))
    if args.quick:
        data = data[:1]
    path = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "locomo.db"
    progress = not args.no_progress
    with Kernel(path) as kernel:
        info = kernel.info()
        print(f"agentbase on {path}: vectors={info['vector_backend']} ner={info['ner_stage']} embedder={info['embedder']}")
        if args.reuse:
            stats = {"turns": kernel.count(category="turn"), "seconds": float("nan"), "refs": reference_times(data)}
        else:
            stats = ingest(kernel, data, progress)
        print(f"ingested {stats['turns']} turns in {stats['seconds']:.1f} s "
              f"({stats['turns'] / stats['seconds']:.0f} turns/s, NER + facts + embeddings)")
        base = kernel.config.retrieval
        rows = [evaluate(kernel, data, stats["refs"], label="default", progress=progress)]
        if not args.no_ablations:
            for label, change in ABLATIONS.items():
                rows.append(evaluate(kernel, data, stats["refs"], retrieval=replace(base, **change), label=label,
                                     progress=progress))
    print()
    print(header())
    for row in rows:
        print(format_row(row))
    default = rows[0]
    print("\nper category (default):")
    for cat in sorted(k for k in default["scores"] if k != "all"):
        s = default["scores"][cat]
        print(f"  category {cat}: n={s['n']} hit@10={s['hit@10']:.3f} recall@10={s['recall@10']:.3f}")
    print(f"malformed or dangling evidence ids: {default['malformed_evidence']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"ingest": {k: v for k, v in stats.items() if k != "refs"},
                                               "rows": rows}, indent=2, default=str))
    s = default["scores"]["all"]
    print(f"hit@10={s['hit@10']:.3f} recall@10={s['recall@10']:.3f} n={s['n']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
