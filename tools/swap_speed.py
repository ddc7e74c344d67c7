"""Write speed of the one-line swap paths against the framework they replace, in one process run.

    cd <checkout> && python tools/swap_speed.py mem0 --turns 400
    cd <checkout> && python tools/swap_speed.py langgraph --items 10000

``mem0``: the same user code (``benchmarks.frameworks.Mem0User``: one ``add()`` per LoCoMo turn,
the same config dict) against mem0ai's ``Memory`` and ours. For ours it reports ``add`` p50/p95,
the acknowledged rate (writes returned, FTS-searchable), the drain time after the last write
(``flush()``, the lag of the newest write at full speed), the fully-embedded rate (the sustained
rate at which the lag stays bounded), and the queue of a paced run at 80% of that rate.

``langgraph``: ``search(namespace, query=)`` p50/p95 of ``AgentBaseStore`` and ``InMemoryStore`` on
the same items (LoCoMo turn texts cycled with a counter), both embedding with the bundled MiniLM.
Items reach ``AgentBaseStore`` through its own record builder and the kernel's bulk add (a
100k-item ``put`` loop would take longer than the measurement is worth); ``put`` speed is the
``mem0`` figure's business. Prints one JSON line per system.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # PYTHONPATH (a checkout under test, benchmarks/) wins
LOCOMO = Path("/work/shared/data/locomo_dev.json")


def _pct(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2)}


def _turns(n: int) -> list:
    from benchmarks import locomo

    return locomo.turns_of(locomo.load(LOCOMO))[:n]


def mem0(args: argparse.Namespace) -> None:
    from benchmarks.frameworks import Mem0User

    turns = _turns(args.turns)
    for ours in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            user = Mem0User(Path(tmp), False, ours=ours)
            user.warm()
            add_ms = []
            started = time.perf_counter()
            for t in turns:
                t0 = time.perf_counter()
                user.add([t])
                add_ms.append((time.perf_counter() - t0) * 1000)
            acked = time.perf_counter() - started
            row = {"system": "agentbase mem0 swap" if ours else "mem0ai Memory", "turns": len(turns),
                   "add": _pct(add_ms), "acknowledged_per_s": round(len(turns) / acked, 1)}
            if ours:
                user.memory.flush()
                full = time.perf_counter() - started
                row.update(drain_after_last_write_s=round(full - acked, 2),
                           fully_embedded_per_s=round(len(turns) / full, 1))
                row["paced"] = _paced(user, turns, 0.8 * len(turns) / full)
                stats = user.memory.db.sync.stats()
                row["vectors_equal_entries"] = stats["vectors"] >= stats["entries_valid"]
            user.close()
            print(json.dumps(row), flush=True)


def _paced(user, turns: list, rate: float) -> dict[str, float]:
    """Writes at ``rate``/s into a fresh run: the most texts ever waiting for a vector, and the drain at the end."""
    kernel = user.memory.db.sync
    most, gap = 0, 1.0 / rate
    start = time.perf_counter()
    for i, t in enumerate(turns):
        delay = start + i * gap - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        user.memory.add([{"role": t.role, "content": t.memory, "name": t.speaker}], user_id="paced",
                        run_id=f"paced-{t.session_id}", infer=False)
        most = max(most, kernel.ingestor.pending)
    t0 = time.perf_counter()
    user.memory.flush()
    return {"rate_per_s": round(rate, 1), "max_waiting_texts": most, "max_lag_s_estimate": round(most / rate, 2),
            "drain_after_last_write_s": round(time.perf_counter() - t0, 2)}


def langgraph(args: argparse.Namespace) -> None:
    import numpy as np
    from langgraph.store.base import PutOp
    from langgraph.store.memory import InMemoryStore

    from agentbase_adapters.langgraph import AgentBaseStore
    from agentbase_kernel import AgentBase, Embedder, get_embedder

    base = [t.memory for t in _turns(10**9)]
    texts = [f"{base[i % len(base)]} #{i // len(base)}" for i in range(args.items)]
    questions = [q["question"] for conv in json.loads(LOCOMO.read_text()) for q in conv["qa"]][: args.queries]
    ns = ("memories", "u")
    embedder = get_embedder("minilm")
    t0 = time.perf_counter()
    vectors = np.asarray(embedder.embed_many(texts, batch_size=64), dtype=np.float32)
    print(json.dumps({"embedded": len(texts), "s": round(time.perf_counter() - t0, 1)}), flush=True)
    known = {text: vec for text, vec in zip(texts, vectors)}

    def embed(batch):  # InMemoryStore's embed function: the same MiniLM vectors, queries embedded live
        return [(known[t] if t in known else embedder.embed(t)).tolist() for t in batch]

    class Known(Embedder):
        """The same MiniLM for the kernel: stored texts' vectors computed once above, queries live."""

        name, dim = embedder.name, embedder.dim

        def embed_batch(self, batch):
            return np.asarray([known[t] if t in known else embedder.embed(t) for t in batch], dtype=np.float32)

    memory = InMemoryStore(index={"dims": 384, "fields": ["text"], "embed": embed})
    for i, text in enumerate(texts):
        memory.put(ns, f"k{i}", {"text": text})
    with tempfile.TemporaryDirectory() as tmp:
        db = AgentBase(Path(tmp) / "g.db", embedder=Known())
        store = AgentBaseStore(db, index_fields=["text"])
        records = []
        for i, text in enumerate(texts):
            record = store._to_record(PutOp(ns, f"k{i}", {"text": text}))
            records.append({**record, "user_id": "u", "actor": "langgraph", "dedup": False,
                            "stream": "lg:" + json.dumps(list(ns)), "defer_embedding": False})
        t0 = time.perf_counter()
        for i in range(0, len(records), 1000):
            db.sync.add_memories(records[i : i + 1000])
        print(json.dumps({"loaded_agentbase": len(records), "s": round(time.perf_counter() - t0, 1)}), flush=True)
        for name, target in (("InMemoryStore", memory), ("AgentBaseStore", store)):
            target.search(ns, query=questions[0], limit=10)  # warm
            ms = []
            for q in questions:
                t1 = time.perf_counter()
                target.search(ns, query=q, limit=10)
                ms.append((time.perf_counter() - t1) * 1000)
            print(json.dumps({"system": name, "items": len(texts), "queries": len(ms), "search": _pct(ms)}), flush=True)
        db.sync.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    m = sub.add_parser("mem0")
    m.add_argument("--turns", type=int, default=400)
    g = sub.add_parser("langgraph")
    g.add_argument("--items", type=int, default=10_000)
    g.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    {"mem0": mem0, "langgraph": langgraph}[args.what](args)


if __name__ == "__main__":
    main()
