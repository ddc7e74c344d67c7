"""Write streams: memories written one at a time into one place, read back as a conversation.

A Mem0 user who calls ``add()`` once per message, a LangGraph store that gets one ``put`` per
turn, a ``remember()`` per event: each write is a turn of a conversation nobody called a session.
A write with a ``stream`` key gets what a session turn gets (``turns.py``): the previous write of
the stream as its "before" FTS context, and the next write, when it arrives, appended as "after"
context. The stream's order is kept as messages of a stream session (id ``stream-<hash>``,
metadata ``{"stream": key}``) whose messages link to the entries and carry no text of their own,
so the retriever's context cosine and co-retrieval read a stream exactly as a session.

Nobody names the sessions of a stream either: a write that comes more than ``gap`` after the one
before it (by its own time, the date it is stamped with, else when it arrived) starts a new stream
session, with no neighbour across the pause, as a new session would. A write that names no speaker
but starts with one (``"Caroline: ..."``, after an optional stamp) is read as said by that name.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..records import Entry, Scope
from ..store.base import utcnow
from ..text import tokenize
from .roles import IngestStore
from .turns import CONTEXT_CHARS

__all__ = ["StreamTail", "StreamWriter", "infer_speaker", "leading_date", "leading_time", "speaker_prefix",
           "stream_session_id"]

# "(1:56 pm on 8 May, 2023) Caroline: ..." or "[2023-05-08] ...": a write stamped with its date
_LEADING = re.compile(r"^\s*[(\[]([^()\[\]]{6,60})[)\]]")
_YEAR = re.compile(r"\b(1[89]|20)\d\d\b")
_CLOCK = re.compile(r"\b([01]?\d|2[0-3])[:.]([0-5]\d)(?::[0-5]\d)?\s*([ap])?\.?\s*m?\b", re.IGNORECASE)
# "Caroline: ...", "Maya Okafor: ...", "elise: ..." after an optional stamp: up to four words that
# start with a letter, a colon, then text
_SPEAKER = re.compile(r"^\s*(?:[(\[][^()\[\]]{1,60}[)\]]\s*)?([^\W\d_][\w'’.\-]*(?: [^\W\d_][\w'’.\-]*){0,3}):\s+\S")
# labels that open a note, not a person's name ("Note: ...", "Update: ...")
_LABELS = frozenset({
    "note", "notes", "todo", "to do", "update", "re", "fwd", "fw", "fyi", "reminder", "question", "answer", "q",
    "a", "summary", "tip", "warning", "error", "info", "edit", "ps", "p.s", "subject", "title", "status", "task",
    "goal", "important", "nb", "n.b", "example", "e.g", "i.e", "result", "results", "fact", "memory", "context",
    "update on", "news", "step", "hint", "caution", "source", "quote", "tl;dr", "deadline", "agenda", "topic",
})
# a speaker with one of these names is the other side of a user's conversation
_ASSISTANT_NAMES = frozenset({"assistant", "ai", "ai assistant", "bot", "chatbot", "agent", "the assistant"})


def stream_session_id(key: str, scope: Scope) -> str:
    """The stream session of ``key`` in ``scope``: the same key in two scopes is two streams."""
    ident = json.dumps([scope.user_id, scope.agent_id, scope.project_id, scope.session_id, key])
    return "stream-" + hashlib.sha1(ident.encode("utf-8")).hexdigest()[:32]


def _segment_id(base: str, segment: int) -> str:
    """The ``segment``-th session of a stream (the first keeps the stream's own id)."""
    return base if segment == 0 else f"{base}.{segment}"


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


def leading_time(text: str) -> datetime | None:
    """``leading_date`` with the stamp's time of day when it has one ("1:56 pm on 8 May, 2023")."""
    day = leading_date(text)
    match = _LEADING.match(text) if day is not None else None
    clock = _CLOCK.search(match.group(1)) if match is not None else None
    if day is None or clock is None:
        return day
    hour, minute = int(clock.group(1)), int(clock.group(2))
    half = (clock.group(3) or "").casefold()
    if half and hour <= 12:
        hour = hour % 12 + (12 if half == "p" else 0)
    return day.replace(hour=hour, minute=minute)


def speaker_prefix(text: str) -> str | None:
    """The name a text opens with (``"Caroline: ..."``, after an optional stamp), else ``None``.

    Labels that open a note ("Note:", "Update:") and headings ("Team roles:") are not names.
    """
    match = _SPEAKER.match(text)
    if match is None:
        return None
    name = match.group(1).strip()
    if len(name) > 40 or name.casefold().rstrip(".") in _LABELS or "://" in name:
        return None
    words = name.split()
    # "Maya Okafor" is a name, "Team roles" a heading: a name of several words capitalises each
    if len(words) > 1 and not all(w[0].isupper() for w in words):
        return None
    return name


def infer_speaker(item: dict[str, Any], text: str) -> dict[str, Any]:
    """A stream write with no speaker of its own, as said by the name its text opens with.

    The name is also the write's actor when it has none, and a write by an assistant-like name
    ("Assistant:", "AI:") whose role was left at the default ``user`` is the assistant's.
    """
    if item.get("speaker") or not item.get("stream"):
        return item
    name = speaker_prefix(text)
    if name is None:
        return item
    out = {**item, "speaker": name, "actor": item.get("actor") or name}
    if name.casefold() in _ASSISTANT_NAMES and item.get("role", "user") == "user":
        out["role"] = "assistant"
    return out


def stream_label(text: str, speaker: str | None) -> str:
    """A write as its neighbours see it: ``"speaker: text"``."""
    text = text[:CONTEXT_CHARS]
    return f"{speaker}: {text}" if speaker and not text.startswith(f"{speaker}:") else text


@dataclass
class StreamTail:
    """The last write of a stream: the entry the next write follows."""

    entry_id: str
    label: str


@dataclass
class _Stream:
    """Where a stream stands within one ``add_many`` call: its current session and last write's time."""

    base: str
    segment: int
    last_at: datetime | None


class StreamWriter:
    """Links each write of a stream to the one before it, within one ``add_many`` call.

    The tail of each stream is read from the store once per call (inside the call's write
    transaction, so it sees writes of an enclosing transaction too) and then kept in memory.
    ``gap``: a write this long after (or before) the stream's previous one starts a new stream
    session; ``None`` keeps a stream in one session.
    """

    def __init__(self, store: IngestStore, gap: timedelta | None = None) -> None:
        self.store = store
        self.gap = gap
        self._tails: dict[str, StreamTail | None] = {}
        self._sessions: set[str] = set()
        self._streams: dict[str, _Stream] = {}

    def session_for(self, item: dict[str, Any]) -> str:
        """The stream session ``item`` belongs to; a pause longer than ``gap`` opens the next one.

        Writes into a named session (``session_id``, or ``split_stream`` off) are never split: the caller
        said what the session is.
        """
        scope = Scope(item.get("user_id"), item.get("agent_id"), item.get("project_id"), item.get("session_id"))
        base = stream_session_id(str(item["stream"]), scope)
        if self.gap is None or item.get("session_id") or item.get("split_stream") is False:
            return base
        stream = self._streams.get(base)
        if stream is None:
            stream = self._streams[base] = self._load_stream(base)
        at = event_time(item)
        if stream.last_at is not None and abs(at - stream.last_at) > self.gap:
            stream.segment += 1
            self._tails[_segment_id(base, stream.segment)] = None  # no neighbour across the pause
            meta = {"stream": str(item["stream"])}
            self.store.ensure_session(base, Scope(item.get("user_id"), item.get("agent_id"), item.get("project_id")), meta)
            self.store.update_session(base, metadata={**meta, "segment": stream.segment})
        stream.last_at = at
        return _segment_id(base, stream.segment)

    def _load_stream(self, base: str) -> _Stream:
        session = self.store.find_session(base)
        segment = int(session.metadata.get("segment", 0)) if session is not None else 0
        last = self.store.list_messages(_segment_id(base, segment), order="desc", limit=1)
        last_at = last[0].created_at if last else None
        if last_at is not None and last_at.tzinfo is None:
            last_at = last_at.replace(tzinfo=timezone.utc)
        return _Stream(base, segment, last_at)

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
            base = stream_session_id(str(item["stream"]), Scope(
                item.get("user_id"), item.get("agent_id"), item.get("project_id"), item.get("session_id")))
            meta: dict[str, Any] = {"stream": str(item["stream"])}
            if sid != base:
                meta["segment"] = int(sid.rsplit(".", 1)[1])
            self.store.ensure_session(sid, scope, meta)
            self._sessions.add(sid)
        # the message's time is the write's own (its stamp, else when it arrived): the next write's
        # pause is measured from it
        message = self.store.insert_message(sid, {
            "role": item.get("role") or "user", "content": "", "name": item.get("speaker"),
            "created_at": item.get("created_at") or item.get("stamped_at") or entry.created_at}, None)
        self.store.attach_entry(message.id, entry.id, sid, "stream")
        label = stream_label(entry.l2_full, item.get("speaker"))
        tail = self._tails.get(sid)
        if tail is not None:
            self.store.append_search_context(tail.entry_id, "\n" + tokenize.fts_text(label))
        self._tails[sid] = StreamTail(entry.id, label)


def event_time(item: dict[str, Any]) -> datetime:
    """When a stream write happened: its own time, else the date it is stamped with, else now."""
    at = item.get("created_at") or item.get("stamped_at") or utcnow()
    return at if at.tzinfo is not None else at.replace(tzinfo=timezone.utc)
