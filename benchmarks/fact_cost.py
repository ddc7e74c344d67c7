"""What extracted facts cost the embedder: the same turns embedded alone and with their facts.

Usage::

    python -m benchmarks.fact_cost DATA [--max-turns N] [--repeats 3]

Each session's texts go to the default embedder the way ingest sends them (distinct texts, shortest first,
64 at a time): the turns alone, the turns with the facts extracted from every turn, and with the facts of the
user's turns only (``IngestConfig.facts_from``). Process CPU seconds, the median of ``--repeats`` runs taken in
alternating order, in one process: a fact is a short text, so its share of the work is far below its share
of the texts. Facts are extracted without NER, so facts about names NER would find are left out.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from benchmarks.ingest import EMBED_BATCH, _sessions
from benchmarks.locomo import DEFAULT_DATA


def _facts(turn: Any) -> list[str]:
    from agentbase_kernel.text.facts import extract_facts

    return [f.text for f in extract_facts(turn.memory, role=turn.speaker if turn.role == "user" else turn.role)]


def main(argv: list[str] | None = None) -> int:
    from agentbase_kernel.text.embedders import default_embedder

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--max-turns", type=int, help="the first whole conversations up to N turns")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    sessions = _sessions(args.data, args.max_turns)
    embedder = default_embedder()
    assert embedder is not None, "no default embedder installed"
    embedder.embed_batch(["warm up the model"])
    texts = {
        "turns only": [[t.memory for t in s] for s in sessions],
        "turns + facts from all turns": [[t.memory for t in s] + [f for t in s for f in _facts(t)] for s in sessions],
        "turns + facts from user turns only": [[t.memory for t in s] + [f for t in s if t.role == "user"
                                                                        for f in _facts(t)] for s in sessions],
    }

    def cpu(by_session: list[list[str]]) -> float:
        started = time.process_time()
        for session in by_session:
            distinct = sorted(set(session), key=len)
            for i in range(0, len(distinct), EMBED_BATCH):
                embedder.embed_batch(distinct[i:i + EMBED_BATCH])
        return time.process_time() - started

    seconds: dict[str, list[float]] = {name: [] for name in texts}
    for repeat in range(args.repeats):
        for name in list(texts) if repeat % 2 == 0 else list(texts)[::-1]:
            seconds[name].append(cpu(texts[name]))
    median = {name: sorted(v)[len(v) // 2] for name, v in seconds.items()}
    print("| texts embedded | count | CPU s (median) | vs turns alone |\n|---|---:|---:|---:|")
    for name, by_session in texts.items():
        count = sum(len(set(s)) for s in by_session)
        print(f"| {name} | {count} | {median[name]:.1f} | {median[name] / median['turns only']:.3f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
