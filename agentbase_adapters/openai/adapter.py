"""OpenAI threads, messages, runs and conversations over agentbase sessions, in OpenAI's JSON.

How OpenAI objects map onto the kernel::

    thread / conversation  ->  kernel session (same id; metadata user_id / agent_id / project_id
                               set its scope; the rest of the object lives in session.metadata["openai"])
    thread message / item  ->  kernel message, ingested into the session's scope; the OpenAI object
                               is kept in message.payload, its OpenAI metadata in message.metadata
    run                    ->  an entry of session.metadata["openai"]["runs"] (runs are not a
                               kernel concept); the reply is an assistant message

Every operation is written once, as a generator that yields the kernel calls it needs
(``_Call``), the read-modify-writes of session metadata (``_Patch``, run under the adapter's lock
because the kernel replaces metadata wholesale) and, for runs, the call to the responder
(``_Respond``). Two drivers run them:
``OpenAIAssistantAdapter`` against ``db.sync`` and ``AsyncOpenAIAssistantAdapter`` (used by the
HTTP app) against the kernel's async methods, so neither blocks where it must not and the
translation exists once.

Class tree::

    OpenAIAssistantAdapter        sync, returns OpenAI JSON dicts
    AsyncOpenAIAssistantAdapter   the same methods, async
"""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

from agentbase_adapters._require import require
from agentbase_adapters.openai._wire import (
    check_choice,
    check_limit,
    check_metadata,
    check_text,
    epoch,
    invalid,
    json_type,
    new_id,
    page,
)
from agentbase_kernel import AgentBase
from agentbase_kernel.errors import MessageNotFound, NotFoundError
from agentbase_kernel.records import Hit, Message, Session

__all__ = [
    "AsyncOpenAIAssistantAdapter",
    "OpenAIAssistantAdapter",
    "Responder",
    "to_sdk",
]

Responder = Callable[[list[dict[str, str]], list[dict[str, Any]]], "str | Awaitable[str]"]
"""``responder(messages, context) -> reply``: ``messages`` are the thread as chat messages
(``{"role", "content"}``, led by a ``system`` message when the run has instructions); ``context``
is what ``retrieve_context`` finds for the last user message. It returns the reply text."""

Shape = Literal["thread", "item", "input"]

_STATE = "openai"  # the key of session.metadata that holds what only OpenAI knows about a session
_SCOPE_KEYS = ("user_id", "agent_id", "project_id")
_UNSET: Any = object()
_T = TypeVar("_T")

# ----------------------------------------------------------------------------- translation


def _thread_blocks(content: Any, *, param: str) -> tuple[list[dict[str, Any]], str]:
    """Content given to ``messages.create`` -> (OpenAI content blocks, the plain text)."""
    if content is None:
        raise invalid(
            f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter"
        )
    if isinstance(content, str):
        parts: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list | tuple):
        parts = list(content)
    else:
        raise invalid(
            f"Invalid type for '{param}': expected a string or an array of content parts, "
            f"but got {json_type(content)} instead.",
            param=param,
            code="invalid_type",
        )
    blocks: list[dict[str, Any]] = []
    texts: list[str] = []
    for index, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, dict) else None
        where = f"{param}[{index}]"
        if kind == "text" and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": {"value": part["text"], "annotations": []}})
            texts.append(part["text"])
        elif kind in ("image_url", "image_file") and isinstance(part.get(kind), dict):
            blocks.append({"type": kind, kind: dict(part[kind])})
        else:
            raise invalid(
                f"Invalid '{where}': expected a content part of type 'text', 'image_url' or "
                f"'image_file', but got {part!r}.",
                param=where,
                code="invalid_value",
            )
    text = "\n".join(texts)
    if not text.strip() and len(blocks) == len(texts):
        raise invalid("Message content must be non-empty.", param=param, code="empty_content")
    return blocks, text


def _item_text(item: Mapping[str, Any]) -> str:
    """The words of a conversation item, which is what the kernel stores and searches."""
    kind = item.get("type", "message")
    if kind == "message":
        content = item.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(
            str(part.get("text") or part.get("refusal") or "")
            for part in content or []
            if isinstance(part, dict)
        ).strip()
    if kind == "function_call":
        return f"{item.get('name')}({item.get('arguments', '')})"
    if kind == "function_call_output":
        output = item.get("output")
        if isinstance(output, str):
            return output
        return _item_text({"type": "message", "content": output})
    if kind == "reasoning":
        return _item_text({"type": "message", "content": item.get("summary")})
    return json.dumps(dict(item), sort_keys=True, default=str)


def _check_item(item: Any, *, param: str) -> dict[str, Any]:
    """Check one Responses input item (an easy message, a message, or any typed item)."""
    if not isinstance(item, dict):
        raise invalid(
            f"Invalid type for '{param}': expected an object, but got {json_type(item)} instead.",
            param=param,
            code="invalid_type",
        )
    kind = item.get("type", "message" if "role" in item else None)
    if not isinstance(kind, str):
        raise invalid(
            f"Missing required parameter: '{param}.type'.",
            param=f"{param}.type",
            code="missing_required_parameter",
        )
    if kind == "message":
        check_choice(item.get("role"), ("user", "assistant", "system", "developer"), param=f"{param}.role")
        if not isinstance(item.get("content"), str | list):
            raise invalid(
                f"Invalid type for '{param}.content': expected a string or an array of content "
                f"parts, but got {json_type(item.get('content'))} instead.",
                param=f"{param}.content",
                code="invalid_type",
            )
    return dict(item)


def _to_record(obj: Mapping[str, Any], *, shape: Shape, param: str = "content") -> dict[str, Any]:
    """An OpenAI message or item -> the keyword arguments of the kernel's ``add_message``.

    ``shape="thread"``: ``obj`` is a ``messages.create`` body (``role``, ``content``,
    ``attachments``, ``metadata``, and for run replies ``assistant_id`` / ``run_id``).
    ``shape="item"`` / ``"input"``: ``obj`` is a Responses input item, stored verbatim.
    """
    if shape == "thread":
        blocks, text = _thread_blocks(obj.get("content"), param=param)
        payload = {
            "object": "thread.message",
            "role": obj["role"],
            "content": blocks,
            "attachments": list(obj.get("attachments") or []),
            "assistant_id": obj.get("assistant_id"),
            "run_id": obj.get("run_id"),
        }
        return {
            "message_id": new_id("msg"),
            "role": obj["role"],
            "content": text,
            "metadata": check_metadata(obj.get("metadata"), param=_sibling(param, "metadata")),
            "payload": payload,
            "ingest": bool(text.strip()),
        }
    if not isinstance(obj, Mapping):
        raise invalid(f"Invalid type for '{param}': expected an object, but got {json_type(obj)}.",
                      param=param, code="invalid_type")
    item = _check_item(dict(obj), param=param)
    kind = item.get("type", "message")
    text = _item_text(item)
    role = item.get("role") if kind == "message" else ("tool" if kind.endswith("_output") else "assistant")
    return {
        "message_id": new_id("msg" if kind == "message" else "item"),
        "role": role,
        "content": text,
        "payload": {"object": "conversation.item", "item": item},
        # Only what people said is memory; tool plumbing is kept but not ingested.
        "ingest": kind == "message" and bool(text.strip()),
    }


def _sibling(param: str, name: str) -> str:
    """``messages[2].content`` -> ``messages[2].metadata``; ``content`` -> ``metadata``."""
    head, _, _ = param.rpartition(".")
    return f"{head}.{name}" if head else name


_CHAT_ROLES = {"ai": "assistant", "human": "user"}


def _thread_role(role: str) -> str:
    return "assistant" if role in ("assistant", "ai") else "user"


def _item_role(role: str) -> str:
    roles = {"ai": "assistant", "human": "user"}
    role = roles.get(role, role)
    known = ("user", "assistant", "system", "developer", "tool", "critic", "discriminator")
    return role if role in known else "unknown"


def _parts(role: str, content: Any) -> list[dict[str, Any]]:
    """Responses content parts for a message: ``output_text`` for the assistant, else ``input_text``."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    parts: list[dict[str, Any]] = []
    for part in content or []:
        if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text"):
            if role == "assistant":
                parts.append({"type": "output_text", "text": part.get("text", ""), "annotations": []})
            else:
                parts.append({"type": "input_text", "text": part.get("text", "")})
        elif isinstance(part, dict):
            parts.append(dict(part))
    return parts


def _stored(record: Message) -> tuple[str | None, dict[str, Any]]:
    """Which of our payloads a kernel message carries: ``("thread.message", payload)``,
    ``("conversation.item", item)`` or ``(None, {})`` for messages other adapters wrote."""
    payload = record.payload
    if isinstance(payload, dict):
        if payload.get("object") == "thread.message":
            return "thread.message", payload
        if payload.get("object") == "conversation.item" and isinstance(payload.get("item"), dict):
            return "conversation.item", payload["item"]
    return None, {}


def _from_record(record: Message, *, shape: Shape) -> dict[str, Any]:
    """A kernel message -> an OpenAI thread message, conversation item or agents input item.

    Messages that another adapter wrote (LangChain, LlamaIndex, Mem0, ...) come back as text
    messages with their role, so every session of the file reads as a thread.
    """
    kind, stored = _stored(record)
    if shape == "thread":
        if kind == "thread.message":
            role, blocks = stored["role"], stored["content"]
        else:
            role = _thread_role(record.role)
            blocks = [{"type": "text", "text": {"value": record.content, "annotations": []}}]
        created = epoch(record.created_at)
        return {
            "id": record.id,
            "object": "thread.message",
            "created_at": created,
            "thread_id": record.session_id,
            "role": role,
            "content": blocks,
            "assistant_id": stored.get("assistant_id"),
            "run_id": stored.get("run_id"),
            "attachments": stored.get("attachments", []),
            "metadata": dict(record.metadata or {}),
            "status": "completed",
            "completed_at": created,
            "incomplete_at": None,
            "incomplete_details": None,
        }
    if kind == "conversation.item":
        item = dict(stored)
    elif kind == "thread.message":
        texts = [b["text"]["value"] for b in stored["content"] if b.get("type") == "text"]
        item = {"type": "message", "role": stored["role"], "content": "\n".join(texts)}
    else:
        item = {"type": "message", "role": _item_role(record.role), "content": record.content}
    if shape == "input":
        if kind != "conversation.item" and item["role"] not in ("user", "assistant", "system", "developer"):
            item["role"] = "user"
        return item
    if item.get("type", "message") == "message":
        role = item["role"]
        return {
            "id": record.id,
            "type": "message",
            "role": role,
            "status": item.get("status") or "completed",
            "content": _parts(role, item.get("content")),
        }
    return {**item, "id": record.id, "status": item.get("status") or "completed"}


def _scope(metadata: Mapping[str, str]) -> dict[str, str]:
    return {key: metadata[key] for key in _SCOPE_KEYS if key in metadata}


def _state(session: Session) -> dict[str, Any]:
    state = (session.metadata or {}).get(_STATE)
    return dict(state) if isinstance(state, dict) else {}


def _with_state(session: Session, state: dict[str, Any]) -> dict[str, Any]:
    """The session's whole metadata with our part replaced (other adapters' keys are kept)."""
    return {**(session.metadata or {}), _STATE: state}


def _public_metadata(session: Session) -> dict[str, str]:
    state = _state(session)
    if isinstance(state.get("metadata"), dict):
        return dict(state["metadata"])
    # A session another adapter made: its scope is the only metadata it has.
    return {key: str(value) for key, value in session.scope.as_dict().items() if key in _SCOPE_KEYS}


def _thread(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "object": "thread",
        "created_at": epoch(session.created_at),
        "metadata": _public_metadata(session),
        "tool_resources": _state(session).get("tool_resources") or {},
    }


def _conversation(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "object": "conversation",
        "created_at": epoch(session.created_at),
        "metadata": _public_metadata(session),
    }


def _context(hit: Hit) -> dict[str, Any]:
    return {
        "id": hit.id,
        "content": hit.content,
        "score": hit.score,
        "role": hit.entry.role,
        "message_ids": [p.message_id for p in hit.provenance],
        "created_at": epoch(hit.entry.created_at),
    }


def _fixed_scope(session: Session, metadata: dict[str, str], *, param: str) -> dict[str, str]:
    """Keep the scope keys of an update equal to the session's scope (the kernel cannot move a
    session to another scope); an update that omits them keeps them."""
    scope = session.scope.as_dict()
    for key in _SCOPE_KEYS:
        current, wanted = scope.get(key), metadata.get(key)
        if wanted is None and current is not None:
            if len(metadata) >= 16:
                raise invalid(
                    f"Invalid '{param}': '{key}' is this session's scope and counts towards the "
                    "16 keys, so at most 15 other keys fit.",
                    param=param,
                    code="object_above_max_properties",
                )
            metadata[key] = current
        elif wanted is not None and wanted != current:
            raise invalid(
                f"Invalid '{param}.{key}': {key} is the memory scope of this session and is fixed "
                f"when it is created (it is {current!r}); create a new one for another scope.",
                param=f"{param}.{key}",
                code="immutable_scope",
            )
    return metadata


def _window(
    items: list[dict[str, Any]], *, order: str, after: str | None, before: str | None
) -> list[dict[str, Any]]:
    """Runs (which live in session metadata) in ``order`` between exclusive cursors."""
    ordered = items if order == "asc" else items[::-1]
    ids = [item["id"] for item in ordered]
    start, stop = 0, len(ordered)
    for cursor, param in ((after, "after"), (before, "before")):
        if cursor is not None and cursor not in ids:
            raise invalid(f"Invalid '{param}': no run with id {cursor!r} in this thread.", param=param)
    if after is not None:
        start = ids.index(after) + 1
    if before is not None:
        stop = ids.index(before)
    return ordered[start:stop]


# ----------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class _Call:
    """One kernel call an operation needs: ``getattr(kernel, method)(*args, **kwargs)``."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Respond:
    """The call to the responder a run needs."""

    messages: list[dict[str, str]]
    context: list[dict[str, Any]]


@dataclass(frozen=True)
class _Patch:
    """A read-modify-write of our part of a session's metadata. The kernel replaces metadata
    wholesale and has no compare-and-set, so the driver runs it under the adapter's lock."""

    session_id: str
    change: Callable[[Session, dict[str, Any]], None]


_Op = Generator["_Call | _Respond | _Patch", Any, _T]


def _k(method: str, *args: Any, **kwargs: Any) -> _Call:
    return _Call(method, args, kwargs)


_RUN_ARGUMENTS = (
    "model",
    "instructions",
    "additional_instructions",
    "additional_messages",
    "metadata",
    "tools",
    "stream",
)
_RUN_OPTIONS = (
    "max_completion_tokens",
    "max_prompt_tokens",
    "response_format",
    "temperature",
    "tool_choice",
    "top_p",
    "truncation_strategy",
)


class _Operations:
    """Every OpenAI operation as a generator of kernel calls (see the module docstring)."""

    def __init__(self, *, has_responder: bool) -> None:
        self.has_responder = has_responder

    # -- sessions

    def _session(self, session_id: str) -> _Op[Session]:
        session: Session = yield _k("get_session", session_id)
        return session

    def _create_session(self, prefix: str, kind: str, metadata: Any, extra: dict[str, Any]) -> _Op[Session]:
        meta = check_metadata(metadata)
        session: Session = yield _k(
            "create_session",
            new_id(prefix, nbytes=24 if prefix == "conv" else 12),
            **_scope(meta),
            metadata={_STATE: {"object": kind, "metadata": meta, **extra}},
        )
        return session

    def _update_state(
        self, session_id: str, change: Callable[[Session, dict[str, Any]], None]
    ) -> _Op[Session]:
        updated: Session = yield _Patch(session_id, change)
        return updated

    # -- threads

    def create_thread(
        self, *, messages: Any = None, metadata: Any = None, tool_resources: Any = None
    ) -> _Op[dict[str, Any]]:
        records = self._thread_records(messages, param="messages")
        extra = {"tool_resources": tool_resources or {}}
        session = yield from self._create_session("thread", "thread", metadata, extra)
        if records:
            yield _k("add_messages", session.id, records)
        return _thread(session)

    def _thread_records(self, messages: Any, *, param: str) -> list[dict[str, Any]]:
        if messages is None:
            return []
        if not isinstance(messages, list | tuple):
            raise invalid(
                f"Invalid type for '{param}': expected an array, but got {json_type(messages)} instead.",
                param=param,
                code="invalid_type",
            )
        records = []
        for index, message in enumerate(messages):
            where = f"{param}[{index}]"
            if not isinstance(message, dict):
                raise invalid(
                    f"Invalid type for '{where}': expected an object, but got {json_type(message)} instead.",
                    param=where,
                    code="invalid_type",
                )
            check_choice(message.get("role"), ("user", "assistant"), param=f"{where}.role")
            records.append(_to_record(message, shape="thread", param=f"{where}.content"))
        return records

    def retrieve_thread(self, thread_id: str) -> _Op[dict[str, Any]]:
        session = yield from self._session(thread_id)
        return _thread(session)

    def modify_thread(
        self, thread_id: str, *, metadata: Any = _UNSET, tool_resources: Any = _UNSET
    ) -> _Op[dict[str, Any]]:
        meta = None if metadata is _UNSET else check_metadata(metadata)

        def change(session: Session, state: dict[str, Any]) -> None:
            if meta is not None:
                state["metadata"] = _fixed_scope(session, meta, param="metadata")
            if tool_resources is not _UNSET:
                state["tool_resources"] = tool_resources or {}

        session = yield from self._update_state(thread_id, change)
        return _thread(session)

    def delete_thread(self, thread_id: str, *, kind: str = "thread") -> _Op[dict[str, Any]]:
        yield from self._session(thread_id)
        yield _k("delete_session", thread_id)
        return {"id": thread_id, "object": f"{kind}.deleted", "deleted": True}

    # -- thread messages

    def create_message(
        self, thread_id: str, *, role: Any, content: Any, attachments: Any = None, metadata: Any = None
    ) -> _Op[dict[str, Any]]:
        check_choice(role, ("user", "assistant"), param="role")
        body = {"role": role, "content": content, "attachments": attachments, "metadata": metadata}
        record = _to_record(body, shape="thread")
        yield from self._session(thread_id)
        message: Message = yield _k("add_message", thread_id, **record)
        return _from_record(message, shape="thread")

    def list_messages(
        self,
        thread_id: str,
        *,
        limit: Any = None,
        order: Any = None,
        after: str | None = None,
        before: str | None = None,
        run_id: str | None = None,
        shape: Shape = "thread",
        default_order: str = "desc",
    ) -> _Op[dict[str, Any]]:
        size = check_limit(limit)
        direction = check_choice(order or default_order, ("asc", "desc"), param="order")
        yield from self._session(thread_id)
        cursors = {"order": direction, "after": after or None, "before": before or None}
        # The kernel cannot filter messages on their payload, so a run's messages are picked here.
        call = _k("list_messages", thread_id, limit=size + 1 if run_id is None else None, **cursors)
        try:
            records: list[Message] = yield call
        except MessageNotFound as exc:
            param = "after" if exc.message_id == cursors["after"] else "before"
            raise invalid(
                f"Invalid '{param}': no message with id '{exc.message_id}' in this thread.", param=param
            ) from exc
        if run_id is not None:
            records = [r for r in records if _stored(r)[1].get("run_id") == run_id][: size + 1]
        data = [_from_record(record, shape=shape) for record in records[:size]]
        return page(data, has_more=len(records) > size)

    def retrieve_message(
        self, thread_id: str, message_id: str, *, shape: Shape = "thread"
    ) -> _Op[dict[str, Any]]:
        message = yield from self._message(thread_id, _k("get_message", thread_id, message_id))
        return _from_record(message, shape=shape)

    def modify_message(
        self, thread_id: str, message_id: str, *, metadata: Any = _UNSET
    ) -> _Op[dict[str, Any]]:
        if metadata is _UNSET:
            message = yield from self._message(thread_id, _k("get_message", thread_id, message_id))
        else:
            meta = check_metadata(metadata)
            message = yield from self._message(
                thread_id, _k("update_message", thread_id, message_id, metadata=meta)
            )
        return _from_record(message, shape="thread")

    def delete_message(self, thread_id: str, message_id: str) -> _Op[dict[str, Any]]:
        yield from self._message(thread_id, _k("delete_message", thread_id, message_id))
        return {"id": message_id, "object": "thread.message.deleted", "deleted": True}

    def _message(self, session_id: str, call: _Call) -> _Op[Message]:
        try:
            message: Message = yield call
        except MessageNotFound:
            yield from self._session(session_id)  # a missing thread is reported as such
            raise
        return message

    # -- retrieval

    def retrieve_context(self, thread_id: str, *, query: Any, top_k: int = 5) -> _Op[list[dict[str, Any]]]:
        text = check_text(query, param="query")
        session = yield from self._session(thread_id)
        return (yield from self._find(session, text, top_k))

    def _find(self, session: Session, query: str, top_k: int) -> _Op[list[dict[str, Any]]]:
        scope = {**session.scope.as_dict(), "session_id": session.id}
        hits: Iterable[Hit] = yield _k("find", query, top_k=top_k, **scope)
        return [_context(hit) for hit in hits]

    # -- runs

    def create_run(
        self,
        thread_id: str,
        *,
        assistant_id: Any,
        model: Any = None,
        instructions: Any = None,
        additional_instructions: Any = None,
        additional_messages: Any = None,
        metadata: Any = None,
        tools: Any = None,
        stream: Any = None,
        options: Mapping[str, Any] | None = None,
        top_k: int = 5,
    ) -> _Op[dict[str, Any]]:
        self._check_runnable(stream)
        check_text(assistant_id, param="assistant_id")
        meta = check_metadata(metadata)
        extra = self._thread_records(additional_messages, param="additional_messages")
        session = yield from self._session(thread_id)
        now = epoch(None)
        prompt = "\n\n".join(str(part) for part in (instructions, additional_instructions) if part)
        run: dict[str, Any] = {
            "id": new_id("run"),
            "object": "thread.run",
            "created_at": now,
            "thread_id": thread_id,
            "assistant_id": assistant_id,
            "status": "in_progress",
            "started_at": now,
            "expires_at": None,
            "cancelled_at": None,
            "failed_at": None,
            "completed_at": None,
            "required_action": None,
            "last_error": None,
            "incomplete_details": None,
            "model": model if isinstance(model, str) and model else "agentbase-responder",
            "instructions": prompt,
            "tools": list(tools or []),
            "metadata": meta,
            "usage": None,
            "parallel_tool_calls": True,
            **{key: None for key in _RUN_OPTIONS},
            **{
                key: value
                for key, value in (options or {}).items()
                if key in _RUN_OPTIONS or key == "parallel_tool_calls"
            },
        }
        if extra:
            yield _k("add_messages", thread_id, extra)
        records: list[Message] = yield _k("list_messages", thread_id)
        chat = [{"role": "system", "content": prompt}] if prompt else []
        for record in records:
            message = _from_record(record, shape="thread")
            text = "\n".join(b["text"]["value"] for b in message["content"] if b["type"] == "text")
            # The kernel's role, not the thread's user/assistant: other adapters' system or tool
            # turns reach the responder as what they are.
            chat.append({"role": _CHAT_ROLES.get(record.role, record.role), "content": text})
        query = next(
            (m["content"] for m in reversed(chat) if m["role"] == "user" and m["content"].strip()), None
        )
        context = (yield from self._find(session, query, top_k)) if query else []
        try:
            reply = yield _Respond(chat, context)
            if not isinstance(reply, str) or not reply.strip():
                raise TypeError(f"it returned {json_type(reply)}; a responder returns the reply text")
        except Exception as exc:  # a failing responder fails the run, as a failing model does
            run.update(
                status="failed",
                failed_at=epoch(None),
                last_error={
                    "code": "server_error",
                    "message": f"The responder failed: {type(exc).__name__}: {exc}",
                },
            )
        else:
            answer = {
                "role": "assistant",
                "content": reply,
                "assistant_id": assistant_id,
                "run_id": run["id"],
            }
            yield _k("add_message", thread_id, **_to_record(answer, shape="thread"))
            words = sum(len(m["content"].split()) for m in chat)
            run.update(
                status="completed",
                completed_at=epoch(None),
                usage={
                    "prompt_tokens": words,
                    "completion_tokens": len(reply.split()),
                    "total_tokens": words + len(reply.split()),
                },
            )
        yield from self._update_state(thread_id, lambda _, state: state.setdefault("runs", []).append(run))
        return run

    def _check_runnable(self, stream: Any) -> None:
        if not self.has_responder:
            raise invalid(
                "Runs need a responder: this agentbase server stores threads but bundles no model. "
                "Pass responder=fn (fn(messages, context) -> reply text) to create_app(), serve() "
                "or OpenAIAssistantAdapter().",
                param=None,
                code="responder_not_configured",
            )
        if stream:
            raise invalid(
                "Streaming runs are not supported by this server; call runs.create without stream=True.",
                param="stream",
                code="unsupported_parameter",
            )

    def create_thread_and_run(
        self, *, assistant_id: Any, thread: Any = None, **run: Any
    ) -> _Op[dict[str, Any]]:
        self._check_runnable(run.get("stream"))
        check_text(assistant_id, param="assistant_id")
        body = thread if isinstance(thread, dict) else {}
        created = yield from self.create_thread(
            messages=body.get("messages"),
            metadata=body.get("metadata"),
            tool_resources=body.get("tool_resources"),
        )
        named = {key: run.pop(key) for key in _RUN_ARGUMENTS if key in run}
        options = {**run.pop("options", {}), **run}
        return (
            yield from self.create_run(created["id"], assistant_id=assistant_id, options=options, **named)
        )

    def _runs(self, thread_id: str) -> _Op[list[dict[str, Any]]]:
        session = yield from self._session(thread_id)
        return list(_state(session).get("runs") or [])

    def retrieve_run(self, thread_id: str, run_id: str) -> _Op[dict[str, Any]]:
        for run in (yield from self._runs(thread_id)):
            if run["id"] == run_id:
                return dict(run)
        raise NotFoundError(f"No run found with id '{run_id}'.")

    def list_runs(
        self,
        thread_id: str,
        *,
        limit: Any = None,
        order: Any = None,
        after: str | None = None,
        before: str | None = None,
    ) -> _Op[dict[str, Any]]:
        size = check_limit(limit)
        direction = check_choice(order or "desc", ("asc", "desc"), param="order")
        runs = _window(
            (yield from self._runs(thread_id)), order=direction, after=after or None, before=before or None
        )
        return page(runs[:size], has_more=len(runs) > size)

    def modify_run(self, thread_id: str, run_id: str, *, metadata: Any = _UNSET) -> _Op[dict[str, Any]]:
        run = yield from self.retrieve_run(thread_id, run_id)
        if metadata is _UNSET:
            return run
        run["metadata"] = check_metadata(metadata)

        def change(_: Session, state: dict[str, Any]) -> None:
            state["runs"] = [run if r["id"] == run_id else r for r in state.get("runs") or []]

        yield from self._update_state(thread_id, change)
        return run

    def cancel_run(self, thread_id: str, run_id: str) -> _Op[dict[str, Any]]:
        run = yield from self.retrieve_run(thread_id, run_id)
        # Runs finish inside runs.create, so there is never one left to cancel.
        raise invalid(f"Cannot cancel run with status '{run['status']}'.", param=None, code=None)

    # -- conversations

    def create_conversation(self, *, items: Any = None, metadata: Any = None) -> _Op[dict[str, Any]]:
        records = self._item_records(items, max_items=20)
        session = yield from self._create_session("conv", "conversation", metadata, {})
        if records:
            yield _k("add_messages", session.id, records)
        return _conversation(session)

    def _item_records(self, items: Any, *, max_items: int | None = None) -> list[dict[str, Any]]:
        if items is None:
            return []
        if not isinstance(items, list | tuple):
            raise invalid(
                f"Invalid type for 'items': expected an array, but got {json_type(items)} instead.",
                param="items",
                code="invalid_type",
            )
        if max_items is not None and len(items) > max_items:
            raise invalid(
                f"Invalid 'items': array too long. Expected an array with maximum length {max_items}, "
                f"but got an array with length {len(items)} instead.",
                param="items",
                code="array_above_max_length",
            )
        return [_to_record(item, shape="item", param=f"items[{i}]") for i, item in enumerate(items)]

    def retrieve_conversation(self, conversation_id: str) -> _Op[dict[str, Any]]:
        session = yield from self._session(conversation_id)
        return _conversation(session)

    def update_conversation(self, conversation_id: str, *, metadata: Any) -> _Op[dict[str, Any]]:
        meta = check_metadata(metadata)

        def change(session: Session, state: dict[str, Any]) -> None:
            state["metadata"] = _fixed_scope(session, meta, param="metadata")

        session = yield from self._update_state(conversation_id, change)
        return _conversation(session)

    def create_items(self, conversation_id: str, *, items: Any) -> _Op[dict[str, Any]]:
        if items is None:
            raise invalid(
                "Missing required parameter: 'items'.", param="items", code="missing_required_parameter"
            )
        records = self._item_records(items, max_items=20)
        if not records:
            raise invalid(
                "Invalid 'items': empty array. Expected an array with minimum length 1, "
                "but got an empty array instead.",
                param="items",
                code="empty_array",
            )
        yield from self._session(conversation_id)
        added: list[Message] = yield _k("add_messages", conversation_id, records)
        return page([_from_record(m, shape="item") for m in added], has_more=False)

    def delete_item(self, conversation_id: str, item_id: str) -> _Op[dict[str, Any]]:
        yield from self._message(conversation_id, _k("delete_message", conversation_id, item_id))
        session = yield from self._session(conversation_id)
        return _conversation(session)


# ----------------------------------------------------------------------------- drivers


def _drive_sync(op: _Op[_T], kernel: Any, responder: Responder | None, lock: threading.Lock) -> _T:
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = op.throw(error) if error is not None else op.send(value)
        except StopIteration as stop:
            return cast(_T, stop.value)
        value, error = None, None
        try:
            if isinstance(step, _Call):
                value = getattr(kernel, step.method)(*step.args, **step.kwargs)
            elif isinstance(step, _Patch):
                with lock:
                    session = kernel.get_session(step.session_id)
                    state = _state(session)
                    step.change(session, state)
                    value = kernel.update_session(step.session_id, metadata=_with_state(session, state))
            else:
                assert responder is not None  # _check_runnable() ran first
                value = responder(step.messages, step.context)
        except Exception as exc:
            error = exc


async def _drive_async(op: _Op[_T], db: AgentBase, responder: Responder | None, lock: asyncio.Lock) -> _T:
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = op.throw(error) if error is not None else op.send(value)
        except StopIteration as stop:
            return cast(_T, stop.value)
        value, error = None, None
        try:
            if isinstance(step, _Call):
                value = await getattr(db, step.method)(*step.args, **step.kwargs)
            elif isinstance(step, _Patch):
                async with lock:
                    session = await db.get_session(step.session_id)
                    state = _state(session)
                    step.change(session, state)
                    value = await db.update_session(step.session_id, metadata=_with_state(session, state))
            else:
                assert responder is not None
                if inspect.iscoroutinefunction(responder):
                    value = await responder(step.messages, step.context)
                else:
                    # A plain function may block (a model call): keep it off the event loop.
                    value = await asyncio.to_thread(responder, step.messages, step.context)
                if inspect.isawaitable(value):
                    value = await value
        except Exception as exc:
            error = exc


# ----------------------------------------------------------------------------- public classes


class OpenAIAssistantAdapter:
    """OpenAI threads, messages, runs and conversations as OpenAI JSON dicts, kept in one agentbase file.

    Usage::

        oa = OpenAIAssistantAdapter(AgentBase("memory.db"))
        thread = oa.create_thread(metadata={"agent_id": "my-agent"})
        oa.create_message(thread_id=thread["id"], role="user", content="Hello")

    Every method returns the JSON object OpenAI's API returns (``to_sdk`` turns it into the SDK's
    typed object). Bad input raises ``InvalidArgument`` (a ``ValueError``); an unknown thread,
    conversation, message, item or run raises a ``NotFoundError`` (a ``KeyError``).

    Args:
        db: The agentbase database; the adapter uses its sync twins (``db.sync``).
        responder: ``fn(messages, context) -> reply text``, needed by runs only (see ``Responder``).
    """

    def __init__(self, db: AgentBase, *, responder: Responder | None = None) -> None:
        if responder is not None and inspect.iscoroutinefunction(responder):
            raise TypeError(
                "An async responder needs AsyncOpenAIAssistantAdapter (or the server); "
                "pass a plain function here."
            )
        self.db = db
        self.responder = responder
        self._ops = _Operations(has_responder=responder is not None)
        self._lock = threading.Lock()

    def _run(self, op: _Op[_T]) -> _T:
        return _drive_sync(op, self.db.sync, self.responder, self._lock)

    # threads
    def create_thread(
        self,
        *,
        messages: list[dict[str, Any]] | None = None,
        metadata: dict[str, str] | None = None,
        tool_resources: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create a thread (a kernel session; ``metadata`` user_id / agent_id / project_id set its scope)."""
        return self._run(
            self._ops.create_thread(messages=messages, metadata=metadata, tool_resources=tool_resources)
        )

    def retrieve_thread(self, thread_id: str) -> dict[str, Any]:
        """Return the thread; ``SessionNotFound`` if there is none."""
        return self._run(self._ops.retrieve_thread(thread_id))

    def modify_thread(
        self,
        thread_id: str,
        *,
        metadata: dict[str, str] | None = _UNSET,
        tool_resources: dict[str, Any] | None = _UNSET,
    ) -> dict[str, Any]:
        """Replace the thread's metadata (its scope keys cannot change) and/or tool resources."""
        return self._run(self._ops.modify_thread(thread_id, metadata=metadata, tool_resources=tool_resources))

    def delete_thread(self, thread_id: str) -> dict[str, Any]:
        """Delete the thread, its messages and the memories made from them."""
        return self._run(self._ops.delete_thread(thread_id))

    # messages
    def create_message(
        self,
        thread_id: str,
        *,
        role: str,
        content: str | list[dict[str, Any]],
        attachments: list[dict[str, Any]] | None = None,
        metadata: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Add a ``user`` or ``assistant`` message; its text is ingested into the thread's scope."""
        return self._run(
            self._ops.create_message(
                thread_id, role=role, content=content, attachments=attachments, metadata=metadata
            )
        )

    def list_messages(
        self,
        thread_id: str,
        *,
        limit: int | None = None,
        order: str | None = None,
        after: str | None = None,
        before: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """One page of messages (``limit`` 1-100, default 20; ``order`` default ``"desc"``)."""
        return self._run(
            self._ops.list_messages(
                thread_id, limit=limit, order=order, after=after, before=before, run_id=run_id
            )
        )

    def retrieve_message(self, thread_id: str, message_id: str) -> dict[str, Any]:
        """Return one message; ``MessageNotFound`` / ``SessionNotFound``."""
        return self._run(self._ops.retrieve_message(thread_id, message_id))

    def modify_message(
        self, thread_id: str, message_id: str, *, metadata: dict[str, str] | None = _UNSET
    ) -> dict[str, Any]:
        """Replace a message's metadata."""
        return self._run(self._ops.modify_message(thread_id, message_id, metadata=metadata))

    def delete_message(self, thread_id: str, message_id: str) -> dict[str, Any]:
        """Delete a message and the memory made from it."""
        return self._run(self._ops.delete_message(thread_id, message_id))

    def retrieve_context(self, thread_id: str, *, query: str, top_k: int = 5) -> list[dict[str, Any]]:
        """What the kernel's ``find`` returns for ``query`` in the thread's scope, best first.

        Each item is ``{"id", "content", "score", "role", "message_ids", "created_at"}``.
        """
        return self._run(self._ops.retrieve_context(thread_id, query=query, top_k=top_k))

    # runs
    def create_run(
        self,
        thread_id: str,
        *,
        assistant_id: str,
        model: str | None = None,
        instructions: str | None = None,
        additional_instructions: str | None = None,
        additional_messages: list[dict[str, Any]] | None = None,
        metadata: dict[str, str] | None = None,
        tools: list[dict[str, Any]] | None = None,
        stream: bool | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Answer the thread with the responder; the run comes back finished (``completed`` or ``failed``).

        ``options`` (``temperature``, ``top_p``, ``tool_choice``, ``response_format``,
        ``truncation_strategy``, ``max_prompt_tokens``, ``max_completion_tokens``,
        ``parallel_tool_calls``) are echoed on the run for the responder's caller; others are ignored.
        Raises ``InvalidArgument`` without a responder or with ``stream=True``.
        """
        return self._run(
            self._ops.create_run(
                thread_id,
                assistant_id=assistant_id,
                model=model,
                instructions=instructions,
                additional_instructions=additional_instructions,
                additional_messages=additional_messages,
                metadata=metadata,
                tools=tools,
                stream=stream,
                options=options,
            )
        )

    def create_thread_and_run(
        self, *, assistant_id: str, thread: dict[str, Any] | None = None, **run: Any
    ) -> dict[str, Any]:
        """Create a thread from ``thread`` (``messages``, ``metadata``, ``tool_resources``) and run it.

        ``run`` takes ``create_run``'s keyword arguments.
        """
        return self._run(self._ops.create_thread_and_run(assistant_id=assistant_id, thread=thread, **run))

    def cancel_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """Runs finish inside ``create_run``: this raises ``InvalidArgument`` ("Cannot cancel run ...")."""
        return self._run(self._ops.cancel_run(thread_id, run_id))

    def retrieve_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """Return a run; ``NotFoundError`` if the thread has none with this id."""
        return self._run(self._ops.retrieve_run(thread_id, run_id))

    def list_runs(
        self,
        thread_id: str,
        *,
        limit: int | None = None,
        order: str | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> dict[str, Any]:
        """One page of the thread's runs."""
        return self._run(self._ops.list_runs(thread_id, limit=limit, order=order, after=after, before=before))

    def modify_run(
        self, thread_id: str, run_id: str, *, metadata: dict[str, str] | None = _UNSET
    ) -> dict[str, Any]:
        """Replace a run's metadata."""
        return self._run(self._ops.modify_run(thread_id, run_id, metadata=metadata))

    # conversations
    def create_conversation(
        self, *, items: list[dict[str, Any]] | None = None, metadata: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Create a conversation (a kernel session) with up to 20 initial items."""
        return self._run(self._ops.create_conversation(items=items, metadata=metadata))

    def retrieve_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Return the conversation; ``SessionNotFound`` if there is none."""
        return self._run(self._ops.retrieve_conversation(conversation_id))

    def update_conversation(self, conversation_id: str, *, metadata: dict[str, str] | None) -> dict[str, Any]:
        """Replace the conversation's metadata (its scope keys cannot change)."""
        return self._run(self._ops.update_conversation(conversation_id, metadata=metadata))

    def delete_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Delete the conversation and its items."""
        return self._run(self._ops.delete_thread(conversation_id, kind="conversation"))

    def create_items(self, conversation_id: str, *, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Add up to 20 Responses input items; returns them as a list object."""
        return self._run(self._ops.create_items(conversation_id, items=items))

    def list_items(
        self,
        conversation_id: str,
        *,
        limit: int | None = None,
        order: str | None = None,
        after: str | None = None,
    ) -> dict[str, Any]:
        """One page of items (``order`` default ``"desc"``, as OpenAI's)."""
        return self._run(
            self._ops.list_messages(conversation_id, limit=limit, order=order, after=after, shape="item")
        )

    def retrieve_item(self, conversation_id: str, item_id: str) -> dict[str, Any]:
        """Return one item; ``MessageNotFound`` / ``SessionNotFound``."""
        return self._run(self._ops.retrieve_message(conversation_id, item_id, shape="item"))

    def delete_item(self, conversation_id: str, item_id: str) -> dict[str, Any]:
        """Delete one item; returns the conversation, as OpenAI does."""
        return self._run(self._ops.delete_item(conversation_id, item_id))


class AsyncOpenAIAssistantAdapter:
    """The async twin of ``OpenAIAssistantAdapter``: the same methods, awaiting the kernel's async calls.

    Usage::

        oa = AsyncOpenAIAssistantAdapter(AgentBase("memory.db"))
        thread = await oa.create_thread(metadata={"user_id": "alice"})
        await oa.create_message(thread["id"], role="user", content="Hello")

    A plain-function responder runs in a worker thread; an ``async def`` responder is awaited.
    """

    def __init__(self, db: AgentBase, *, responder: Responder | None = None) -> None:
        self.db = db
        self.responder = responder
        self._ops = _Operations(has_responder=responder is not None)
        self._lock = asyncio.Lock()

    async def _run(self, op: _Op[_T]) -> _T:
        return await _drive_async(op, self.db, self.responder, self._lock)

    # threads
    async def create_thread(
        self,
        *,
        messages: list[dict[str, Any]] | None = None,
        metadata: dict[str, str] | None = None,
        tool_resources: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create a thread (a kernel session; ``metadata`` user_id / agent_id / project_id set its scope)."""
        return await self._run(
            self._ops.create_thread(messages=messages, metadata=metadata, tool_resources=tool_resources)
        )

    async def retrieve_thread(self, thread_id: str) -> dict[str, Any]:
        """Return the thread; ``SessionNotFound`` if there is none."""
        return await self._run(self._ops.retrieve_thread(thread_id))

    async def modify_thread(
        self,
        thread_id: str,
        *,
        metadata: dict[str, str] | None = _UNSET,
        tool_resources: dict[str, Any] | None = _UNSET,
    ) -> dict[str, Any]:
        """Replace the thread's metadata (its scope keys cannot change) and/or tool resources."""
        return await self._run(
            self._ops.modify_thread(thread_id, metadata=metadata, tool_resources=tool_resources)
        )

    async def delete_thread(self, thread_id: str) -> dict[str, Any]:
        """Delete the thread, its messages and the memories made from them."""
        return await self._run(self._ops.delete_thread(thread_id))

    # messages
    async def create_message(
        self,
        thread_id: str,
        *,
        role: str,
        content: str | list[dict[str, Any]],
        attachments: list[dict[str, Any]] | None = None,
        metadata: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Add a ``user`` or ``assistant`` message; its text is ingested into the thread's scope."""
        return await self._run(
            self._ops.create_message(
                thread_id, role=role, content=content, attachments=attachments, metadata=metadata
            )
        )

    async def list_messages(
        self,
        thread_id: str,
        *,
        limit: int | None = None,
        order: str | None = None,
        after: str | None = None,
        before: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """One page of messages (``limit`` 1-100, default 20; ``order`` default ``"desc"``)."""
        return await self._run(
            self._ops.list_messages(
                thread_id, limit=limit, order=order, after=after, before=before, run_id=run_id
            )
        )

    async def retrieve_message(self, thread_id: str, message_id: str) -> dict[str, Any]:
        """Return one message; ``MessageNotFound`` / ``SessionNotFound``."""
        return await self._run(self._ops.retrieve_message(thread_id, message_id))

    async def modify_message(
        self, thread_id: str, message_id: str, *, metadata: dict[str, str] | None = _UNSET
    ) -> dict[str, Any]:
        """Replace a message's metadata."""
        return await self._run(self._ops.modify_message(thread_id, message_id, metadata=metadata))

    async def delete_message(self, thread_id: str, message_id: str) -> dict[str, Any]:
        """Delete a message and the memory made from it."""
        return await self._run(self._ops.delete_message(thread_id, message_id))

    async def retrieve_context(self, thread_id: str, *, query: str, top_k: int = 5) -> list[dict[str, Any]]:
        """What the kernel's ``find`` returns for ``query`` in the thread's scope, best first.

        Each item is ``{"id", "content", "score", "role", "message_ids", "created_at"}``.
        """
        return await self._run(self._ops.retrieve_context(thread_id, query=query, top_k=top_k))

    # runs
    async def create_run(
        self,
        thread_id: str,
        *,
        assistant_id: str,
        model: str | None = None,
        instructions: str | None = None,
        additional_instructions: str | None = None,
        additional_messages: list[dict[str, Any]] | None = None,
        metadata: dict[str, str] | None = None,
        tools: list[dict[str, Any]] | None = None,
        stream: bool | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """Answer the thread with the responder; the run comes back finished (``completed`` or ``failed``).

        ``options`` (``temperature``, ``top_p``, ``tool_choice``, ``response_format``,
        ``truncation_strategy``, ``max_prompt_tokens``, ``max_completion_tokens``,
        ``parallel_tool_calls``) are echoed on the run for the responder's caller; others are ignored.
        Raises ``InvalidArgument`` without a responder or with ``stream=True``.
        """
        return await self._run(
            self._ops.create_run(
                thread_id,
                assistant_id=assistant_id,
                model=model,
                instructions=instructions,
                additional_instructions=additional_instructions,
                additional_messages=additional_messages,
                metadata=metadata,
                tools=tools,
                stream=stream,
                options=options,
            )
        )

    async def create_thread_and_run(
        self, *, assistant_id: str, thread: dict[str, Any] | None = None, **run: Any
    ) -> dict[str, Any]:
        """Create a thread from ``thread`` (``messages``, ``metadata``, ``tool_resources``) and run it.

        ``run`` takes ``create_run``'s keyword arguments.
        """
        return await self._run(
            self._ops.create_thread_and_run(assistant_id=assistant_id, thread=thread, **run)
        )

    async def cancel_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """Runs finish inside ``create_run``: this raises ``InvalidArgument`` ("Cannot cancel run ...")."""
        return await self._run(self._ops.cancel_run(thread_id, run_id))

    async def retrieve_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """Return a run; ``NotFoundError`` if the thread has none with this id."""
        return await self._run(self._ops.retrieve_run(thread_id, run_id))

    async def list_runs(
        self,
        thread_id: str,
        *,
        limit: int | None = None,
        order: str | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> dict[str, Any]:
        """One page of the thread's runs."""
        return await self._run(
            self._ops.list_runs(thread_id, limit=limit, order=order, after=after, before=before)
        )

    async def modify_run(
        self, thread_id: str, run_id: str, *, metadata: dict[str, str] | None = _UNSET
    ) -> dict[str, Any]:
        """Replace a run's metadata."""
        return await self._run(self._ops.modify_run(thread_id, run_id, metadata=metadata))

    # conversations
    async def create_conversation(
        self, *, items: list[dict[str, Any]] | None = None, metadata: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Create a conversation (a kernel session) with up to 20 initial items."""
        return await self._run(self._ops.create_conversation(items=items, metadata=metadata))

    async def retrieve_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Return the conversation; ``SessionNotFound`` if there is none."""
        return await self._run(self._ops.retrieve_conversation(conversation_id))

    async def update_conversation(
        self, conversation_id: str, *, metadata: dict[str, str] | None
    ) -> dict[str, Any]:
        """Replace the conversation's metadata (its scope keys cannot change)."""
        return await self._run(self._ops.update_conversation(conversation_id, metadata=metadata))

    async def delete_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Delete the conversation and its items."""
        return await self._run(self._ops.delete_thread(conversation_id, kind="conversation"))

    async def create_items(self, conversation_id: str, *, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Add up to 20 Responses input items; returns them as a list object."""
        return await self._run(self._ops.create_items(conversation_id, items=items))

    async def list_items(
        self,
        conversation_id: str,
        *,
        limit: int | None = None,
        order: str | None = None,
        after: str | None = None,
    ) -> dict[str, Any]:
        """One page of items (``order`` default ``"desc"``, as OpenAI's)."""
        return await self._run(
            self._ops.list_messages(conversation_id, limit=limit, order=order, after=after, shape="item")
        )

    async def retrieve_item(self, conversation_id: str, item_id: str) -> dict[str, Any]:
        """Return one item; ``MessageNotFound`` / ``SessionNotFound``."""
        return await self._run(self._ops.retrieve_message(conversation_id, item_id, shape="item"))

    async def delete_item(self, conversation_id: str, item_id: str) -> dict[str, Any]:
        """Delete one item; returns the conversation, as OpenAI does."""
        return await self._run(self._ops.delete_item(conversation_id, item_id))


# ----------------------------------------------------------------------------- SDK types


def to_sdk(obj: dict[str, Any]) -> Any:
    """Turn an OpenAI JSON object from the adapter into the openai SDK's own typed object.

    ``thread`` -> ``Thread``, ``thread.message`` -> ``Message``, ``thread.run`` -> ``Run``,
    ``conversation`` -> ``Conversation``, the ``*.deleted`` markers, a conversation item ->
    ``ConversationItem``; a list of items -> ``ConversationItemList``, a list of anything else ->
    the same list dict with its ``data`` typed. Validation is strict (``strict=True``).

    Raises:
        MissingDependency: The openai SDK is not installed (``pip install 'agentbase[openai]'``).
        ValueError: ``obj`` is not an object this adapter returns.
    """
    require("openai", extra="openai")
    from openai.types.beta import Thread, ThreadDeleted
    from openai.types.beta.threads import Message as SDKMessage
    from openai.types.beta.threads import MessageDeleted, Run
    from openai.types.conversations import (
        Conversation,
        ConversationDeletedResource,
        ConversationItem,
        ConversationItemList,
    )
    from pydantic import TypeAdapter

    types: dict[str, Any] = {
        "thread": Thread,
        "thread.deleted": ThreadDeleted,
        "thread.message": SDKMessage,
        "thread.message.deleted": MessageDeleted,
        "thread.run": Run,
        "conversation": Conversation,
        "conversation.deleted": ConversationDeletedResource,
    }
    kind = obj.get("object")
    if kind == "list":
        data = obj.get("data") or []
        if data and all("object" not in entry for entry in data):
            return ConversationItemList.model_validate(obj, strict=True)
        return {**obj, "data": [to_sdk(entry) for entry in data]}
    if kind in types:
        return types[kind].model_validate(obj, strict=True)
    if kind is None and "type" in obj:
        return TypeAdapter(ConversationItem).validate_python(obj, strict=True)
    raise ValueError(f"Not an OpenAI object this adapter returns: object={kind!r}")
