"""Hostile inputs shared by the reliability tests: FTS5 syntax, SQL injection, broken Unicode, sizes.

Every list here is data, not a test; ``tests/reliability/test_bad_input.py`` drives them through each
public entry point and ``benchmarks/stress.py`` does the same with more examples.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# `benchmarks/stress.py` raises this; the default run stays well under a minute per file
EXAMPLES = int(os.environ.get("AGENTBASE_RELIABILITY_EXAMPLES", "10"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
TALLY: Counter[str] = Counter()  # inputs tried, writes checked, kills survived: written out by conftest.py

FTS5_SYNTAX = [
    '"', '""', '"unbalanced', "*", "tea*", "NEAR(", "NEAR(a b, 2)", "a NEAR b", "NEAR/2", "-", "-tea", ":",
    "col:tea", "search_text:tea", "^", "^tea", "(", ")", "(((", "a) OR (b", "AND", "OR", "NOT", "a AND",
    "OR b", "NOT tea", "AND OR NOT", "+", "{a b}: c", "[x]", "entries_fts", "rank", "MATCH", "~",
]
SQL_INJECTION = [
    "'; DROP TABLE entries; --", "' OR '1'='1", "\" OR 1=1 --", "1; DELETE FROM entries", "x') UNION SELECT * FROM entries --",
    "$.metadata", "json_extract(metadata, '$')", "*/ SELECT 1 /*", "%", "_", "\\", "?", "?1", ":name", "@p", "$p",
]
UNICODE = [
    "\x00", "a\x00b", "\ud800", "a\udfffb", "\udbff\udfff", "🙂", "👨‍👩‍👧", "שלום עולם", "مرحبا بالعالم", "\u202eevil",
    "\u200f", "\ufeff", "中文字符", "ﬁ", "Ⅻ", "e\u0301", "\x1b[31m", "\r\n",
]
BLANK = ["", " ", "\n\t ", "\u3000", "\u00a0"]
ALL_STRINGS = FTS5_SYNTAX + SQL_INJECTION + UNICODE + BLANK

# text() without an alphabet never yields surrogates; this one does
_any_char = st.characters(codec=None, categories=None)
hostile = st.one_of(
    st.sampled_from(ALL_STRINGS),
    st.lists(st.sampled_from(ALL_STRINGS + ["tea", "Alice", "Paris", "likes"]), min_size=1, max_size=6).map(" ".join),
    st.text(alphabet=_any_char, max_size=40),
)
WRONG_TYPES: list[Any] = [None, 0, -1, 1.5, float("nan"), True, b"bytes", ["list"], {"a": 1}, object(), 10**30]
wrong_type = st.sampled_from(WRONG_TYPES)
anything = st.one_of(hostile, wrong_type)
int_like = st.one_of(st.integers(min_value=-(10**20), max_value=10**20), st.sampled_from([0, -1, 10**6, 2**63]), wrong_type)


def raw_connect(path: Path) -> Any:
    """A plain connection to the file, outside the kernel.

    It must come from the same SQLite library the kernel loaded (sqlean): a second copy of SQLite
    in one process (the stdlib ``sqlite3``) drops the other's POSIX locks when it closes the file,
    and the kernel's next write then fails with "disk I/O error" - see
    https://www.sqlite.org/howtocorrupt.html section 2.2.
    """
    from agentbase_kernel.store.sqlite.connection import sqlite_module

    return sqlite_module().connect(str(path))


def row_counts(path: Path) -> dict[str, int]:
    """Rows per table, read through a raw connection (independent of the kernel).

    ``embeddings`` is left out on purpose: it is a cache keyed by content hash, filled before the
    write transaction so the model never runs under the write lock. A failed add may leave its
    text's vector there, invisible and reused by the next add of the same text.
    """
    conn = raw_connect(path)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("entries", "entry_history", "sessions", "messages", "entry_sources", "session_entries")}
    finally:
        conn.close()
