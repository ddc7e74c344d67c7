"""find p50/p95 as the file's owner vs as an agent, on one file: first with no
policies in it, then with 21 policies (the agent granted read on the scope it searches). Also times
the permission check alone and the conflict-flag lookup every ``find`` does (its trace step).

One LoCoMo dev conversation, real MiniLM. Usage:
python -m benchmarks.permissions_overhead [--samples 1] [--rounds 2]
Owner and agent calls alternate question by question, so machine noise hits both alike.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agentbase_kernel import Kernel
from agentbase_kernel.records import Scope

from .locomo import chunks, load, questions_of, turns_of

DATA = Path("/work/shared/data/locomo_dev.json")


def _summary(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"n={len(xs)} p50={statistics.median(xs):.3f} p95={xs[int(0.95 * len(xs))]:.3f}"


def ingest(k: Kernel, data: list[dict[str, Any]]) -> None:
    """Each LoCoMo session as one ``add_messages`` in its conversation's user scope."""
    for session in chunks(turns_of(data), "session"):
        k.add_messages(session[0].session_id, [{"role": t.role, "content": t.said, "name": t.speaker,
                                                "created_at": t.when} for t in session],
                       user_id=session[0].conversation)


def _phase(owner: Kernel, agent: Kernel, questions: list[tuple[str, str]], rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"owner": [], "agent": []}
    for r in range(rounds):
        for i, (user, q) in enumerate(questions):
            for name in (("owner", "agent") if (i + r) % 2 else ("agent", "owner")):
                k = owner if name == "owner" else agent
                t = time.perf_counter()
                k.find(q, user_id=user, reinforce=False)
                times[name].append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    data = load(DATA)[: args.samples]
    questions = [(user, qa["question"]) for user, qa in questions_of(data)]
    flag_ms: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, Kernel(Path(tmp) / "bench.db", embedder="minilm") as owner:
        ingest(owner, data)
        mark = owner._mark_conflicts

        def timed_mark(entries: list[Any]) -> list[str]:
            t0 = time.perf_counter()
            try:
                return mark(entries)
            finally:
                flag_ms.append((time.perf_counter() - t0) * 1000)

        owner._mark_conflicts = timed_mark  # type: ignore[method-assign]
        agent = owner.as_agent("reader")
        for user, q in questions[:10]:  # warm caches
            owner.find(q, user_id=user, reinforce=False)
        results = {"no policies": _phase(owner, agent, questions, args.rounds)}
        for other in range(20):  # protected scopes of other users
            owner.grant(f"agent-{other}", user_id=f"someone-{other}", read=True, write=True)
        owner.grant("reader", user_id=questions[0][0], read=True)
        results["21 policies"] = _phase(owner, agent, questions, args.rounds)
        gate = agent._gate
        checks = []
        for user, _ in questions:
            t = time.perf_counter()
            gate.check("read", Scope(user_id=user), "find")
            checks.append((time.perf_counter() - t) * 1e6)
    for phase, times in results.items():
        for name, xs in times.items():
            print(f"find, {phase}, {name}: {_summary(xs)} ms")
        diff = statistics.median(times["agent"]) - statistics.median(times["owner"])
        print(f"p50 difference, {phase}, agent - owner: {diff:+.3f} ms")
    print(f"permission check alone (21 policies, verdict cached): {_summary(checks)} us")
    print(f"conflict-flag lookup inside find: {_summary(flag_ms)} ms")


if __name__ == "__main__":
    main()
