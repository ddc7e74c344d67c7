"""The agentbase export format: JSON Lines, one header then typed records (docs/export-format.md).

Encoding and decoding only: one line <-> one ``(kind, fields)`` pair, checked field by field so a
bad line is refused with its line number before anything of it is written.
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ..arguments import MAX_JSON_DEPTH
from ..errors import InvalidArgument

__all__ = ["FORMAT", "FORMAT_VERSION", "KINDS", "SOURCE_KINDS", "LineDigest", "decode_line", "decode_record",
           "encode_record", "header", "trailer", "vector_from_b64", "vector_to_b64"]

FORMAT = "agentbase-export"
FORMAT_VERSION = 2  # 2: the file ends with a trailer (record counts and a SHA-256 of the lines before it)

#: what each record type must carry (beyond ``type``), with the JSON types allowed
_STR, _OPT_STR = (str,), (str, type(None))
_REQUIRED: dict[str, dict[str, tuple[type, ...]]] = {
    "entity": {"norm": _STR, "label": _STR, "text": _STR},
    "entry": {"id": _STR, "l2_full": _STR, "l0_abstract": _STR, "l1_overview": _STR, "content_hash": _STR,
              "search_text": _STR, "created_at": _STR, "updated_at": _STR, "context_type": _STR},
    "history": {"id": _STR, "entry_id": _STR, "event": _STR, "created_at": _STR},
    "vector": {"content_hash": _STR, "vector": _STR},
    "session": {"id": _STR, "created_at": _STR, "updated_at": _STR},
    "message": {"id": _STR, "session_id": _STR, "seq": (int,), "role": _STR, "content": _STR, "created_at": _STR},
    "session_entry": {"session_id": _STR, "entry_id": _STR},
    "entry_source": {"entry_id": _STR, "message_id": _STR},
    "entry_link": {"src": _STR, "dst": _STR, "relation": _STR, "created_at": _STR},
    "trace": {"id": _STR, "query": _STR, "created_at": _STR},
    # records for data from elsewhere: the kernel analyses, embeds and indexes them (importers)
    "memory": {"text": _STR},
    "chat_message": {"session_id": _STR, "role": _STR, "content": _STR},
}
_OPTIONAL: dict[str, dict[str, tuple[type, ...]]] = {
    "entry": {"tags": (list,), "metadata": (dict,), "event_dates": (list,), "flags": (list,), "history": (list,),
              "entities": (list,), "entity_links": (list,), "confidence": (int, float),
              "trust": (int, float), "source": _OPT_STR, "written_by": _OPT_STR,
              "importance": (int, float), "archived_at": _OPT_STR},
    "session": {"metadata": (dict,), "user_id": _OPT_STR, "agent_id": _OPT_STR, "project_id": _OPT_STR},
    "message": {"metadata": (dict,), "name": _OPT_STR, "entry_id": _OPT_STR},
    "memory": {"id": _OPT_STR, "metadata": (dict, type(None)), "history": (list, type(None)),
               "created_at": _OPT_STR, "updated_at": _OPT_STR, "user_id": _OPT_STR, "agent_id": _OPT_STR,
               "project_id": _OPT_STR, "session_id": _OPT_STR, "trust": (int, float, type(None))},
    "chat_message": {"id": _OPT_STR, "name": _OPT_STR, "created_at": _OPT_STR, "metadata": (dict, type(None)),
                     "status": _STR},
}
KINDS = tuple(_REQUIRED)
SOURCE_KINDS = ("memory", "chat_message")
_HISTORY_EVENTS = ("ADD", "UPDATE", "DELETE", "ARCHIVE", "RESTORE")


def header(*, schema_version: int, embedder: tuple[str, int] | None, filters: dict[str, Any],
           vectors: bool, traces: bool, source: str = "agentbase") -> dict[str, Any]:
    """The first line of every file."""
    return {"type": "header", "format": FORMAT, "format_version": FORMAT_VERSION, "schema_version": schema_version,
            "embedder": None if embedder is None else {"name": embedder[0], "dim": embedder[1]},
            "exported_at": datetime.now(timezone.utc).isoformat(), "source": source, "filters": filters,
            "vectors": vectors, "traces": traces}


def trailer(counts: dict[str, int], sha256: str) -> dict[str, Any]:
    """The last line of every file (format 2): how many records of each type came before it, and
    the SHA-256 of the lines before it (see ``LineDigest``), so a reader can tell a whole file
    from one cut at a line boundary."""
    return {"type": "trailer", "records": dict(sorted(counts.items())), "sha256": sha256}


class LineDigest:
    """SHA-256 over a file's lines as the trailer counts them: each line without its line ending,
    then ``\n`` (so a copy whose line endings became CRLF still matches); blank lines skipped."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256()

    def add(self, line: str) -> None:
        text = line.rstrip("\r\n")
        if text.strip():
            self._sha.update(text.encode("utf-8", "surrogatepass") + b"\n")

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


def vector_to_b64(blob: bytes) -> str:
    return base64.b64encode(blob).decode("ascii")


def vector_from_b64(text: str, dim: int | None, where: str) -> bytes:
    try:
        blob = base64.b64decode(text, validate=True)
    except (ValueError, TypeError):
        raise InvalidArgument(f"{where}: vector is not valid base64") from None
    if len(blob) % 4 or (dim is not None and len(blob) != 4 * dim):
        raise InvalidArgument(f"{where}: vector has {len(blob)} bytes, expected {4 * (dim or 0)} "
                              f"(float32 little-endian x {dim})")
    if not np.isfinite(np.frombuffer(blob, dtype="<f4")).all():
        raise InvalidArgument(f"{where}: vector holds NaN or infinity")
    return blob


def encode_record(kind: str, fields: dict[str, Any]) -> str:
    """One JSON line (no newline); a ``vector`` record's bytes become base64 ``<f4``."""
    if kind == "vector" and isinstance(fields.get("vector"), (bytes, bytearray, memoryview)):
        fields = {**fields, "vector": vector_to_b64(bytes(fields["vector"]))}
    return json.dumps({"type": kind, **fields}, ensure_ascii=False, separators=(",", ":"))


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_line(line: str, lineno: int) -> dict[str, Any]:
    """A line as a JSON object, or ``InvalidArgument`` naming the line (never ``RecursionError``)."""
    try:
        obj = json.loads(line, parse_constant=_not_json)
    except ValueError as exc:
        raise InvalidArgument(f"line {lineno}: not valid JSON ({exc})") from None
    except RecursionError:
        raise InvalidArgument(f"line {lineno}: JSON nested too deeply to read (values may nest at most "
                              f"{MAX_JSON_DEPTH} levels)") from None
    if not isinstance(obj, dict):
        raise InvalidArgument(f"line {lineno}: expected a JSON object, got {type(obj).__name__}")
    return obj


def check_header(obj: dict[str, Any], where: str = "line 1") -> dict[str, Any]:
    if obj.get("type") != "header" or obj.get("format") != FORMAT:
        raise InvalidArgument(f"{where}: not an agentbase export (the first line must be the header with "
                              f"format {FORMAT!r})")
    version = obj.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
        raise InvalidArgument(f"{where}: format_version {version!r} is not supported (this agentbase reads "
                              f"1..{FORMAT_VERSION}) - upgrade agentbase")
    embedder = obj.get("embedder")
    if embedder is not None and not (isinstance(embedder, dict) and isinstance(embedder.get("name"), str)
                                     and isinstance(embedder.get("dim"), int)):
        raise InvalidArgument(f"{where}: header embedder must be null or {{name: str, dim: int}}")
    return obj


def decode_record(obj: dict[str, Any], where: str, dim: int | None) -> tuple[str, dict[str, Any]]:
    """``(kind, fields)`` of a record object, every required field checked; vectors decoded to bytes."""
    kind = obj.get("type")
    if kind not in _REQUIRED:
        raise InvalidArgument(f"{where}: unknown record type {kind!r} (known: {', '.join(KINDS)})")
    fields = {k: v for k, v in obj.items() if k != "type"}
    for name, types in _REQUIRED[kind].items():
        if name not in fields:
            raise InvalidArgument(f"{where}: {kind} record lacks {name!r}")
        if not isinstance(fields[name], types) or (types == (int,) and isinstance(fields[name], bool)):
            raise InvalidArgument(f"{where}: {kind}.{name} must be {' or '.join(t.__name__ for t in types)}, "
                                  f"got {fields[name]!r:.60}")
    for name, types in _OPTIONAL.get(kind, {}).items():
        if name in fields and not isinstance(fields[name], types):
            raise InvalidArgument(f"{where}: {kind}.{name} must be {' or '.join(t.__name__ for t in types)}, "
                                  f"got {fields[name]!r:.60}")
    for event in fields.get("history") or () if kind in ("entry", "memory") else ():
        if not (isinstance(event, dict) and isinstance(event.get("id"), str) and event.get("event") in _HISTORY_EVENTS
                and isinstance(event.get("created_at"), str)):
            raise InvalidArgument(f"{where}: each history event needs id, event ({'/'.join(_HISTORY_EVENTS)}) and "
                                  "created_at")
    if kind == "history" and fields["event"] not in _HISTORY_EVENTS:
        raise InvalidArgument(f"{where}: history event must be one of {', '.join(_HISTORY_EVENTS)}, "
                              f"got {fields['event']!r}")
    if kind == "entry":
        for pair in fields.get("entities") or ():
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
                raise InvalidArgument(f"{where}: entry.entities holds [norm, label] pairs")
        for link in fields.get("entity_links") or ():
            if not (isinstance(link, list) and len(link) == 3 and isinstance(link[2], str)
                    and all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
                            for p in link[:2])):
                raise InvalidArgument(f"{where}: entry.entity_links holds [[norm, label], [norm, label], time]")
    if kind == "vector":
        fields["vector"] = vector_from_b64(fields["vector"], dim, where)
    return kind, fields
