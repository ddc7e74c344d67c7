"""BM25's per-row part of one term in SQL, shared by the exact and the common-word rankings."""

from __future__ import annotations

from typing import Any

__all__ = ["K1", "B", "part_from_entries"]

K1, B = 1.2, 0.75  # FTS5's defaults, as SqliteStore


def part_from_entries(lexemes: tuple[str, ...] | list[str], avgdl: float) -> tuple[str, list[Any]]:
    """``"<part> AS part FROM entries e ..."`` and its parameters: the term's tf part of row ``e``
    before the IDF, from the stored term counts (``fts_tf``) and length (``fts_len``); a phrase's
    frequency is its words' mean (FTS5 counts the phrase's hits)."""
    tf = "(" + " + ".join(["coalesce((e.fts_tf ->> ?)::float8, 0)"] * len(lexemes)) + f") / {len(lexemes)}"
    sql = ("(t.tf * ?) / (t.tf + ? * (1 - ? + ? * e.fts_len / ?)) AS part "
           f"FROM entries e CROSS JOIN LATERAL (SELECT {tf} AS tf) t")
    return sql, [K1 + 1, K1, B, B, avgdl, *lexemes]
