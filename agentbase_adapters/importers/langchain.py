"""LangChain chat histories -> agentbase sessions: ``SQLChatMessageHistory`` tables,
``FileChatMessageHistory`` files and any ``BaseChatMessageHistory`` object.

Each message is translated exactly as the LangChain adapter stores one (the message dict kept as
its payload), so ``AgentBaseChatMessageHistory`` gives back the same messages. LangChain keeps no
times: messages get the import time, in their order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agentbase_kernel import InvalidArgument

from .._require import require
from ._records import chat_message, header, session

__all__ = ["chat_history_records", "langchain_file_records", "langchain_sql_records"]


def _session_records(session_id: str, messages: Sequence[tuple[Any, str]], *, user_id: str | None
                     ) -> Iterator[dict[str, Any]]:
    """A session and its messages; ``(message, id)`` pairs, the id stable across runs (re-import skips)."""
    from ..langchain import _to_record

    yield session(session_id, user_id=user_id)
    for message, fallback_id in messages:
        rec = _to_record(message)
        mid = message.id or fallback_id
        yield chat_message(session_id, message_id=mid, role=rec["role"], content=rec["content"], name=rec["name"],
                           metadata=rec["metadata"], payload=rec["payload"])


def chat_history_records(histories: dict[str, Any] | Iterable[tuple[str, Any]], *, user_id: str | None = None
                         ) -> Iterator[dict[str, Any]]:
    """Records of ``{session_id: BaseChatMessageHistory}`` (or ``(session_id, history)`` pairs)."""
    require("langchain_core.messages", extra="langchain")
    pairs = histories.items() if isinstance(histories, dict) else histories
    yield header("langchain")
    for session_id, history in pairs:
        yield from _session_records(str(session_id), [(m, f"lc-{session_id}-{n}") for n, m in
                                                      enumerate(history.messages)], user_id=user_id)


def langchain_file_records(path: str | os.PathLike[str], *, session_id: str | None = None,
                           user_id: str | None = None) -> Iterator[dict[str, Any]]:
    """A ``FileChatMessageHistory`` JSON file as one session (named after the file unless given)."""
    core = require("langchain_core.messages", extra="langchain")
    file = Path(path)
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
        messages = core.messages_from_dict(raw)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidArgument(f"{file} is not a FileChatMessageHistory file (a JSON list of message dicts): "
                              f"{exc}") from None
    sid = session_id or file.stem
    yield header("langchain-file")
    yield from _session_records(sid, [(m, f"lc-{sid}-{n}") for n, m in enumerate(messages)], user_id=user_id)


def langchain_sql_records(url: str, *, table: str = "message_store", user_id: str | None = None
                          ) -> Iterator[dict[str, Any]]:
    """Every session of a ``SQLChatMessageHistory`` table (columns id, session_id, message), in id order."""
    core = require("langchain_core.messages", extra="langchain")
    sa = require("sqlalchemy", extra="importers")
    engine = sa.create_engine(url)
    try:
        meta = sa.MetaData()
        try:
            tbl = sa.Table(table, meta, autoload_with=engine)
        except sa.exc.NoSuchTableError:
            raise InvalidArgument(f"No table {table!r} in {url} - pass the table_name given to "
                                  "SQLChatMessageHistory (--table)") from None
        missing = {"id", "session_id", "message"} - set(tbl.c.keys())
        if missing:
            raise InvalidArgument(f"Table {table!r} is not a SQLChatMessageHistory table (no {', '.join(sorted(missing))})")
        yield header("langchain-sql")
        with engine.connect() as conn:
            sessions = [r[0] for r in conn.execute(sa.select(tbl.c.session_id).distinct().order_by(tbl.c.session_id))]
            for sid in sessions:
                rows = conn.execute(sa.select(tbl.c.id, tbl.c.message).where(tbl.c.session_id == sid)
                                    .order_by(tbl.c.id)).fetchall()
                messages = []
                for row_id, text in rows:
                    try:
                        message = core.messages_from_dict([json.loads(text)])[0]
                    except (ValueError, KeyError, TypeError) as exc:
                        raise InvalidArgument(f"{table} row {row_id}: not a LangChain message ({exc})") from None
                    messages.append((message, f"lc-{table}-{row_id}"))
                yield from _session_records(str(sid), messages, user_id=user_id)
    finally:
        engine.dispose()
