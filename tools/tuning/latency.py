"""``find`` latency, new defaults against the previous ones, interleaved in one run (p50 / p95 ms).

    python tools/tuning/latency.py assistant /tmp/tune/final_assistant.db
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness

PREVIOUS = {"latest_first": False, "self_boost": 1.0, "unseen_vector_shift": 0.0, "context_vector_weight": 0.75}


def main(name: str, db: str) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agentbase_kernel import Kernel

    data = harness.load(name)
    refs = harness.refs_of(data)
    with Kernel(db) as kernel:
        configs = {"new defaults": kernel.config.retrieval, "previous defaults": replace(kernel.config.retrieval, **PREVIOUS)}
        times: dict[str, list[float]] = {label: [] for label in configs}
        kernel.find("warm up", user_id="warm-up")
        for sample, q, _ in harness.questions(data):
            for label, cfg in configs.items():
                t0 = time.perf_counter()
                kernel.find(str(q["question"]), top_k=20, user_id=sample, reference_time=refs[sample], config=cfg)
                times[label].append((time.perf_counter() - t0) * 1000)
    for label, ts in times.items():
        ts.sort()
        print(f"{name} {label}: p50 {statistics.median(ts):.1f} ms, p95 {ts[int(0.95 * (len(ts) - 1))]:.1f} ms, n={len(ts)}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
