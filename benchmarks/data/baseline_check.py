"""Difficulty check: plain FTS5 BM25 and plain MiniLM cosine on assistant_dev.json, hit@k per kind.

Usage: python benchmarks/data/baseline_check.py [FILE]
Same turn text and per-conversation scoping as benchmarks/systems.py's baselines.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

KS = (1, 5, 10)


def turns_of(conv):
    c = conv["conversation"]
    n = 1
    while f"session_{n}" in c:
        yield from c[f"session_{n}"]
        n += 1


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("assistant_dev.json")
    data = json.loads(path.read_text())
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE turns USING fts5(text, sample UNINDEXED, dia_id UNINDEXED)")
    from agentbase_kernel.text.embedders import get_embedder

    emb = get_embedder("minilm")
    mats, ids = {}, {}
    for conv in data:
        ts = list(turns_of(conv))
        db.executemany("INSERT INTO turns VALUES (?, ?, ?)", [(t["text"], conv["sample_id"], t["dia_id"]) for t in ts])
        mats[conv["sample_id"]] = emb.embed_many([t["text"] for t in ts])
        ids[conv["sample_id"]] = [t["dia_id"] for t in ts]

    def fts(q, sample):
        words = re.findall(r"\w+", q.casefold())
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        return [r[0] for r in db.execute("SELECT dia_id FROM turns WHERE turns MATCH ? AND sample = ? "
                                         "ORDER BY bm25(turns) LIMIT 10", (match, sample))]

    def dense(q, sample):
        sims = mats[sample] @ emb.embed(q)
        return [ids[sample][i] for i in np.argsort(-sims, kind="stable")[:10]]

    scores = {name: defaultdict(lambda: defaultdict(list)) for name in ("fts5", "dense")}
    for conv in data:
        for q in conv["qa"]:
            ev = set(q["evidence"])
            for name, fn in (("fts5", fts), ("dense", dense)):
                got = fn(q["question"], conv["sample_id"])
                for kind in (q["kind"], "all"):
                    for k in KS:
                        scores[name][kind][f"hit@{k}"].append(float(bool(ev & set(got[:k]))))
                    scores[name][kind]["recall@10"].append(len(ev & set(got[:10])) / len(ev))
                    if q.get("superseded") and kind != "all":
                        # does a superseded value outrank the current one?
                        first_old = min((got.index(s) for s in q["superseded"] if s in got), default=99)
                        first_new = min((got.index(e) for e in ev if e in got), default=99)
                        scores[name][kind]["old-first"].append(float(first_old < first_new))
    kinds = sorted(k for k in scores["fts5"] if k != "all") + ["all"]
    print("| kind | n | FTS5 hit@1 | hit@5 | hit@10 | recall@10 | MiniLM hit@1 | hit@5 | hit@10 | recall@10 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in kinds:
        cells = []
        for name in ("fts5", "dense"):
            s = scores[name][kind]
            cells += [f"{np.mean(s[m]):.2f}" for m in ("hit@1", "hit@5", "hit@10", "recall@10")]
        print(f"| {kind} | {len(scores['fts5'][kind]['hit@1'])} | " + " | ".join(cells) + " |")
    for name in ("fts5", "dense"):
        s = scores[name]["knowledge-update"]["old-first"]
        print(f"{name}: a superseded value ranks above the current one in {np.mean(s):.2f} of knowledge updates")


if __name__ == "__main__":
    main()
