"""Ablation of the lifecycle composite rank term (importance / recency / access) on a dev set.

Reads a file ingested by ``tools/tuning/harness.py ingest <set> <db>`` (the kernel migrates it,
giving each entry its rule-based importance) and scores ``find`` as the harness does, once per
variant, in one process: the term is swapped on the retriever between variants, reinforcement is
off so the evaluation itself records no access.

The dev sets carry no access history. The access variants are measured by a replay on a copy of
the file: the odd-numbered questions are asked first with reinforcement on (their top 10 get the
accesses), then the even-numbered ones are scored with and without the access term - both rows
on the same half, so the comparison is like for like.

    python -m benchmarks.lifecycle_ablation locomo /tmp/life1/locomo.db
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentbase_kernel import Kernel
from agentbase_kernel.config import Config
from agentbase_kernel.lifecycle.composite import CompositeRank

_HARNESS = Path(__file__).resolve().parents[1] / "tools/tuning/harness.py"

# (label, lifecycle overrides); None: the term off (the default)
VARIANTS: list[tuple[str, dict[str, Any] | None]] = [
    ("off (default)", None),
    ("relevance only", {"rank_w_rec": 0.0, "rank_w_imp": 0.0, "rank_w_acc": 0.0}),
    ("+recency 0.1, half-life 30 d", {"rank_w_rec": 0.1, "rank_w_imp": 0.0, "rank_w_acc": 0.0}),
    ("+recency 0.1, half-life 365 d", {"rank_w_rec": 0.1, "rank_w_imp": 0.0, "rank_w_acc": 0.0,
                                       "half_life_days": 365.0}),
    ("+importance 0.1", {"rank_w_rec": 0.0, "rank_w_imp": 0.1, "rank_w_acc": 0.0}),
    ("+importance 0.3", {"rank_w_rec": 0.0, "rank_w_imp": 0.3, "rank_w_acc": 0.0}),
    ("all (0.1 / 0.1 / 0.05)", {}),
]
ACCESS_VARIANTS: list[tuple[str, dict[str, Any] | None]] = [
    ("off (default), even half", None),
    ("+access 0.05, even half", {"rank_w_rec": 0.0, "rank_w_imp": 0.0, "rank_w_acc": 0.05}),
    ("+access 0.2, even half", {"rank_w_rec": 0.0, "rank_w_imp": 0.0, "rank_w_acc": 0.2}),
]


def _harness() -> Any:
    spec = importlib.util.spec_from_file_location("tuning_harness", _HARNESS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def evaluate(kernel: Kernel, harness: Any, data: list[dict[str, Any]], overrides: dict[str, Any] | None,
             keep: Any = None) -> dict[str, Any]:
    """Score the questions ``keep(index)`` selects with the term set by ``overrides``."""
    store = kernel._ready()
    kernel.retriever.rank_term = (None if overrides is None else CompositeRank(
        store, replace(kernel.config.lifecycle, rank_composite=True, **overrides)))
    refs = harness.refs_of(data)
    rankings = []
    for i, (sample, q, ev) in enumerate(harness.questions(data)):
        if keep is not None and not keep(i):
            continue
        found = kernel.find(str(q["question"]), top_k=max(harness.KS), user_id=sample,
                            reference_time=refs[sample], reinforce=False)
        rankings.append((q, ev, [harness.dia_ids(h) for h in found]))
    return harness.score(rankings)["all"]


def replay(kernel: Kernel, harness: Any, data: list[dict[str, Any]]) -> int:
    """Ask the odd-numbered questions with reinforcement on; returns how many were asked."""
    refs = harness.refs_of(data)
    asked = 0
    for i, (sample, q, _) in enumerate(harness.questions(data)):
        if i % 2:
            kernel.find(str(q["question"]), top_k=10, user_id=sample, reference_time=refs[sample], reinforce=True)
            asked += 1
    kernel.flush_lifecycle()
    return asked


def row(label: str, table: dict[str, Any]) -> str:
    return (f"| {label} | {table['n']} | {table['hit@1']:.3f} | {table['hit@5']:.3f} | {table['hit@10']:.3f} | "
            f"{table['recall@10']:.3f} |")


def main(argv: list[str]) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    name, db = argv[:2]
    harness = _harness()
    data = harness.load(name)
    quiet = Config().with_(lifecycle={"reinforce": False})
    print(f"{name} ({db})\n\n| variant | n | hit@1 | hit@5 | hit@10 | recall@10 |\n|---|---|---|---|---|---|")
    with Kernel(db, config=quiet) as kernel:
        for label, overrides in VARIANTS:
            print(row(label, evaluate(kernel, harness, data, overrides)), flush=True)
    copy = Path(db).with_name(Path(db).stem + ".access.db")
    copy.unlink(missing_ok=True)
    with sqlite3.connect(db) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    with Kernel(copy, config=quiet) as kernel:
        asked = replay(kernel, harness, data)
        print(f"| *replay: {asked} odd-numbered questions asked with reinforcement* | | | | | |")
        for label, overrides in ACCESS_VARIANTS:
            print(row(label, evaluate(kernel, harness, data, overrides, keep=lambda i: i % 2 == 0)), flush=True)
    copy.unlink()


if __name__ == "__main__":
    main(sys.argv[1:])
