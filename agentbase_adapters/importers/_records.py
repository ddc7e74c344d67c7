"""Building the portable records an importer hands to ``Kernel.import_`` (docs/export-format.md).

Importers emit ``memory``, ``session`` and ``chat_message`` records: the kernel ingests them like
API writes (analysis, embedding, turns), then puts back the source's ids, times and history.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any

from agentbase_kernel import InvalidArgument

__all__ = ["chat_message", "header", "iso_time", "session", "text_of"]


def header(source: str) -> dict[str, Any]:
    """The header of records that come from another product (no vectors: the kernel embeds)."""
    return {"type": "header", "format": "agentbase-export", "format_version": 1, "source": source,
            "embedder": None, "exported_at": datetime.now(timezone.utc).isoformat(), "filters": {}}


def iso_time(value: Any) -> str | None:
    """ISO 8601 with an offset from a datetime, an ISO string, or Unix seconds / nanoseconds."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat()
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc).isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1e9 if value > 1e14 else value / 1e3 if value > 1e11 else value
        return datetime.fromtimestamp(seconds, timezone.utc).isoformat()
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidArgument(f"Not a time: {value!r:.80}") from None
        return iso_time(parsed)
    raise InvalidArgument(f"Not a time: {value!r:.80}")


def text_of(content: Any) -> str:
    """Plain text of a message body: a string, or the text parts of a list of content blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, dict):  # OpenAI thread messages: {"type": "text", "text": {"value": ...}}
                    text = text.get("value")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    return str(content)


def session(session_id: str, *, user_id: str | None = None, agent_id: str | None = None,
            metadata: dict[str, Any] | None = None, times: list[str | None] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """A session record; its times are the earliest and latest of ``times`` (or now)."""
    known = sorted(t for t in times if t)
    now = datetime.now(timezone.utc).isoformat()
    return {"type": "session", "id": session_id, "user_id": user_id, "agent_id": agent_id,
            "metadata": metadata or {}, "created_at": known[0] if known else now,
            "updated_at": known[-1] if known else now}


def chat_message(session_id: str, *, message_id: str | None, role: str, content: str, name: str | None = None,
                 created_at: str | None = None, metadata: dict[str, Any] | None = None,
                 payload: Any = None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "chat_message", "session_id": session_id, "id": message_id, "role": role,
                              "content": content, "name": name, "created_at": created_at,
                              "metadata": metadata or {}}
    if payload is not None:
        record["payload"] = payload
    return record
