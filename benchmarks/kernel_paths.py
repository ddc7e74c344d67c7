"""agentbase through the kernel's own API: the session path, the same text without sessions, and ablations.

Only public names are used (``from agentbase_kernel import ...``, ``Kernel`` methods, the hits ``find``
returns), so these rows measure what a user of the kernel gets.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from .common import ProjectionEmbedder, tree_bytes
from .locomo import Turn

__all__ = ["KernelPath", "dia_ids", "kernel_search", "session_ingest"]


def session_ingest(kernel: Any, turns: list[Turn]) -> None:
    """One session's turns in one ``add_messages``: speaker as ``name``, the session date as ``created_at``."""
    first = turns[0]
    kernel.create_session(first.session_id, user_id=first.conversation, metadata={"date": first.date})
    kernel.add_messages(first.session_id, [
        {"role": t.role, "content": t.memory, "name": t.speaker, "created_at": t.when,
         "metadata": {"dia_id": t.dia_id}} for t in turns])


def dia_ids(hit: Any) -> list[str]:
    """The turns a hit stands for: its provenance (facts and summaries cite turns), else its own metadata."""
    ids = [p.metadata.get("dia_id") for p in hit.provenance if p.metadata.get("dia_id")]
    if not ids and hit.entry.metadata.get("dia_id"):
        ids = [hit.entry.metadata["dia_id"]]
    return ids


def kernel_search(kernel: Any, retrieval: Any = None) -> Any:
    """``find`` in the question's conversation, with its reference time; ``retrieval`` overrides the config."""

    def search(question: str, sample: str, reference: datetime | None, k: int) -> list[list[str]]:
        found = kernel.find(question, top_k=k, user_id=sample, reference_time=reference, config=retrieval)
        return [dia_ids(hit) for hit in found]

    return search


class KernelPath:
    """A ``Kernel`` fed by the session API (``sessions=True``) or one ``add_memory`` per turn."""

    def __init__(self, workdir: Path, smoke: bool, *, sessions: bool = True, embedder: bool | str = True,
                 ner: bool = True, facts: bool = True, dates: bool = True, defer: bool = False,
                 retrieval: dict[str, Any] | None = None) -> None:
        from agentbase_kernel import Config, Kernel

        self.config = Config().with_(ingest={"ner": ner, "facts": facts, "dates": dates, "defer_embedding": defer},
                                     retrieval=retrieval or {})
        self.path = workdir / "agentbase.db"
        from .embedders import kernel_embedder

        # embedder: True for the default MiniLM, a key of benchmarks.embedders.EMBEDDERS for another
        emb: Any = (ProjectionEmbedder() if smoke else "minilm") if embedder is True else (
            kernel_embedder(embedder, smoke) if embedder else None)
        self.kernel = Kernel(self.path, embedder=emb, ner=("regex" if smoke else "auto") if ner else None,
                             config=self.config)
        self.sessions = sessions
        self.defer = defer
        self.search = kernel_search(self.kernel, self.config.retrieval)

    def warm(self) -> None:
        self.kernel.initialize()
        self.kernel.find("warm up the model", user_id="warm-up")
        info = self.kernel.info()
        self.engine = (f"vectors={info['vector_backend'] if info['embedder'] else 'off'}, ner={info['ner_stage']}, "
                       f"embedder={info['embedder']}" + (", embeddings deferred to a background thread" if self.defer
                                                         else ""))

    def add(self, turns: list[Turn]) -> None:
        if self.sessions:
            session_ingest(self.kernel, turns)
            return
        for t in turns:
            self.kernel.add_memory(t.memory, user_id=t.conversation, actor=t.speaker, role=t.role, created_at=t.when,
                                   metadata={"dia_id": t.dia_id})

    def finish(self) -> None:
        if self.defer:  # the rate counts until every vector is stored
            self.kernel.wait_embedded()

    def footprint(self) -> tuple[int, int]:
        return tree_bytes(self.path), self.kernel.count()

    def close(self) -> None:
        self.kernel.close()
