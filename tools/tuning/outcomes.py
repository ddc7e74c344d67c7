"""Does confidence learned from outcomes help ranking? Replay dev-set questions with simulated outcomes.

For each set (an ingested file, ``harness.py ingest``; the file is changed: use a copy), the
questions are split in two halves by a hash of their text. Learning: each question of one half is
asked (``find``, top 30); every retrieved evidence turn gets a ``success`` outcome, a non-evidence
turn ranked first a ``failure`` (``Kernel.record_outcome`` with ``entry_ids``). Scoring: the other
half's rankings (asked before any learning, so retrieval itself is unchanged) are re-ranked by
``score * (1 - w + w * confidence)`` for several weights ``w``, or filtered by ``min_confidence``,
and hit@1 / hit@10 / recall@10 are reported; then the halves swap.

    python tools/tuning/outcomes.py /tmp/sets/locomo.db locomo [...more file/set pairs]
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))

from harness import dia_ids, load, questions, refs_of

WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0)
FLOORS = (0.5, 0.7)
DEPTH = 30


def half(text: str) -> int:
    return hashlib.md5(text.encode()).digest()[0] & 1


def ask(kernel: Any, data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    refs = refs_of(data)
    out = []
    for sample, q, ev in questions(data):
        found = kernel.find(str(q["question"]), top_k=DEPTH, user_id=sample, reference_time=refs[sample],
                            reinforce=False)
        out.append({"half": half(str(q["question"])), "ev": ev,
                    "hits": [(h.id, h.score, dia_ids(h)) for h in found]})
    return out


def learn(kernel: Any, asked: list[dict[str, Any]], which: int) -> list[str]:
    """Record the simulated outcomes of one half; returns their ids (reverted before the halves swap)."""
    done = []
    for i, q in enumerate(a for a in asked if a["half"] == which):
        good = [hid for hid, _, ids in q["hits"] if q["ev"] & set(ids)]
        if good:
            done.append(kernel.record_outcome(f"learn-{which}-{i}", "success", entry_ids=good).id)
        if q["hits"] and not (q["ev"] & set(q["hits"][0][2])):
            done.append(kernel.record_outcome(f"learn-{which}-{i}", "failure", entry_ids=[q["hits"][0][0]]).id)
    return done


def metrics(rankings: list[tuple[set[str], list[list[str]]]]) -> dict[str, float]:
    n = len(rankings) or 1
    hit1 = sum(bool(ev & set(r[0] if r else [])) for ev, r in rankings) / n
    hit10 = sum(bool(ev & {d for ids in r[:10] for d in ids}) for ev, r in rankings) / n
    rec10 = sum(len(ev & {d for ids in r[:10] for d in ids}) / len(ev) for ev, r in rankings) / n
    return {"hit@1": round(hit1, 3), "hit@10": round(hit10, 3), "recall@10": round(rec10, 3), "n": len(rankings)}


def evaluate(kernel: Any, asked: list[dict[str, Any]], which: int) -> dict[str, dict[str, float]]:
    test = [q for q in asked if q["half"] == which]
    conf: dict[str, float] = {}
    for q in test:
        for hid, _, _ in q["hits"]:
            if hid not in conf:
                conf[hid] = kernel.get(hid).confidence
    table = {}
    for w in WEIGHTS:
        ranked = [(q["ev"], [ids for _, _, ids in sorted(q["hits"], key=lambda h: -h[1] * (1 - w + w * conf[h[0]]))])
                  for q in test]
        table[f"w={w}"] = metrics(ranked)
    for floor in FLOORS:
        ranked = [(q["ev"], [ids for hid, _, ids in q["hits"] if conf[hid] >= floor]) for q in test]
        table[f"min_confidence={floor}"] = metrics(ranked)
    table["moved"] = {"entries_below_1": sum(c < 1.0 for c in conf.values()), "entries": len(conf)}
    return table


def main(argv: list[str]) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agentbase_kernel import Kernel

    report = {}
    for db, name in zip(argv[::2], argv[1::2]):
        with Kernel(db) as kernel:
            asked = ask(kernel, load(name))
            for learned, tested in ((0, 1), (1, 0)):
                outcomes = learn(kernel, asked, learned)
                key = f"{name} learn={learned} test={tested}"
                report[key] = {"outcomes": len(outcomes), **evaluate(kernel, asked, tested)}
                print(json.dumps({key: report[key]}), flush=True)
                for outcome_id in outcomes:  # the other half learns from scratch
                    kernel.revert_outcome(outcome_id)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
