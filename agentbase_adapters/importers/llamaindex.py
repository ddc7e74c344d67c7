"""LlamaIndex chat stores -> agentbase sessions: a ``SimpleChatStore`` persist file and a
``SQLAlchemyChatStore`` table. Each chat key becomes a session; each ``ChatMessage`` is translated
as the LlamaIndex adapter stores one (its model dump kept as payload), so ``AgentBaseChatStore``
gives back the same messages. The SQL store's timestamps become message times; archived messages
(``status``) stay archived.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentbase_kernel import InvalidArgument

from .._require import require
from ._records import chat_message, header, iso_time, session

__all__ = ["llamaindex_json_records", "llamaindex_sql_records"]


def _records(key: str, messages: list[tuple[Any, str, str | None, str]], user_id: str | None
             ) -> Iterator[dict[str, Any]]:
    """A session and its ``(ChatMessage, id, time, status)`` messages."""
    from ..llamaindex import _to_record

    yield session(key, user_id=user_id, times=[t for _, _, t, _ in messages])
    for message, mid, at, status in messages:
        rec = _to_record(message)
        record = chat_message(key, message_id=mid, role=rec["role"], content=rec["content"], name=rec["name"],
                              created_at=at, payload=rec["payload"])
        if status != "active":
            record["status"] = status
        yield record


def llamaindex_json_records(path: str | os.PathLike[str], *, user_id: str | None = None) -> Iterator[dict[str, Any]]:
    """Every key of a ``SimpleChatStore.persist()`` file, read with ``SimpleChatStore.from_persist_path``."""
    require("llama_index.core", extra="llamaindex")
    from llama_index.core.storage.chat_store import SimpleChatStore

    file = Path(path)
    if not file.is_file():
        raise InvalidArgument(f"{file} is not a file")
    try:
        store = SimpleChatStore.from_persist_path(str(file))
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidArgument(f"{file} is not a SimpleChatStore persist file: {exc}") from None
    yield header("llamaindex-json")
    for key in store.get_keys():
        yield from _records(key, [(m, f"li-{key}-{n}", None, "active") for n, m in enumerate(store.get_messages(key))],
                            user_id)


def _sync_url(url: str) -> str:
    """The sync driver of an async SQLAlchemy URL (``sqlite+aiosqlite`` -> ``sqlite``)."""
    scheme, sep, rest = url.partition("://")
    base, _, driver = scheme.partition("+")
    if driver in ("aiosqlite", "asyncpg", "aiomysql", "asyncmy", "psycopg_async"):
        return f"{base}{'+psycopg' if driver == 'psycopg_async' else ''}{sep}{rest}"
    return url


def llamaindex_sql_records(url: str, *, table: str = "chat_store", user_id: str | None = None
                           ) -> Iterator[dict[str, Any]]:
    """Every key of a ``SQLAlchemyChatStore`` table (id, key, timestamp, role, status, data), in its order."""
    require("llama_index.core", extra="llamaindex")
    sa = require("sqlalchemy", extra="importers")
    from llama_index.core.base.llms.types import ChatMessage

    engine = sa.create_engine(_sync_url(url))
    try:
        try:
            tbl = sa.Table(table, sa.MetaData(), autoload_with=engine)
        except sa.exc.NoSuchTableError:
            raise InvalidArgument(f"No table {table!r} in {url} - pass the table_name given to "
                                  "SQLAlchemyChatStore (--table)") from None
        missing = {"id", "key", "timestamp", "data"} - set(tbl.c.keys())
        if missing:
            raise InvalidArgument(f"Table {table!r} is not a SQLAlchemyChatStore table (no {', '.join(sorted(missing))})")
        has_status = "status" in tbl.c
        yield header("llamaindex-sql")
        with engine.connect() as conn:
            keys = [r[0] for r in conn.execute(sa.select(tbl.c.key).distinct().order_by(tbl.c.key))]
            for key in keys:
                cols = [tbl.c.id, tbl.c.timestamp, tbl.c.data] + ([tbl.c.status] if has_status else [])
                rows = conn.execute(sa.select(*cols).where(tbl.c.key == key)
                                    .order_by(tbl.c.timestamp, tbl.c.id)).fetchall()
                messages = []
                for row in rows:
                    data = row[2] if isinstance(row[2], dict) else json.loads(row[2])
                    try:
                        message = ChatMessage.model_validate(data)
                    except ValueError as exc:
                        raise InvalidArgument(f"{table} row {row[0]}: not a ChatMessage ({exc})") from None
                    status = str(row[3]).lower() if has_status else "active"
                    messages.append((message, f"li-{table}-{row[0]}", iso_time(int(row[1])),
                                     "archived" if status == "archived" else "active"))
                yield from _records(str(key), messages, user_id)
    finally:
        engine.dispose()
