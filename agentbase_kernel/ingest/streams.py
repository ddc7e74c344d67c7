"""Write streams: memories written one at a time into one place, read back as a conversation.

A Mem0 user who calls ``add()`` once per message, a LangGraph store that gets one ``put`` per
turn, a ``remember()`` per event: each write is a turn of a conversation nobody called a session.
A write with a ``stream`` key gets what a session turn gets (``turns.py``): the previous write of
the stream as its "before" FTS context, and the next write, when it arrives, appended as "after"
context. The stream's order is kept as messages of a stream session (id ``stream-<hash>``,
metadata ``{"stream": key}``) whose messages link to the entries and carry no text of their own,
so the retriever's context cosine and co-retrieval read a stream exactly as a session.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..records import Entry, Scope
from ..text import tokenize
from .roles import IngestStore
from .turns import CONTEXT_CHARS

__all__ = ["StreamTail", "StreamWriter", "leading_date", "stream_session_id"]

# "(1:56 pm on 8 May, 2023) Caroline: ..." or "[2023-05-08] ...": a write stamped with its date
_LEADING = re.compile(r"^\s*[(\[]([^()\[\]]{6,60})[)\]]")
_YEAR = re.compile(r"\b(1[89]|20)\d\d\b")


def stream_session_id(key: str, scope: Scope) -> str:
    """The stream session of ``key`` in ``scope``: the same key in two scopes is two streams."""
    ident = json.dumps([scope.user_id, scope.agent_id, scope.project_id, scope.session_id, key])
    return "stream-" + hashlib.sha1(ident.encode("utf-8")).hexdigest()[:32]


def leading_date(text: str) -> datetime | None:
    """The day a text is stamped with at its start (a bracketed date with a year), else ``None``.

    A write without a timestamp resolves its relative dates ("yesterday") against this day
    instead of the day it was stored, as a session turn does against its session's date.
    """
    from ..text.dates import resolve_dates

    match = _LEADING.match(text)
    if match is None or not _YEAR.search(match.group(1)):
        return None
    days = [m for m in resolve_dates(match.group(1), datetime.now(timezone.utc)) if m.start == m.end]
    if len(days) != 1:
        return None
    day = days[0].start
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc)


def stream_label(text: str, speaker: str | None) -> str:
    """A write as its neighbours see it: ``"speaker: text"``."""
    text = text[:CONTEXT_CHARS]
    return f"{speaker}: {text}" if speaker and not text.startswith(f"{speaker}:") else text


@dataclass
class StreamTail:
    """The last write of a stream: the entry the next write follows."""

    entry_id: str
    label: str


class StreamWriter:
    """Links each write of a stream to the one before it, within one ``add_many`` call.

    The tail of each stream is read from the store once per call (inside the call's write
    transaction, so it sees writes of an enclosing transaction too) and then kept in memory.
    """

    def __init__(self, store: IngestStore) -> None:
        self.store = store
        self._tails: dict[str, StreamTail | None] = {}
        self._sessions: set[str] = set()

    def session_for(self, item: dict[str, Any]) -> str:
        scope = Scope(item.get("user_id"), item.get("agent_id"), item.get("project_id"), item.get("session_id"))
        return stream_session_id(str(item["stream"]), scope)

    def before(self, sid: str, item: dict[str, Any]) -> str | None:
        """The previous write of the stream as ``"speaker: text"`` (``None`` for the first)."""
        if sid not in self._tails:
            self._tails[sid] = self._load_tail(sid)
        tail = self._tails[sid]
        return tail.label if tail is not None else None

    def _load_tail(self, sid: str) -> StreamTail | None:
        last = self.store.list_messages(sid, order="desc", limit=1)
        if not last or not last[0].entry_id:
            return None
        entry = self.store.get_entries([last[0].entry_id]).get(last[0].entry_id)
        return StreamTail(entry.id, stream_label(entry.l2_full, last[0].name)) if entry is not None else None

    def append(self, sid: str, item: dict[str, Any], entry: Entry) -> None:
        """Record ``entry`` as the stream's newest write; the write before it gets it as "after" context."""
        if sid not in self._sessions:
            scope = Scope(item.get("user_id"), item.get("agent_id"), item.get("project_id"))
            self.store.ensure_session(sid, scope, {"stream": str(item["stream"])})
            self._sessions.add(sid)
        message = self.store.insert_message(sid, {
            "role": item.get("role") or "user", "content": "", "name": item.get("speaker"),
            "created_at": entry.created_at}, None)
        self.store.attach_entry(message.id, entry.id, sid, "stream")
        label = stream_label(entry.l2_full, item.get("speaker"))
        tail = self._tails.get(sid)
        if tail is not None:
            self.store.append_search_context(tail.entry_id, "\n" + tokenize.fts_text(label))
        self._tails[sid] = StreamTail(entry.id, label)
