"""Dev-set quality of one tree on SQLite and PostgreSQL, every question's ranking and scores kept, so
two trees can be compared question by question (docs/house.md).

    python tools/house/quality_ab.py TREE LABEL OUT SET[:N] [SET[:N] ...]   # N: first N conversations
    python tools/house/quality_ab.py --compare OUT                         # before-* against after-*

Ingest and eval are ``tools/tuning/harness.py``'s (of this checkout); ``Kernel`` and
``benchmarks.locomo`` come from TREE. PostgreSQL is a throwaway server (``tests/postgres/server.py``).
Writes OUT/LABEL-SET-BACKEND.json.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]


def measure(tree: Path, label: str, out: Path, sets: list[str]) -> None:
    sys.path.insert(0, str(tree))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    spec = importlib.util.spec_from_file_location("harness", HERE / "tools" / "tuning" / "harness.py")
    assert spec is not None and spec.loader is not None
    harness: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    import agentbase_kernel
    from agentbase_kernel import Kernel

    assert agentbase_kernel.__file__ is not None and agentbase_kernel.__file__.startswith(str(tree))
    sys.path.insert(0, str(HERE))
    from tests.postgres.server import ThrowawayServer

    out.mkdir(parents=True, exist_ok=True)
    with ThrowawayServer.start() as server:
        for spec_ in sets:
            name, _, n = spec_.partition(":")
            data = harness.load(name)[: int(n)] if n else harness.load(name)
            for backend in ("sqlite", "postgres"):
                where = str(out / f"{label}-{name}.db") if backend == "sqlite" else server.create_database()
                if backend == "sqlite" and os.path.exists(where):
                    os.remove(where)
                t0 = time.perf_counter()
                with Kernel(where) as kernel:
                    turns = harness.ingest(kernel, data)
                    t1 = time.perf_counter()
                    scores: list[list[float]] = []
                    table, rankings = harness.run(kernel, data, None, scores)
                    t2 = time.perf_counter()
                harness.show(f"{label} {name} {backend}", table)
                (out / f"{label}-{name}-{backend}.json").write_text(json.dumps({
                    "tree": str(tree), "set": name, "conversations": len(data), "turns": turns, "backend": backend,
                    "ingest_s": round(t1 - t0, 1), "eval_s": round(t2 - t1, 1), "table": table,
                    "questions": [{"q": q["question"], "ranked": r, "scores": sc}
                                  for (q, _, r), sc in zip(rankings, scores)]}))


def compare(out: Path) -> None:
    for before_file in sorted(out.glob("before-*.json")):
        after_file = out / before_file.name.replace("before-", "after-")
        if not after_file.exists():
            continue
        a, b = json.loads(before_file.read_text()), json.loads(after_file.read_text())
        pairs = list(zip(a["questions"], b["questions"]))
        ranking = sum(x["ranked"] == y["ranked"] for x, y in pairs)
        scores = sum(len(x["scores"]) == len(y["scores"]) and all(abs(s - t) < 1e-9 for s, t in zip(x["scores"], y["scores"]))
                     for x, y in pairs)
        ta, tb = a["table"]["all"], b["table"]["all"]
        cells = " ".join(f"{m} {ta[m]:.3f}/{tb[m]:.3f}" for m in ("hit@1", "hit@5", "hit@10", "recall@10"))
        print(f"{a['set']} {a['backend']} ({a['conversations']} conversations, {a['turns']} turns, n={ta['n']}): "
              f"{cells}; same ranking {ranking}/{len(pairs)}, same scores {scores}/{len(pairs)}")


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(Path(sys.argv[2]))
    else:
        measure(Path(sys.argv[1]).resolve(), sys.argv[2], Path(sys.argv[3]), sys.argv[4:])
