"""Each imported record checked by the same rules as an API write (``agentbase_kernel.arguments``).

``format.decode_record`` makes sure a record has its fields with the right JSON types; this module
checks what they hold, with the validators every ``Kernel`` method uses: ids without NUL and at most
512 characters, tags a list of strings, metadata JSON a database stores (finite numbers, string
keys, at most 64 levels), confidence / importance / trust in [0, 1], times that parse, roles and
statuses the API accepts. A record the API would refuse is refused here, named by its line, before
anything of the file is written - so an import cannot store a value that later breaks a reader.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import arguments as check
from ..errors import InvalidArgument
from ..store.base import iso, parse_iso

__all__ = ["check_record"]

_TIMES = ("created_at", "updated_at", "valid_from", "invalid_at", "expires_at", "archived_at", "committed_at")


def check_record(kind: str, fields: dict[str, Any], where: str) -> None:
    """``InvalidArgument`` naming ``where`` unless the record holds what the API would accept."""
    try:
        _CHECKS[kind](fields)
    except InvalidArgument as exc:
        raise InvalidArgument(f"{where}: {kind}.{exc}") from None


def _time(value: Any, name: str) -> None:
    if value is None:
        return
    try:
        iso(parse_iso(value))  # what the store writes: a far-off year with an offset overflows in UTC
    except (ValueError, TypeError, OverflowError):
        raise InvalidArgument(f"{name} is not an ISO 8601 time: {value!r:.80}") from None


def _times(fields: dict[str, Any]) -> None:
    for name in _TIMES:
        _time(fields.get(name), name)


def _ids(fields: dict[str, Any], *names: str) -> None:
    for name in names:
        check.check_id(name, fields.get(name))


def _word(value: Any, name: str) -> None:
    """A non-empty str without NUL (a role, a relation, an entity's norm and label)."""
    if check.optional_str(value, name) is None or not value or "\x00" in value:
        raise InvalidArgument(f"{name} must be a non-empty str without NUL bytes, got {value!r:.80}")


def _number(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise InvalidArgument(f"{name} must be a finite number >= 0, got {value!r:.80}")


def _strings(value: Any, name: str) -> None:
    if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise InvalidArgument(f"{name} must be a list of strings, got {value!r:.80}")
    for item in value or ():
        check.optional_str(item, name)


def _event(event: dict[str, Any]) -> None:
    """One history event (an entry's or a memory's, or a ``history`` record)."""
    check.check_id("history event id", event.get("id"))
    for name in ("old_value", "new_value", "actor", "role", "reason"):
        check.optional_str(event.get(name), f"history {name}")
    _time(event.get("created_at"), "history created_at")


def _scope(fields: dict[str, Any], *names: str) -> None:
    check.scope_of(*(fields.get(name) for name in names))


def _entry(f: dict[str, Any]) -> None:
    # the columns an API write takes, through the API's own item check
    check.memory_item(f["l2_full"], user_id=f.get("user_id"), agent_id=f.get("agent_id"),
                      project_id=f.get("project_id"), session_id=f.get("session_id"), category=f.get("category"),
                      tags=f.get("tags"), metadata=f.get("metadata"), role=f.get("role"), actor=f.get("actor"),
                      context_type=f["context_type"], confidence=f.get("confidence", 1.0), entry_id=f["id"],
                      trust=f.get("trust"), importance=f.get("importance"))
    # what the database derives or keeps beside them
    _word(f["content_hash"], "content_hash")
    for name in ("l0_abstract", "l1_overview", "search_text", "search_context", "subject_key", "source",
                 "written_by", "date_min", "date_max", "scope_level"):
        check.optional_str(f.get(name), name)
    check.check_id("superseded_by", f.get("superseded_by"))
    _strings(f.get("event_dates"), "event_dates")
    _strings(f.get("flags"), "flags")
    if "dedup" in f and not isinstance(f["dedup"], bool):
        raise InvalidArgument(f"dedup must be true or false, got {f['dedup']!r:.80}")
    _times(f)
    for event in f.get("history") or ():
        _event(event)
    for pair in f.get("entities") or ():
        _word(pair[0], "entity norm")
        _word(pair[1], "entity label")
    for a, b, observed_at in f.get("entity_links") or ():
        for norm, label in (a, b):
            _word(norm, "entity norm")
            _word(label, "entity label")
        _time(observed_at, "observed_at")


def _session(f: dict[str, Any]) -> None:
    _ids(f, "id", "summary_entry_id")
    _scope(f, "user_id", "agent_id", "project_id")
    check.metadata(f.get("metadata"))
    _times(f)


def _message(f: dict[str, Any]) -> None:
    _ids(f, "session_id", "entry_id")
    check.message_item({k: f.get(k) for k in ("role", "content", "name", "metadata", "payload", "created_at")}
                       | {"id": f.get("id"), "status": f.get("status") or "active"})
    if "seq" in f and f["seq"] < 0:
        raise InvalidArgument(f"seq must be >= 0, got {f['seq']!r}")


def _memory(f: dict[str, Any]) -> None:
    check.memory_item(f["text"], **{k: f.get(k) for k in ("user_id", "agent_id", "project_id", "session_id",
                                                           "category", "tags", "metadata", "actor", "trust")
                                    if f.get(k) is not None},
                      entry_id=f.get("id"), **({"role": f["role"]} if "role" in f else {}),
                      **({"confidence": f["confidence"]} if "confidence" in f else {}))
    _times(f)
    for event in f.get("history") or ():
        _event(event)


def _chat_message(f: dict[str, Any]) -> None:
    _ids(f, "session_id")
    check.message_item({k: f.get(k) for k in ("role", "content", "name", "metadata", "payload", "created_at")}
                       | {"id": f.get("id"), "status": f.get("status") or "active"})


def _history(f: dict[str, Any]) -> None:
    _ids(f, "entry_id")
    _event(f)


def _link(*ids: str, relation: bool = False) -> Callable[[dict[str, Any]], None]:
    def checked(f: dict[str, Any]) -> None:
        _ids(f, *ids)
        for name in ids:
            if f.get(name) is None:
                raise InvalidArgument(f"{name} is required")
        if relation or f.get("relation") is not None:
            _word(f.get("relation"), "relation")
        _time(f.get("created_at"), "created_at")

    return checked


def _entity(f: dict[str, Any]) -> None:
    _word(f["norm"], "norm")
    _word(f["label"], "label")
    check.optional_str(f["text"], "text")


def _vector(f: dict[str, Any]) -> None:
    _word(f["content_hash"], "content_hash")


def _trace(f: dict[str, Any]) -> None:
    _ids(f, "id")
    check.optional_str(f["query"], "query")
    scope = f.get("scope") or {}
    if not isinstance(scope, dict) or set(scope) - {"user_id", "agent_id", "project_id", "session_id"}:
        raise InvalidArgument(f"scope must be an object of user_id / agent_id / project_id / session_id, got {scope!r:.80}")
    check.scope_of(**scope)
    _strings(f.get("intents"), "intents")
    _strings(f.get("result_ids"), "result_ids")
    check.optional_str(f.get("degrade_reason"), "degrade_reason")
    _number(f.get("total_ms") or 0, "total_ms")
    _time(f["created_at"], "created_at")
    steps = f.get("steps") or []
    if not isinstance(steps, list):
        raise InvalidArgument(f"steps must be a list, got {steps!r:.80}")
    for step in steps:
        if not isinstance(step, dict):
            raise InvalidArgument(f"each step must be an object, got {step!r:.80}")
        _word(step.get("name"), "step name")
        _number(step.get("ms"), "step ms")
        candidates = step.get("candidates")
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 0:
            raise InvalidArgument(f"step candidates must be an int >= 0, got {candidates!r:.80}")
        check.metadata(step.get("params"))


_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "entity": _entity, "entry": _entry, "history": _history, "vector": _vector, "session": _session,
    "message": _message, "session_entry": _link("session_id", "entry_id"),
    "entry_source": _link("entry_id", "message_id"), "entry_link": _link("src", "dst", relation=True),
    "trace": _trace, "memory": _memory, "chat_message": _chat_message,
}
