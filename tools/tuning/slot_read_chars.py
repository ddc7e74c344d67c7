"""Latest first's slot parse read whole vs from its opening (``text/slots.py`` ``READ_CHARS``), paired in one process.

Ingests a dev set (the benchmark's subset: ``--max-turns`` as ``python -m benchmarks run`` takes it) into a
kernel file with ``harness.ingest`` once, counts the turns longer than the opening and the questions that
reach the parse (they ask how things stand now), then runs the questions with the parse whole and cut,
alternating ``--rounds`` times, and prints hit@1 / hit@10, ``find`` p50 / p95 and the ``latest_first`` step's
total for each, and how many top-10 lists are identical.

    python tools/tuning/slot_read_chars.py beam /tmp/tune/beam.db --max-turns 1000 --all --rounds 2
    python tools/tuning/slot_read_chars.py pref_explicit /tmp/tune/pe.db --max-turns 500
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness

from benchmarks.__main__ import _first_turns
from benchmarks.locomo import turns_of

WHOLE = 10**9


def main(argv: list[str]) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agentbase_kernel import Kernel
    from agentbase_kernel.text import intent, slots

    ap = argparse.ArgumentParser()
    ap.add_argument("set", choices=list(harness.SETS))
    ap.add_argument("db")
    ap.add_argument("--max-turns", type=int)
    ap.add_argument("--all", action="store_true", help="every question, not only those asking how things stand now")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args(argv)
    cut = slots.READ_CHARS
    data = harness.load(args.set)
    if args.max_turns:
        data = _first_turns(data, args.max_turns)
    long = sum(len(slots._LABEL.sub("", t.memory, count=1).strip()) > cut for t in turns_of(data))
    questions = harness.questions(data)
    now = [x for x in questions if intent.asks_current(str(x[1]["question"]))]
    print(f"{args.set}: {len(turns_of(data))} turns, {long} longer than {cut} characters; "
          f"{len(questions)} questions, {len(now)} asking how things stand now", flush=True)
    asked = questions if args.all else now
    fresh = not Path(args.db).exists()
    with Kernel(args.db) as kernel:
        if fresh:
            t0 = time.perf_counter()
            harness.ingest(kernel, data)
            print(f"ingested in {time.perf_counter() - t0:.0f} s", flush=True)
        refs = harness.refs_of(data)
        tops: dict[int, list[list[str]]] = {}
        for chars in [WHOLE, cut] * args.rounds:
            slots.READ_CHARS = chars
            slots._CACHE.clear()
            rankings, ms, parse_ms = [], [], 0.0
            for sample, q, ev in asked:
                t0 = time.perf_counter()
                found = kernel.find(str(q["question"]), top_k=20, user_id=sample, reference_time=refs[sample])
                ms.append((time.perf_counter() - t0) * 1000)
                parse_ms += sum(step.ms for step in found.trace.steps if step.name == "latest_first")
                rankings.append((q, ev, [harness.dia_ids(h) for h in found]))
            a = harness.score(rankings).get("all", {"hit@1": 0.0, "hit@10": 0.0, "n": 0})
            tops[chars] = [[d for ids in r for d in ids][:10] for _, _, r in rankings]
            name = "whole" if chars == WHOLE else f"opening {chars}"
            print(f"  {name:12s} n={a['n']} hit@1={a['hit@1']:.3f} hit@10={a['hit@10']:.3f} "
                  f"find p50={np.percentile(ms, 50):.0f} p95={np.percentile(ms, 95):.0f} ms "
                  f"latest_first total={parse_ms / 1000:.1f} s", flush=True)
        same = sum(x == y for x, y in zip(tops[WHOLE], tops[cut]))
        print(f"  identical top-10 lists: {same} of {len(asked)}")


if __name__ == "__main__":
    main(sys.argv[1:])
