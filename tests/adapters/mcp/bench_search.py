"""What one ``search_memories`` call costs through stdio, against ``Kernel.find`` in-process.

Run by hand (not collected by pytest)::

    .venv/bin/python -m tests.adapters.mcp.bench_search [--memories 1000] [--calls 100]

Loads the first N LoCoMo dev turns (speaker-prefixed) as one user's memories with the real MiniLM
and spaCy, then asks the LoCoMo dev questions: first through the installed ``agentbase-mcp``
over stdio with the SDK's client (round trip: JSON-RPC framing, pipe, tool validation, kernel,
JSON result), then through ``Kernel.find`` in this process on the same file, in the same run.
Prints p50 / p95 in milliseconds and the ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from agentbase_kernel import Kernel

from .conftest import McpClient, command

DATA = Path("/work/shared/data/locomo_dev.json")


def _turns_and_questions(n: int) -> tuple[list[str], list[str]]:
    samples = json.loads(DATA.read_text())
    turns, questions = [], []
    for sample in samples:
        conv = sample["conversation"]
        for key in sorted((k for k in conv if k.startswith("session_") and not k.endswith("date_time")),
                          key=lambda k: int(k.split("_")[1])):
            turns += [f"{t['speaker']}: {t['text']}" for t in conv[key]]
        questions += [q["question"] for q in sample["qa"]]
    return turns[:n], questions


def _pct(ms: list[float], q: float) -> float:
    return statistics.quantiles(ms, n=100)[int(q) - 1] if len(ms) > 1 else ms[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=100)
    args = ap.parse_args()
    turns, questions = _turns_and_questions(args.memories)
    questions = questions[: args.calls]
    db = Path(tempfile.mkdtemp(prefix="mcp-bench-")) / "bench.db"
    with Kernel(db) as k:
        k.add_memories([{"text": t, "user_id": "bench"} for t in turns])
        info = k.info()
    client = McpClient(command(db, "--user-id", "bench"))
    try:
        client.ok("search_memories", {"query": "warm up"})
        mcp_ms = []
        for q in questions:
            t0 = time.perf_counter()
            client.ok("search_memories", {"query": q, "top_k": 10})
            mcp_ms.append((time.perf_counter() - t0) * 1000)
    finally:
        client.close()
    with Kernel(db) as k:
        k.find("warm up", user_id="bench")
        kernel_ms = []
        for q in questions:
            t0 = time.perf_counter()
            k.find(q, top_k=10, user_id="bench")
            kernel_ms.append((time.perf_counter() - t0) * 1000)
    report = {"memories": len(turns), "calls": len(questions), "embedder": info["embedder"],
              "vector_backend": info["vector_backend"],
              "mcp_stdio_ms": {"p50": round(_pct(mcp_ms, 50), 1), "p95": round(_pct(mcp_ms, 95), 1)},
              "kernel_find_ms": {"p50": round(_pct(kernel_ms, 50), 1), "p95": round(_pct(kernel_ms, 95), 1)}}
    report["p50_ratio"] = round(report["mcp_stdio_ms"]["p50"] / report["kernel_find_ms"]["p50"], 2)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
