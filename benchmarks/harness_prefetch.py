"""Per-turn recall latency of the harness adapters on a 10k-memory scope (p50/p95), paired with the harness's own.

Usage (from the repo root; each harness in the venv it installs into)::

    .venv-hermes/bin/python -m benchmarks.harness_prefetch --harness hermes [--size 10000] [--queries 200]
    .venv/bin/python -m benchmarks.harness_prefetch --harness claude [--size 10000] [--queries 200]

One user's scope holds ``size`` synthetic memories (benchmarks/synthetic.py) plus 50 preferences, on a real
file with the packaged MiniLM (int8 ONNX) and regex NER. Hermes: what a turn waits for memory -
``MemoryManager.on_turn_start`` then ``prefetch_all``, exactly as ``AIAgent`` calls them - for agentbase and
for Hermes' bundled local provider ``holographic`` holding the same texts (its ``fact_store add``), query by
query in alternation so machine noise hits both alike. Claude: the UserPromptSubmit hook (prompt recall) and
the PreToolUse hook (memories of the file a tool names; a tenth of the memories carry a file) as the SDK
awaits them. Timings on this shared machine are noisy: compare within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agentbase_kernel import AgentBase

from .synthetic import memories, queries

SEED = 7


def _pct(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1),
            "max_ms": round(ordered[-1] * 1000, 1)}


def _load(db: AgentBase, size: int, *, files: bool = False) -> float:
    items = list(memories(size, SEED, user_id="alice"))
    for i, item in enumerate(items):
        if files and i % 10 == 0:
            item["metadata"] = {**item["metadata"], "claude_entities": [f"src/module_{i % 200}.py"]}
    prefs = [{"text": f"Alice prefers option {i} for the {w}", "user_id": "alice", "category": "preference"}
             for i, w in enumerate(["editor", "coffee", "seat", "font", "theme"] * 10)]
    started = time.perf_counter()
    with db.sync.bulk_load():
        for chunk in range(0, len(items), 1000):
            db.sync.add_memories(items[chunk:chunk + 1000])
        db.sync.add_memories(prefs)
    db.sync.wait_embedded()
    return time.perf_counter() - started


def bench_hermes(size: int, n_queries: int) -> dict[str, Any]:
    from agent.memory_manager import MemoryManager
    from plugins.memory.holographic import HolographicMemoryProvider

    from agentbase_adapters.hermes import AgentBaseMemoryProvider

    out: dict[str, Any] = {"harness": "hermes", "size": size + 50, "queries": n_queries}
    with tempfile.TemporaryDirectory() as tmp:
        db = AgentBase(Path(tmp) / "agentbase.db", ner="regex")
        out["agentbase_load_s"] = round(_load(db, size), 1)
        texts = [e.l2_full for e in db.sync.list(user_id="alice", limit=None)]
        ours = AgentBaseMemoryProvider(db, user_id="alice")
        theirs = HolographicMemoryProvider({"db_path": str(Path(tmp) / "holo.db")})
        managers = {}
        for name, provider in (("agentbase", ours), ("holographic", theirs)):
            manager = MemoryManager()
            manager.add_provider(provider)
            manager.initialize_all(session_id="bench", platform="cli", hermes_home=tmp, agent_context="primary")
            managers[name] = manager
        assert ours.wait_ready(300)
        started = time.perf_counter()
        # fact_store add rebuilds the category's HRR bank from every fact on each add (quadratic: ~1 s per add
        # at 10k here); the bank is a function of the facts, so it is rebuilt once, after the last add
        store = theirs._store
        rebuild, store._rebuild_bank = store._rebuild_bank, lambda category: None
        for text in texts:
            theirs.handle_tool_call("fact_store", {"action": "add", "content": text})
        store._rebuild_bank = rebuild
        rebuild("general")
        out["holographic_load_s"] = round(time.perf_counter() - started, 1)
        times: dict[str, list[float]] = {"agentbase": [], "holographic": []}
        injected: dict[str, int] = {"agentbase": 0, "holographic": 0}
        chars: dict[str, list[int]] = {"agentbase": [], "holographic": []}
        asked = queries(n_queries + 5, SEED)
        for i, query in enumerate(asked):
            order = ("agentbase", "holographic") if i % 2 == 0 else ("holographic", "agentbase")
            for name in order:
                manager = managers[name]
                started = time.perf_counter()
                manager.on_turn_start(i + 1, query)
                text = manager.prefetch_all(query)
                elapsed = time.perf_counter() - started
                if i >= 5:  # the first few warm caches
                    times[name].append(elapsed)
                    injected[name] += bool(text)
                    chars[name].append(len(text))
        for name in times:
            out[name] = {**_pct(times[name]), "turns_with_injection": injected[name],
                         "mean_chars_injected": round(statistics.mean(chars[name]))}
        out["agentbase_prefetch_wait_s"] = ours.config["prefetch_wait"]
        out["agentbase_waits_expired"] = ours.guard.stats.timed_out
        for manager in managers.values():
            manager.shutdown_all()
        db.sync.close()
    return out


def bench_claude(size: int, n_queries: int) -> dict[str, Any]:
    from agentbase_adapters.claude import AgentBaseMemory

    out: dict[str, Any] = {"harness": "claude", "size": size + 50, "queries": n_queries}
    with tempfile.TemporaryDirectory() as tmp:
        db = AgentBase(Path(tmp) / "agentbase.db", ner="regex")
        out["agentbase_load_s"] = round(_load(db, size, files=True), 1)
        memory = AgentBaseMemory(db, user_id="alice")
        assert memory.wait_ready(300)
        base = {"session_id": "bench", "transcript_path": "/tmp/bench.jsonl", "cwd": "/repo"}

        async def run() -> tuple[list[float], list[float], int, int]:
            prompt_t, tool_t, prompt_hits, tool_hits = [], [], 0, 0
            for i, query in enumerate(queries(n_queries + 5, SEED)):
                started = time.perf_counter()
                out1 = await memory.on_user_prompt({**base, "hook_event_name": "UserPromptSubmit", "prompt": query},
                                                   None, {"signal": None})
                middle = time.perf_counter()
                out2 = await memory.on_pre_tool_use({**base, "hook_event_name": "PreToolUse", "tool_name": "Edit",
                                                     "tool_use_id": f"t{i}", "tool_input": {
                                                         "file_path": f"/repo/src/module_{(i * 37) % 200}.py"}},
                                                    f"t{i}", {"signal": None})
                ended = time.perf_counter()
                if i >= 5:
                    prompt_t.append(middle - started)
                    tool_t.append(ended - middle)
                    prompt_hits += bool(out1)
                    tool_hits += bool(out2)
            return prompt_t, tool_t, prompt_hits, tool_hits

        prompt_t, tool_t, prompt_hits, tool_hits = asyncio.run(run())
        out["user_prompt_submit"] = {**_pct(prompt_t), "turns_with_injection": prompt_hits}
        out["pre_tool_use"] = {**_pct(tool_t), "calls_with_injection": tool_hits}
        out["prefetch_wait_s"] = memory.prefetch_wait
        out["waits_expired"] = memory.guard.stats.timed_out
        memory.close()
        db.sync.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--harness", choices=["hermes", "claude"], required=True)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    result = (bench_hermes if args.harness == "hermes" else bench_claude)(args.size, args.queries)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
