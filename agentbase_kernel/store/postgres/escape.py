"""NUL in PostgreSQL: ``text`` and ``jsonb`` cannot hold U+0000, the kernel keeps texts and metadata verbatim.

Every string the store writes (a text column, each key and string inside a ``jsonb``) is escaped and every
string it reads is unescaped. The escape replaces the three lowest code points with four-character words
of U+0001 / U+0002 (``A`` / ``B`` below) and leaves every other character alone::

    U+0000 -> AAAB      U+0001 -> AABB      U+0002 -> ABBB

The words keep what the metadata filters compute in SQL on escaped strings exact:

* equality: the escape is one-to-one;
* ``contains`` / ``icontains`` (``strpos``) and ``startswith``: the words are comma-free (a word never
  appears across two neighbouring words) and made only of escaped characters, so an escaped needle
  occurs in an escaped value exactly where the needle occurs in the value;
* ``gt`` / ``lt`` (``COLLATE "C"``, code point order): each word is below every unescaped character
  and the words are in the order of the characters they stand for, so the order is kept.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["escape_json", "loads_jsonb", "needs_json_escape", "text_in", "text_out"]

_WORDS = {"\x00": "\x01\x01\x01\x02", "\x01": "\x01\x01\x02\x02", "\x02": "\x01\x02\x02\x02"}
_ESCAPE = str.maketrans(_WORDS)
_UNESCAPE = re.compile("|".join(_WORDS.values()))
_CHARS = {word: char for char, word in _WORDS.items()}
# how json.dumps (and PostgreSQL's jsonb output) spell the three characters inside a JSON string
_JSON_SPELLINGS = ("\\u0000", "\\u0001", "\\u0002")
_JSON_SPELLINGS_B = tuple(s.encode() for s in _JSON_SPELLINGS)


def text_in(value: str | None) -> str | None:
    """A string as stored (``text_out`` reverses it)."""
    if value is None or ("\x00" not in value and "\x01" not in value and "\x02" not in value):
        return value
    return value.translate(_ESCAPE)


def text_out(value: str | None) -> str | None:
    """A stored string as it was given."""
    if value is None or "\x01" not in value:
        return value
    return _UNESCAPE.sub(lambda m: _CHARS[m.group(0)], value)


def needs_json_escape(dumped: str) -> bool:
    """True when a ``json.dumps`` output may hold one of the escaped characters (then escape and dump again)."""
    return any(s in dumped for s in _JSON_SPELLINGS)


def escape_json(value: Any) -> Any:
    """``value`` with every key and string escaped (``text_in``), for a ``jsonb`` column or parameter."""
    if isinstance(value, str):
        return text_in(value)
    if isinstance(value, dict):
        return {text_in(k) if isinstance(k, str) else k: escape_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [escape_json(v) for v in value]
    return value


def _unescape_json(value: Any) -> Any:
    if isinstance(value, str):
        return text_out(value)
    if isinstance(value, dict):
        return {text_out(k): _unescape_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unescape_json(v) for v in value]
    return value


def loads_jsonb(data: str | bytes | bytearray | memoryview) -> Any:
    """psycopg's ``jsonb`` loader: ``json.loads``, then strings unescaped when the text holds any."""
    if isinstance(data, memoryview):
        data = bytes(data)
    value = json.loads(data)
    spellings = _JSON_SPELLINGS if isinstance(data, str) else _JSON_SPELLINGS_B
    if any(s in data for s in spellings[1:]):  # type: ignore[operator]
        return _unescape_json(value)
    return value
