"""find p50/p95 as the file's owner, as an agent with no policies in the file, and as an agent
granted read on the scope among other policies (issue 22 item 6): one LoCoMo dev conversation,
real MiniLM. Also times the permission check alone (``Gate.check``).

Usage: python -m benchmarks.permissions_overhead [--samples 1] [--rounds 2]
Calls rotate between the three callers question by question, so machine noise hits all alike.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from agentbase_kernel import Kernel
from agentbase_kernel.records import Scope

from .locomo import ingest, load

DATA = Path("/work/shared/data/locomo_dev.json")


def _summary(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"n={len(xs)} p50={statistics.median(xs):.3f} p95={xs[int(0.95 * len(xs))]:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    data = load(DATA)[: args.samples]
    with tempfile.TemporaryDirectory() as tmp:
        owner_path, policed_path = Path(tmp) / "owner.db", Path(tmp) / "policed.db"
        with Kernel(owner_path, embedder="minilm") as k:
            ingest(k, data, progress=False)
        policed_path.write_bytes(owner_path.read_bytes())
        questions = [(conv["sample_id"], qa["question"]) for conv in data for qa in conv["qa"]]
        with Kernel(owner_path, embedder="minilm") as owner, Kernel(policed_path, embedder="minilm") as policed:
            for user, _ in questions[:1]:
                for other in range(20):  # protected scopes of other users and projects
                    policed.grant(f"agent-{other}", user_id=f"someone-{other}", read=True, write=True)
                policed.grant("reader", user_id=user, read=True)
            callers = {"owner (no agent)": owner, "agent, no policies": owner.as_agent("reader"),
                       "agent, granted among 21 policies": policed.as_agent("reader")}
            for k in callers.values():  # warm caches
                for user, q in questions[:10]:
                    k.find(q, user_id=user, reinforce=False)
            times: dict[str, list[float]] = {name: [] for name in callers}
            order = list(callers)
            for r in range(args.rounds):
                for i, (user, q) in enumerate(questions):
                    shift = (i + r) % len(order)
                    for name in order[shift:] + order[:shift]:
                        t = time.perf_counter()
                        callers[name].find(q, user_id=user, reinforce=False)
                        times[name].append((time.perf_counter() - t) * 1000)
            gate = policed.as_agent("reader")._gate
            checks = []
            for user, _ in questions:
                t = time.perf_counter()
                gate.check("read", Scope(user_id=user), "find")
                checks.append((time.perf_counter() - t) * 1000)
    for name, xs in times.items():
        print(f"find, {name}: {_summary(xs)} ms")
    print(f"permission check alone (21 policies): {_summary([c * 1000 for c in checks])} us")
    base = statistics.median(times["owner (no agent)"])
    for name in order[1:]:
        print(f"p50 difference, {name} - owner: {statistics.median(times[name]) - base:+.3f} ms")


if __name__ == "__main__":
    main()
