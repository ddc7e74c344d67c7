"""The variants tried on both dev sets, offline from dump.py's pickles.

    python tools/tuning/variants.py /tmp/tune/assistant.pkl /tmp/tune/locomo.pkl

Each hook mirrors a kernel step: ``self_boost`` (a first-person question ranks the user's turns up)
and ``latest_first`` (a question about now ranks a later statement of the same speaker and topic
above an earlier one; agentbase_kernel/retrieve/updates.py).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim import evaluate, line

from agentbase_kernel.text.intent import asks_about_self, asks_current


def hook(self_boost=1.0, latest=False, relevance=0.7, same_topic=0.0, pool=30, centred=True, facts=False, chain=True):
    def run(row, scored, p):
        q = row["q"]["question"]
        if self_boost != 1.0 and asks_about_self(q):
            for x in scored:
                if x[1]["role"] == "user":
                    x[0] *= self_boost
            scored.sort(key=lambda x: (-x[0], x[1]["rid"]))
        if not latest or not scored or not asks_current(q):
            return scored
        best = scored[0][0]
        known = [x for x in scored if x[1]["vec"] is not None]
        mean = np.mean([x[1]["vec"] for x in known], axis=0) if centred and known else 0.0
        part = [x for x in scored[:pool] if x[0] >= relevance * best and (facts or not x[1]["fact"]) and x[1]["vec"] is not None]
        cv = {}
        for x in part:
            v = x[1]["vec"] - mean
            cv[id(x)] = v / (np.linalg.norm(v) or 1)
        part.sort(key=lambda x: x[1]["created"])
        original = {id(x): x[0] for x in part}
        for i, b in enumerate(part):
            for a in part[:i]:
                if a[1]["created"] >= b[1]["created"] or a[1]["actor"] != b[1]["actor"]:
                    continue
                if float(cv[id(a)] @ cv[id(b)]) < same_topic:
                    continue
                anchor = a[0] if chain else original[id(a)] * (1 + 1e-6 * i)
                b[0] = max(b[0], anchor * 1.001)
        scored.sort(key=lambda x: (-x[0], x[1]["rid"]))
        return scored
    return run


STEPS = [
    ("default (score fusion 0.5, context 0.75)", {}, {}),
    ("+ self boost 1.3", {}, {"self_boost": 1.3}),
    ("+ latest first", {}, {"self_boost": 1.3, "latest": True}),
    ("vector weight 0.6", {"a": 0.6}, {"self_boost": 1.3, "latest": True}),
    ("vector weight 0.7", {"a": 0.7}, {"self_boost": 1.3, "latest": True}),
    ("vector weight 0.7, context 0.5", {"a": 0.7, "cw": 0.5}, {"self_boost": 1.3, "latest": True}),
    ("vector weight 0.8, context 0.5", {"a": 0.8, "cw": 0.5}, {"self_boost": 1.3, "latest": True}),
]

if __name__ == "__main__":
    sets = {Path(f).stem: pickle.loads(Path(f).read_bytes()) for f in sys.argv[1:]}
    for label, p, h in STEPS:
        for name, rows in sets.items():
            print(line(f"{name:9s} {label}", evaluate(rows, p, hook(**h))))
