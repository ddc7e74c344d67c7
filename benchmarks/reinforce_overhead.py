"""find p50/p95 with reinforcement on vs off: one LoCoMo dev conversation, real MiniLM.

Usage: python -m benchmarks.reinforce_overhead [--samples 1] [--rounds 3]
Calls alternate on/off question by question, so machine noise hits both sides alike.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from agentbase_kernel import Kernel

from .locomo import ingest, load

DATA = Path("/work/shared/data/locomo_dev.json")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = load(DATA)[: args.samples]
    with tempfile.TemporaryDirectory() as tmp, Kernel(Path(tmp) / "bench.db", embedder="minilm") as k:
        ingest(k, data, progress=False)
        questions = [(conv["sample_id"], qa["question"]) for conv in data for qa in conv["qa"]]
        for user, q in questions[:20]:  # warm caches
            k.find(q, user_id=user, reinforce=False)
        times: dict[bool, list[float]] = {True: [], False: []}
        queued: list[float] = []  # what reinforcement adds inside find: queueing the returned ids
        reinforcer = k._reinforcer
        record = reinforcer.record

        def timed_record(*a, **kw):
            t0 = time.perf_counter()
            record(*a, **kw)
            queued.append((time.perf_counter() - t0) * 1000)

        reinforcer.record = timed_record
        for r in range(args.rounds):
            for i, (user, q) in enumerate(questions):
                for on in ((True, False) if (i + r) % 2 else (False, True)):
                    t = time.perf_counter()
                    k.find(q, user_id=user, reinforce=on)
                    times[on].append((time.perf_counter() - t) * 1000)
        bumped = k.flush_lifecycle()
    for on in (False, True):
        xs = sorted(times[on])
        print(f"reinforce={'on ' if on else 'off'} n={len(xs)} p50={statistics.median(xs):.2f} ms "
              f"p95={xs[int(0.95 * len(xs))]:.2f} ms")
    q = sorted(queued)
    print(f"queueing inside find: p50={statistics.median(q) * 1000:.1f} us p95={q[int(0.95 * len(q))] * 1000:.1f} us")
    print(f"p50 difference: {statistics.median(times[True]) - statistics.median(times[False]):+.2f} ms "
          f"(entries bumped in the last flush: {bumped})")


if __name__ == "__main__":
    main()
