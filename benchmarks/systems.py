"""The systems compared on LoCoMo: agentbase (and its ablations), two plain baselines, Mem0 OSS.

Each system runs in its own process (``python -m benchmarks system NAME``), ingests the same
turns (one memory per turn, the photo caption included, scoped per conversation), answers the
same questions through ``benchmarks.locomo.evaluate`` (so every system is scored by one function),
and reports ingest rate, search latency, peak RSS and bytes on disk.

The baselines and Mem0 are wrapped in a small object with the kernel's ``find`` signature whose
hits carry ``entry.metadata["dia_id"]`` -- exactly what ``locomo.dia_ids`` reads.
"""

from __future__ import annotations

import re
import warnings
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

from . import locomo
from .common import ProjectionEmbedder, bar, peak_rss_bytes, tree_bytes

__all__ = ["SYSTEMS", "run_system"]


@dataclass(frozen=True)
class System:
    label: str
    kind: str  # "agentbase" | "baseline" | "peer"
    speed_label: str
    runner: Callable[..., dict[str, Any]]
    options: dict[str, Any] = field(default_factory=dict)


def _embedder(smoke: bool) -> Any:
    """The real MiniLM for every quality figure; the projection stand-in only in smoke tests.

    Every system gets the same embedder object (agentbase's default: MiniLM on onnxruntime, the
    same vectors as sentence-transformers), so the ratios measure the memory layers, not the model.
    """
    if smoke:
        return ProjectionEmbedder()
    from agentbase_kernel.text.embedders import get_embedder

    return get_embedder("minilm")


# -- agentbase -------------------------------------------------------------------------------------

def _run_agentbase(data: list[dict[str, Any]], workdir: Path, *, progress: bool, smoke: bool,
                   embedder: bool = True, ner: bool = True, facts: bool = True, dates: bool = True,
                   defer: bool = False, retrieval: dict[str, Any] | None = None) -> dict[str, Any]:
    from agentbase_kernel import Config, Kernel

    config = Config().with_(ingest={"ner": ner, "facts": facts, "dates": dates, "defer_embedding": defer},
                            retrieval=retrieval or {})
    path = workdir / "agentbase.db"
    ner_spec = ("regex" if smoke else "auto") if ner else None
    emb = _embedder(smoke) if embedder else None
    extra = ""
    with Kernel(path, embedder=emb, ner=ner_spec, config=config) as kernel:
        info = kernel.info()
        stats = locomo.ingest(kernel, data, progress)
        if defer:
            # the ingest rate is until add_messages returned; search waits for every vector
            started = time.perf_counter()
            kernel.wait_embedded()
            embedded_s = stats["seconds"] + time.perf_counter() - started
            extra = (f", deferred embedding: all vectors stored after {embedded_s:.1f} s "
                     f"({stats['turns'] / embedded_s:.1f} turns/s)")
        n_entries = _count_entries(kernel)
    # measured after close (the last connection checkpoints the WAL) and before any search writes a trace
    size = tree_bytes(path)
    with Kernel(path, embedder=emb, ner=ner_spec, config=config) as kernel:
        row = locomo.evaluate(kernel, data, stats["refs"], retrieval=config.retrieval, label="agentbase",
                              progress=progress)
    return {"ingest_turns": stats["turns"], "ingest_s": stats["seconds"], "rows": [row],
            "bytes": size, "stored_rows": n_entries,
            "engine": f"vectors={info['vector_backend'] if embedder else 'off'}, ner={info['ner_stage']}, "
                      f"embedder={info['embedder']}{extra}"}


def _count_entries(kernel: Any) -> int:
    with kernel.store.conns.read() as conn:
        return int(conn.execute("SELECT count(*) FROM entries").fetchone()[0])


# -- plain baselines -------------------------------------------------------------------------------

class _Hits(list):  # type: ignore[type-arg]
    """A list of hits shaped like ``FindResult`` for ``locomo.dia_ids``."""


def _hit(dia_id: str) -> Any:
    return SimpleNamespace(provenance=[], entry=SimpleNamespace(metadata={"dia_id": dia_id}))


class _Fts5Baseline:
    """What any user could write in ten lines: one FTS5 table, BM25, OR of the query's words."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path)
        self.conn.execute("CREATE VIRTUAL TABLE turns USING fts5(text, sample UNINDEXED, dia_id UNINDEXED)")

    def add(self, rows: list[tuple[str, str, str]]) -> None:
        with self.conn:
            self.conn.executemany("INSERT INTO turns (text, sample, dia_id) VALUES (?, ?, ?)", rows)

    def find(self, query: str, *, top_k: int, user_id: str, **_: Any) -> _Hits:
        words = re.findall(r"\w+", query.casefold())
        if not words:
            return _Hits()
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        rows = self.conn.execute("SELECT dia_id FROM turns WHERE turns MATCH ? AND sample = ? "
                                 "ORDER BY bm25(turns) LIMIT ?", (match, user_id, top_k)).fetchall()
        return _Hits(_hit(r[0]) for r in rows)


class _DenseBaseline:
    """Plain dense retrieval: MiniLM vectors in one numpy matrix per conversation, cosine, top k."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.vectors: dict[str, list[np.ndarray]] = {}
        self.ids: dict[str, list[str]] = {}

    def add(self, sample: str, texts: list[str], ids: list[str]) -> None:
        self.vectors.setdefault(sample, []).append(self.embedder.embed_many(texts))
        self.ids.setdefault(sample, []).extend(ids)

    def freeze(self) -> None:
        self.matrix = {s: np.vstack(v) for s, v in self.vectors.items()}

    def find(self, query: str, *, top_k: int, user_id: str, **_: Any) -> _Hits:
        sims = self.matrix[user_id] @ self.embedder.embed(query)
        order = np.argsort(-sims, kind="stable")[:top_k]
        return _Hits(_hit(self.ids[user_id][i]) for i in order)


def _by_session(data: list[dict[str, Any]]) -> list[tuple[str, int, list[dict[str, Any]]]]:
    return [(conv["sample_id"], n, [t for t in turns if locomo.turn_text(t)])
            for conv in data for n, _, turns in locomo.sessions_of(conv["conversation"])]


def _timed_ingest(data: list[dict[str, Any]], add: Callable[[str, list[dict[str, Any]]], None], label: str,
                  progress: bool, finish: Callable[[], None] | None = None) -> tuple[float, int]:
    """Hand each session's turns to ``add(sample, turns)`` (then ``finish()``): seconds taken, turns given."""
    sessions = _by_session(data)
    total = sum(len(t) for _, _, t in sessions)
    pbar = bar(total, f"ingest {label}", progress)
    started = time.perf_counter()
    for sample, _, turns in sessions:
        if turns:
            add(sample, turns)
        pbar.update(len(turns))
    if finish is not None:
        finish()
    seconds = time.perf_counter() - started
    pbar.close()
    return seconds, total


def _run_fts5(data: list[dict[str, Any]], workdir: Path, *, progress: bool, smoke: bool) -> dict[str, Any]:
    path = workdir / "fts5.db"
    base = _Fts5Baseline(path)
    seconds, n = _timed_ingest(
        data, lambda sample, turns: base.add([(locomo.turn_text(t), sample, t["dia_id"]) for t in turns]),
        "fts5", progress)
    row = locomo.evaluate(base, data, locomo.reference_times(data), label="fts5", progress=progress)
    base.conn.close()
    return {"ingest_turns": n, "ingest_s": seconds, "rows": [row], "bytes": tree_bytes(path), "stored_rows": n,
            "engine": f"sqlite {sqlite3.sqlite_version} FTS5, unicode61 tokenizer, bm25()"}


def _run_dense(data: list[dict[str, Any]], workdir: Path, *, progress: bool, smoke: bool) -> dict[str, Any]:
    embedder = _embedder(smoke)
    base = _DenseBaseline(embedder)
    seconds, n = _timed_ingest(
        data, lambda sample, turns: base.add(sample, [locomo.turn_text(t) for t in turns], [t["dia_id"] for t in turns]),
        "dense", progress, finish=base.freeze)
    row = locomo.evaluate(base, data, locomo.reference_times(data), label="dense", progress=progress)
    # what a user would persist: the float32 matrix plus the texts and ids
    path = workdir / "dense.npz"
    texts = np.array([locomo.turn_text(t) for _, _, turns in _by_session(data) for t in turns])
    np.savez(path, texts=texts, **{f"m_{s}": m for s, m in base.matrix.items()})
    return {"ingest_turns": n, "ingest_s": seconds, "rows": [row], "bytes": path.stat().st_size, "stored_rows": n,
            "engine": f"numpy {np.__version__} float32 matrix, embedder={getattr(embedder, 'name', '?')}"}


# -- LangGraph's own store --------------------------------------------------------------------------

class _LangGraphPeer:
    """LangGraph's ``InMemoryStore`` with semantic search: what ``graph.compile(store=...)`` users have
    before they pick a persistent store. Same MiniLM object; one batched ``PutOp`` list per session."""

    def __init__(self, embedder: Any) -> None:
        from langgraph.store.memory import InMemoryStore

        self.store = InMemoryStore(index={"dims": embedder.dim, "fields": ["text"],
                                          "embed": lambda texts: embedder.embed_batch(list(texts)).tolist()})

    def add(self, sample: str, turns: list[dict[str, Any]]) -> None:
        from langgraph.store.base import PutOp

        self.store.batch([PutOp(("locomo", sample), t["dia_id"], {"text": locomo.turn_text(t)}) for t in turns])

    def find(self, query: str, *, top_k: int, user_id: str, **_: Any) -> _Hits:
        return _Hits(_hit(item.key) for item in self.store.search(("locomo", user_id), query=query, limit=top_k))


def _run_langgraph(data: list[dict[str, Any]], workdir: Path, *, progress: bool, smoke: bool) -> dict[str, Any]:
    import importlib.metadata

    peer = _LangGraphPeer(_embedder(smoke))
    seconds, n = _timed_ingest(data, peer.add, "langgraph", progress)
    row = locomo.evaluate(peer, data, locomo.reference_times(data), label="langgraph", progress=progress)
    return {"ingest_turns": n, "ingest_s": seconds, "rows": [row], "bytes": 0, "stored_rows": n,
            "engine": f"langgraph {importlib.metadata.version('langgraph')} InMemoryStore, index on 'text', "
                      "the same MiniLM object; in RAM only (nothing on disk: bytes 0)"}


# -- Mem0 OSS --------------------------------------------------------------------------------------

class _Mem0Embedder:
    """Mem0's embedder interface over our MiniLM, per framework-contracts.md A.6."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def embed(self, text: str, memory_action: Any = None) -> list[float]:
        return self.embedder.embed(text).tolist()

    def embed_batch(self, texts: list[str], memory_action: Any = None) -> list[list[float]]:
        return self.embedder.embed_batch(list(texts)).tolist()


class _Mem0Peer:
    """The real ``mem0.Memory``, offline: embedded Qdrant on disk, MiniLM, ``infer=False``.

    ``embedder=None`` keeps Mem0's own embedder: its ``huggingface`` provider (sentence-transformers
    on torch) pointed at the same bundled MiniLM folder -- what a Mem0 user configures. Otherwise
    the given object replaces it (framework-contracts.md A.6), so both layers share one runtime.
    """

    def __init__(self, workdir: Path, embedder: Any, dim: int = 384) -> None:
        from mem0 import Memory
        from qdrant_client import QdrantClient

        self.store_dir = workdir / "mem0"
        self.store_dir.mkdir()
        self.client = QdrantClient(path=str(self.store_dir / "qdrant"))
        # local Qdrant warns that payload indexes do nothing without a server: expected here
        warnings.filterwarnings("ignore", message="Payload indexes have no effect", category=UserWarning)
        config = {
            "vector_store": {"provider": "qdrant", "config": {"collection_name": "bench", "client": self.client,
                                                              "embedding_model_dims": dim}},
            "llm": {"provider": "openai", "config": {"api_key": "sk-offline-benchmark"}},
            "embedder": {"provider": "openai", "config": {"api_key": "sk-offline-benchmark", "embedding_dims": dim}},
            "history_db_path": str(self.store_dir / "history.db"),
        }
        if embedder is None:
            from agentbase_kernel.text.embedders import bundled_minilm_path

            config["embedder"] = {"provider": "huggingface",
                                  "config": {"model": str(bundled_minilm_path()), "embedding_dims": dim}}
        self.memory = Memory.from_config(config)
        if embedder is not None:
            self.memory.embedding_model = _Mem0Embedder(embedder)
        self.dia: dict[str, str] = {}

    def add(self, sample: str, turns: list[dict[str, Any]]) -> None:
        messages = [{"role": "user", "content": locomo.turn_text(t), "name": t.get("speaker")} for t in turns]
        out = self.memory.add(messages, user_id=sample, infer=False)
        # infer=False adds one memory per message, in order: map each id back to its turn
        for result, turn in zip(out["results"], turns, strict=True):
            self.dia[result["id"]] = turn["dia_id"]

    def find(self, query: str, *, top_k: int, user_id: str, **_: Any) -> _Hits:
        out = self.memory.search(query, filters={"user_id": user_id}, top_k=top_k, threshold=0.0)
        return _Hits(_hit(self.dia[r["id"]]) for r in out["results"] if r["id"] in self.dia)


def _mem0_spacy() -> str:
    """Hand Mem0 the installed English spaCy pipeline, so it never tries to download one.

    Mem0 uses spaCy for entity boosts and BM25 lemmas and, when ``en_core_web_sm`` is missing under
    that exact name, calls ``spacy.cli.download`` (network). The same pipeline agentbase uses is
    loaded here under Mem0's two module globals, which is what a user with the model installed gets.
    """
    import spacy
    from mem0.utils import spacy_models

    from agentbase_kernel.text.ner import EN_FALLBACKS

    for name in EN_FALLBACKS:
        if spacy.util.is_package(name):
            spacy_models._nlp_full = spacy.load(name)
            spacy_models._nlp_lemma = spacy.load(name, disable=["ner", "parser"])
            return name
    spacy_models._load_failed_full = spacy_models._load_failed_lemma = True
    return "none"


def _run_mem0(data: list[dict[str, Any]], workdir: Path, *, progress: bool, smoke: bool,
              own_embedder: bool = False) -> dict[str, Any]:
    from .common import offline_env

    offline_env()
    spacy_name = _mem0_spacy()
    # Mem0's own embedder is the real MiniLM on torch, in smoke runs too (their few turns take seconds)
    peer = _Mem0Peer(workdir, None if own_embedder else _embedder(smoke))
    embedder_note = ("its own huggingface embedder (sentence-transformers on torch) on the bundled MiniLM"
                     if own_embedder else "agentbase's MiniLM object (onnxruntime) in place of its embedder")
    seconds, _ = _timed_ingest(data, peer.add, "mem0", progress)
    row = locomo.evaluate(peer, data, locomo.reference_times(data), label="mem0", progress=progress)
    peer.memory.close()
    peer.client.close()
    import mem0

    return {"ingest_turns": len(peer.dia), "ingest_s": seconds, "rows": [row], "bytes": tree_bytes(peer.store_dir),
            "stored_rows": len(peer.dia),
            "engine": f"mem0ai {getattr(mem0, '__version__', '?')} Memory, infer=False, embedded Qdrant on disk, "
                      f"{embedder_note}, spaCy {spacy_name} for its entity boosts, no fastembed (so its BM25 leg is "
                      "off), search threshold=0"}


SYSTEMS: dict[str, System] = {
    "agentbase": System("agentbase (default)", "agentbase", "NER + facts + embeddings (batched per session)",
                        _run_agentbase),
    "agentbase-deferred": System("agentbase, deferred embedding", "agentbase",
                                 "NER + facts; embeddings on a background thread (rate until add_messages returns)",
                                 _run_agentbase, {"defer": True}),
    "agentbase-no-vectors": System("agentbase, vectors off", "agentbase", "NER + facts, no embeddings",
                                   _run_agentbase, {"embedder": False}),
    "agentbase-no-ner": System("agentbase, NER off", "agentbase", "facts + embeddings, no NER",
                               _run_agentbase, {"ner": False, "retrieval": {"ner_boost": False}}),
    "agentbase-store": System("agentbase, store only", "agentbase", "store only (no NER, facts, dates, vectors)",
                              _run_agentbase, {"embedder": False, "ner": False, "facts": False, "dates": False}),
    "fts5": System("plain FTS5 BM25", "baseline", "FTS5 insert", _run_fts5),
    "dense": System("plain dense MiniLM cosine", "baseline", "MiniLM embeddings (batched per session)", _run_dense),
    "langgraph": System("LangGraph InMemoryStore (semantic search)", "peer",
                        "MiniLM embeddings (one batch per session), in RAM", _run_langgraph),
    "mem0": System("Mem0 OSS (infer=False)", "peer",
                   "embeddings one by one (Mem0's infer=False path), agentbase's onnxruntime MiniLM", _run_mem0),
    "mem0-own-embedder": System("Mem0 OSS (infer=False), its own embedder", "peer",
                                "embeddings one by one, Mem0's huggingface provider (torch) on the same MiniLM",
                                _run_mem0, {"own_embedder": True}),
}


def run_system(name: str, data: list[dict[str, Any]], workdir: Path, *, progress: bool = True,
               smoke: bool = False) -> dict[str, Any]:
    """Ingest, evaluate and measure one system in this process."""
    system = SYSTEMS[name]
    started = time.perf_counter()
    out = system.runner(data, workdir, progress=progress, smoke=smoke, **system.options)
    row = out["rows"][0]
    row["label"] = system.label
    turns = out["ingest_turns"]
    return {
        "system": name, "label": system.label, "kind": system.kind, "speed_label": system.speed_label,
        "engine": out["engine"], "turns": turns, "ingest_s": round(out["ingest_s"], 3),
        "ingest_per_s": round(turns / out["ingest_s"], 2) if out["ingest_s"] else None,
        "search_p50_ms": row["p50_ms"], "search_p95_ms": row["p95_ms"],
        "bytes": out["bytes"], "bytes_per_memory": round(out["bytes"] / max(turns, 1), 1),
        "stored_rows": out["stored_rows"], "peak_rss": peak_rss_bytes(), "rows": out["rows"],
        "wall_s": round(time.perf_counter() - started, 1), "smoke": smoke,
    }

