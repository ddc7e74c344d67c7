"""What anyone could write in a few lines, on the same memory text: FTS5 BM25 and dense MiniLM cosine."""

from __future__ import annotations

import re
import sqlite3
from datetime import datetime
from pathlib import Path

import numpy as np

from .common import tree_bytes
from .locomo import Turn

__all__ = ["DenseBaseline", "Fts5Baseline"]


class Fts5Baseline:
    """One FTS5 table, BM25, OR of the query's words; one transaction per session."""

    def __init__(self, workdir: Path, smoke: bool) -> None:
        self.path = workdir / "fts5.db"
        self.conn = sqlite3.connect(self.path)
        self.conn.execute("CREATE VIRTUAL TABLE turns USING fts5(text, sample UNINDEXED, dia_id UNINDEXED)")
        self.engine = f"sqlite {sqlite3.sqlite_version} FTS5, unicode61 tokenizer, bm25()"
        self.rows = 0

    def warm(self) -> None:
        pass

    def add(self, turns: list[Turn]) -> None:
        with self.conn:
            self.conn.executemany("INSERT INTO turns (text, sample, dia_id) VALUES (?, ?, ?)",
                                  [(t.memory, t.conversation, t.dia_id) for t in turns])
        self.rows += len(turns)

    def finish(self) -> None:
        pass

    def search(self, question: str, sample: str, reference: datetime | None, k: int) -> list[list[str]]:
        words = re.findall(r"\w+", question.casefold())
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        rows = self.conn.execute("SELECT dia_id FROM turns WHERE turns MATCH ? AND sample = ? "
                                 "ORDER BY bm25(turns) LIMIT ?", (match, sample, k)).fetchall()
        return [[r[0]] for r in rows]

    def footprint(self) -> tuple[int, int]:
        return tree_bytes(self.path), self.rows

    def close(self) -> None:
        self.conn.close()


class DenseBaseline:
    """An embedder's vectors (batched per session) in one numpy matrix per conversation, cosine, top k.

    The ingest rate of this row is the embedder's own batch throughput on the set's turns.
    """

    def __init__(self, workdir: Path, smoke: bool, *, embedder: str = "minilm-torch") -> None:
        from .embedders import encoder

        self.encoder = encoder(embedder, smoke)
        # recorded with the row (the embedder table reads it)
        self.extra: dict[str, object] = {"embedder": embedder}
        if not smoke:
            from .embedders import weights_bytes

            self.extra["weights_bytes"] = weights_bytes(embedder)
        self.path = workdir / "dense.npz"
        self.vectors: dict[str, list[np.ndarray]] = {}
        self.ids: dict[str, list[str]] = {}
        self.texts: list[str] = []
        self.engine = f"numpy {np.__version__} float32 matrix, {self.encoder.name}"

    def warm(self) -> None:
        self.encoder.embed("warm up the model")

    def add(self, turns: list[Turn]) -> None:
        sample = turns[0].conversation
        self.vectors.setdefault(sample, []).append(self.encoder.embed_batch([t.memory for t in turns]))
        self.ids.setdefault(sample, []).extend(t.dia_id for t in turns)
        self.texts.extend(t.memory for t in turns)

    def finish(self) -> None:
        self.matrix = {s: np.vstack(v) for s, v in self.vectors.items()}
        # what a user would persist: the float32 matrices plus the texts
        np.savez(self.path, texts=np.array(self.texts), **{f"m_{s}": m for s, m in self.matrix.items()})

    def search(self, question: str, sample: str, reference: datetime | None, k: int) -> list[list[str]]:
        sims = self.matrix[sample] @ self.encoder.embed(question)
        order = np.argsort(-sims, kind="stable")[:k]
        return [[self.ids[sample][i]] for i in order]

    def footprint(self) -> tuple[int, int]:
        return self.path.stat().st_size, len(self.texts)

    def close(self) -> None:
        pass
