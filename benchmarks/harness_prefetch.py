"""Per-turn recall latency of the harness adapters on a 10k-memory scope (p50/p95), paired with the harness's own.

Usage (from the repo root; each harness in the venv it installs into)::

    .venv-hermes/bin/python -m benchmarks.harness_prefetch --harness hermes [--size 10000] [--queries 200]
    .venv/bin/python -m benchmarks.harness_prefetch --harness claude [--size 10000] [--queries 200]
    .venv/bin/python -m benchmarks.harness_prefetch --harness deepagents
    .venv-crewai/bin/python -m benchmarks.harness_prefetch --harness crewai
    .venv/bin/python -m benchmarks.harness_prefetch --harness pydantic_ai

One user's scope holds ``size`` synthetic memories (benchmarks/synthetic.py) plus 50 preferences, on a real
file with the packaged MiniLM (int8 ONNX) and regex NER. Hermes: what a turn waits for memory -
``MemoryManager.on_turn_start`` then ``prefetch_all``, exactly as ``AIAgent`` calls them - for agentbase and
for Hermes' bundled local provider ``holographic`` holding the same texts (its ``fact_store add``), query by
query in alternation so machine noise hits both alike. Claude: the UserPromptSubmit hook (prompt recall) and
the PreToolUse hook (memories of the file a tool names; a tenth of the memories carry a file) as the SDK
awaits them. The file- and record-shaped harnesses get the same texts in their own shape, their default store
beside ours, query by query in rotation:

- deepagents: one memory per file under the ``/memories/`` route, on ``StateBackend`` (in graph state, timed
  inside a LangGraph node), ``StoreBackend`` over LangGraph's ``InMemoryStore`` and ``AgentBaseBackend``; per
  turn what ``MemoryMiddleware`` does before the agent (``download_files(["/AGENTS.md"])``) and the agent's
  ``grep`` of a word of the question over the route.
- CrewAI: one ``MemoryRecord`` per memory, on ``LanceDBStorage`` and ``AgentBaseStorage`` (both on
  ``storage.embedder``, vectors computed once for both); per turn ``Memory.recall(question, depth="shallow")``.
- Pydantic AI harness: one notebook file per memory beside ``MEMORY.md``, on ``InMemoryStore`` (the ``Memory``
  default), ``SqliteMemoryStore`` and ``AgentBaseMemoryStore``; per turn the capability's injection read
  (``MEMORY.md`` + the bounded listing) and its ``search_memory`` tool's ``store.search`` with the
  capability's default bounds.

Timings on this shared machine are noisy: compare within one run.
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


def _rotate(names: list[str], i: int) -> list[str]:
    return names[i % len(names):] + names[:i % len(names)]


def _word(query: str) -> str:
    """The word of a question a model would grep for: its longest."""
    return max((w.strip("?,.!'") for w in query.split()), key=len)


def _texts(size: int) -> list[str]:
    return [m["text"] for m in memories(size, SEED, user_id="alice")]


def bench_deepagents(size: int, n_queries: int) -> dict[str, Any]:
    from deepagents.backends import StateBackend, StoreBackend
    from deepagents.backends.utils import create_file_data
    from deepagents.middleware.filesystem import FilesystemState
    from langgraph.graph import END, START, StateGraph
    from langgraph.store.memory import InMemoryStore

    from agentbase_adapters.deepagents import AgentBaseBackend

    texts = _texts(size)
    files = [(f"/notes/m{i:05d}.md", text + "\n") for i, text in enumerate(texts)]
    files.append(("/AGENTS.md", "".join(f"- Alice prefers option {i} for the {w}\n" for i, w in
                                        enumerate(["editor", "coffee", "seat", "font", "theme"] * 10))))
    out: dict[str, Any] = {"harness": "deepagents", "size": size, "queries": n_queries}
    with tempfile.TemporaryDirectory() as tmp:
        db = AgentBase(Path(tmp) / "agentbase.db", ner="regex")
        ours = AgentBaseBackend(db, user_id="alice")
        started = time.perf_counter()
        for chunk in range(0, len(files), 500):
            ours.upload_files([(path, text.encode()) for path, text in files[chunk:chunk + 500]])
        ours.flush()
        out["agentbase_load_s"] = round(time.perf_counter() - started, 1)
        store = StoreBackend(store=InMemoryStore(), namespace=lambda _rt: ("memories",))
        for chunk in range(0, len(files), 500):
            store.upload_files([(path, text.encode()) for path, text in files[chunk:chunk + 500]])
        state_files = {path: create_file_data(text) for path, text in files}
        asked = queries(n_queries + 5, SEED)
        names = ["agentbase", "StateBackend", "StoreBackend"]
        times: dict[str, dict[str, list[float]]] = {n: {"inject": [], "grep": []} for n in names}
        hits: dict[str, int] = dict.fromkeys(names, 0)

        def node(state: FilesystemState) -> dict[str, Any]:
            backends = {"agentbase": ours, "StateBackend": StateBackend(), "StoreBackend": store}
            for i, query in enumerate(asked):
                for name in _rotate(names, i):
                    backend = backends[name]
                    t0 = time.perf_counter()
                    injected = backend.download_files(["/AGENTS.md"])
                    t1 = time.perf_counter()
                    found = backend.grep(_word(query), path="/")
                    t2 = time.perf_counter()
                    assert injected[0].error is None and found.error is None, (name, injected, found)
                    if i >= 5:
                        times[name]["inject"].append(t1 - t0)
                        times[name]["grep"].append(t2 - t1)
                        hits[name] += bool(found.matches)
            return {}

        graph = StateGraph(FilesystemState)
        graph.add_node("turns", node)
        graph.add_edge(START, "turns")
        graph.add_edge("turns", END)
        graph.compile().invoke({"messages": [], "files": state_files})
        for name in names:
            out[name] = {"memory_middleware_download": _pct(times[name]["inject"]),
                         "grep": {**_pct(times[name]["grep"]), "greps_with_matches": hits[name]}}
        ours.close()
        db.sync.close()
    return out


def bench_crewai(size: int, n_queries: int) -> dict[str, Any]:
    import os

    for flag in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED", "CREWAI_DISABLE_VERSION_CHECK"):
        os.environ.setdefault(flag, "true")
    from crewai.memory.storage.lancedb_storage import LanceDBStorage
    from crewai.memory.types import MemoryRecord
    from crewai.memory.unified_memory import Memory

    from agentbase_adapters.crewai import AgentBaseStorage

    texts = _texts(size)
    out: dict[str, Any] = {"harness": "crewai", "size": size, "queries": n_queries}
    with tempfile.TemporaryDirectory() as tmp:
        db = AgentBase(Path(tmp) / "agentbase.db", ner="regex")
        ours = AgentBaseStorage(db, user_id="alice")
        started = time.perf_counter()
        vectors = ours.embedder(texts)
        out["embedding_s"] = round(time.perf_counter() - started, 1)
        records = [MemoryRecord(content=t, scope="/user/alice", categories=["synthetic"], embedding=v)
                   for t, v in zip(texts, vectors)]
        lance = LanceDBStorage(path=Path(tmp) / "lance")
        for name, storage in (("agentbase", ours), ("LanceDBStorage", lance)):
            started = time.perf_counter()
            for chunk in range(0, len(records), 500):
                storage.save([r.model_copy() for r in records[chunk:chunk + 500]])
            if storage is ours:
                ours.flush()
            out[f"{name}_load_s"] = round(time.perf_counter() - started, 1)
        mems = {name: Memory(storage=storage, embedder=ours.embedder, llm="gpt-4o-mini")
                for name, storage in (("agentbase", ours), ("LanceDBStorage", lance))}
        names = list(mems)
        times: dict[str, list[float]] = {n: [] for n in names}
        hits: dict[str, int] = dict.fromkeys(names, 0)
        for i, query in enumerate(queries(n_queries + 5, SEED)):
            for name in _rotate(names, i):
                t0 = time.perf_counter()
                found = mems[name].recall(query, depth="shallow", limit=10)
                if i >= 5:
                    times[name].append(time.perf_counter() - t0)
                    hits[name] += bool(found)
        for name in names:
            out[name] = {**_pct(times[name]), "recalls_with_results": hits[name]}
        for memory in mems.values():
            memory.close()
        ours.close()
        db.sync.close()
    return out


def bench_pydantic_ai(size: int, n_queries: int) -> dict[str, Any]:
    from pydantic_ai_harness.memory import InMemoryStore, SqliteMemoryStore
    from pydantic_ai_harness.memory._render import injection_listing_limit, list_subfiles

    from agentbase_adapters.pydantic_ai import AgentBaseMemoryStore

    texts = _texts(size)
    notebook = "".join(f"- Alice prefers option {i} for the {w}\n" for i, w in
                       enumerate(["editor", "coffee", "seat", "font", "theme"] * 10))
    files = [("alice/main/MEMORY.md", notebook)] + [(f"alice/main/note-{i:05d}.md", t + "\n")
                                                    for i, t in enumerate(texts)]
    out: dict[str, Any] = {"harness": "pydantic_ai", "size": size, "queries": n_queries}
    # the capability's defaults (Memory(): max_tokens 2,000, max_memory_size 65,536, search 10 / 4,000 / 1,000)
    listing, bounds = injection_listing_limit(2_000), {"limit": 10, "max_files": 1_000, "max_chars": 4_000,
                                                       "max_file_chars": 65_536}
    with tempfile.TemporaryDirectory() as tmp:
        db = AgentBase(Path(tmp) / "agentbase.db", ner="regex")
        stores: dict[str, Any] = {"agentbase": AgentBaseMemoryStore(db), "InMemoryStore": InMemoryStore(),
                                  "SqliteMemoryStore": SqliteMemoryStore(database=Path(tmp) / "harness.db")}
        names = list(stores)
        times: dict[str, dict[str, list[float]]] = {n: {"inject": [], "search": []} for n in names}
        hits: dict[str, int] = dict.fromkeys(names, 0)
        scanned: dict[str, list[int]] = {n: [] for n in names}

        async def run() -> None:
            for name, store in stores.items():
                started = time.perf_counter()
                for path, text in files:
                    await store.write(path, text, expected_version=None)
                if name == "agentbase":
                    await asyncio.to_thread(store.flush)
                out[f"{name}_load_s"] = round(time.perf_counter() - started, 1)
            for i, query in enumerate(queries(n_queries + 5, SEED)):
                for name in _rotate(names, i):
                    store = stores[name]
                    t0 = time.perf_counter()
                    main = await store.read("alice/main/MEMORY.md", max_chars=65_536)
                    await list_subfiles(store, "alice/main", limit=listing)
                    t1 = time.perf_counter()
                    found = await store.search("alice/main/", query, **bounds)
                    t2 = time.perf_counter()
                    assert main is not None
                    if i >= 5:
                        times[name]["inject"].append(t1 - t0)
                        times[name]["search"].append(t2 - t1)
                        hits[name] += bool(found.matches)
                        scanned[name].append(found.scanned)

        asyncio.run(run())
        for name in names:
            out[name] = {"injection": _pct(times[name]["inject"]),
                         "search": {**_pct(times[name]["search"]), "searches_with_matches": hits[name],
                                    "files_scanned_p50": statistics.median(scanned[name])}}
        stores["agentbase"].close()
        db.sync.close()
    return out


BENCHES = {"hermes": bench_hermes, "claude": bench_claude, "deepagents": bench_deepagents, "crewai": bench_crewai,
           "pydantic_ai": bench_pydantic_ai}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--harness", choices=sorted(BENCHES), required=True)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    result = BENCHES[args.harness](args.size, args.queries)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
