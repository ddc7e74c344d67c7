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


def row_counts(path: Path | str) -> dict[str, int]:
    """Rows per table, read through a raw connection (independent of the kernel).

    ``embeddings`` is left out on purpose: it is a cache keyed by content hash, filled before the
    write transaction so the model never runs under the write lock. A failed add may leave its
    text's vector there, invisible and reused by the next add of the same text.
    """
    tables = ("entries", "entry_history", "sessions", "messages", "entry_sources", "session_entries")
    if isinstance(path, str) and path.startswith(("postgresql://", "postgres://")):  # AGENTBASE_TEST_BACKEND=postgres
        import psycopg

        with psycopg.connect(path) as pg:
            return {t: pg.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}  # type: ignore[index]
    conn = raw_connect(path)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    finally:
        conn.close()


# -- shapes found by the issue-16 adversarial run ---------------------------------------------------

# Every C0 control, DEL, the C1 NEL and the Unicode line separators: each can hide inside an id
# (``\x1f`` was the old scope key's separator).
CONTROL_CHARS = [chr(i) for i in range(0x20)] + ["\x7f", "\x85", "\u2028", "\u2029"]
id_with_control = st.builds(
    lambda head, ctrl, tail: f"{head}{ctrl}{tail}",
    st.text(alphabet="abcxyz", max_size=4), st.sampled_from(CONTROL_CHARS), st.text(alphabet="abcxyz", max_size=4),
)
# Filter values that are not scalars, over data whose stored values are (item 8).
FILTER_VALUES: list[Any] = [["x"], [], [["x"]], {"x": 1}, {}, {"eq": ["x"]}, {"in": "x"}, {"x"}, frozenset(), ("x",)]
filter_value = st.one_of(st.sampled_from(FILTER_VALUES), st.lists(st.text(max_size=3), max_size=2),
                         st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
# Where a str goes: each of these once reached a raw TypeError/AttributeError (item 9).
NON_STR: list[Any] = [0, 5, -1, 1.5, True, None, b"bytes", ["x"], {"a": 1}, {"x"}, (1,), object()]
# Numbers past what float, datetime or JSON can carry (items 9, 12).
HUGE_NUMBERS: list[Any] = [1e20, 1e308, float("inf"), float("-inf"), float("nan"), 10**30, 2**63, -(2**63) - 1, 10**400]


def nested(depth: int, *, kind: str = "list", leaf: Any = 1) -> Any:
    """``depth`` levels of lists (or ``{"k": ...}`` dicts) around ``leaf``, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


def nested_json(depth: int, *, kind: str = "list") -> bytes:
    """``nested(depth)`` as JSON text, written without recursion (``json.dumps`` cannot go past ~1000)."""
    if kind == "list":
        return b"[" * depth + b"1" + b"]" * depth
    return b'{"k":' * depth + b"1" + b"}" * depth


DEEP = [nested(65), nested(65, kind="dict"), nested(3000), nested(3000, kind="dict")]
deep = st.builds(nested, st.sampled_from([65, 200, 3000]), kind=st.sampled_from(["list", "dict"]))
deep_json = st.builds(nested_json, st.sampled_from([65, 200, 3000, 100_000]), kind=st.sampled_from(["list", "dict"]))

# HTTP shapes for the servers (items 1, 2, 4, 5): what a web page, a rebinding DNS name or a
# careless client sends. ``{port}`` is filled with the server's port.
JSON_CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"]
NOT_JSON_CONTENT_TYPES = [
    "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
    "text/json", "application/jsonp", "application/json-patch+json", "application/ld+json", "json", "", "*/*",
    "text/html", "application/octet-stream", "application/json\x00", "applicationjson",
]
GOOD_HOSTS = ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST:{port}", "127.0.0.1", "localhost"]
BAD_HOSTS = [
    "evil.example", "evil.example:{port}", "127.0.0.1.evil.example:{port}", "localhost.evil.example", "127.0.0.2:{port}",
    "0.0.0.0:{port}", "[::ffff:127.0.0.1]:{port}", "localhost:1", "localhost:{port}0", "127.0.0.1:{port}@evil.example",
    "", "[::1", "localhost:", "local host:{port}", "169.254.169.254",
]
RAW_BODIES: list[bytes] = [
    b"[" * 100_000, b"{" * 100_000, b'{"a":' * 70_000, b'{"self": 1}', b'{"options": 1}', b'{"top_k": 5}', b"NaN",
    b'{"metadata": {"k": Infinity}}', b"1e999", b"9" * 5000, b"\xff\xfe", b"", b"   ", b"null", b"[]", b'"x"', b"{",
    b'{"a": 1, "a": 2}',
]
