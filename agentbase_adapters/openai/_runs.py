"""Assistants runs: the run object, its outcome, its token usage and its place in the thread's state.

Runs are not a kernel concept. A thread's runs are a list in the adapter's session state, each
written inside one kernel write transaction (read the state, change it, patch it back), so runs
created by several processes or adapter instances on one thread never lose each other. The state
also records which messages each run wrote, so a run's messages are read by id, not by scanning
the thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentbase_kernel import Entry, Hit, Kernel, Message, Session

from ._sessions import context
from ._wire import epoch, invalid, json_type, new_id

__all__ = ["RUN_ARGUMENTS", "add_run", "check_reply", "fail", "finish", "new_run", "run_context", "run_message_ids",
           "window"]

#: how many tokens of memories a run's responder gets by default (``Kernel.prefetch``'s budget)
CONTEXT_TOKEN_BUDGET = 1000

RUN_ARGUMENTS = (
    "model",
    "instructions",
    "additional_instructions",
    "additional_messages",
    "metadata",
    "tools",
    "stream",
)
RUN_OPTIONS = (
    "max_completion_tokens",
    "max_prompt_tokens",
    "response_format",
    "temperature",
    "tool_choice",
    "top_p",
    "truncation_strategy",
)
_RUN_MESSAGES = "run_messages"  # state key: {run_id: [message ids the run wrote]}


def new_run(
    thread_id: str,
    *,
    assistant_id: str,
    model: Any,
    instructions: str,
    tools: Any,
    metadata: dict[str, str],
    options: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A run that has just started (``in_progress``), with the requested options echoed."""
    now = epoch(None)
    return {
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
        "instructions": instructions,
        "tools": list(tools or []),
        "metadata": metadata,
        "usage": None,
        "parallel_tool_calls": True,
        **{key: None for key in RUN_OPTIONS},
        **{
            key: value
            for key, value in (options or {}).items()
            if key in RUN_OPTIONS or key == "parallel_tool_calls"
        },
    }


def run_context(kernel: Kernel, session: Session, query: str | None, records: list[Message], *,
                token_budget: int) -> list[dict[str, Any]]:
    """The memories a run's responder gets: ``Kernel.prefetch`` for the last user message.

    The user's profile facts (read across their threads), then the memories most relevant to the
    message and the thread's most recent ones, deduplicated and within ``token_budget`` tokens.
    Each item has ``retrieve_context``'s keys (``score`` is ``None`` outside the relevant section)
    plus ``section``: ``profile``, ``relevant`` or ``recent``.
    """
    scope: dict[str, Any] = {**session.scope.as_dict(), "session_id": session.id}
    found = kernel.prefetch(query or "", token_budget=token_budget, relevant_k=5, **scope)
    message_of = {r.entry_id: r.id for r in records if r.entry_id}
    out: list[dict[str, Any]] = []
    sections: tuple[tuple[str, list[Any]], ...] = (
        ("profile", found.profile), ("relevant", found.relevant), ("recent", found.recent))
    for name, items in sections:
        for item in items:
            out.append({**(context(item) if isinstance(item, Hit) else _entry_context(item, message_of)),
                        "section": name})
    return out


def _entry_context(entry: Entry, message_of: Mapping[str, str]) -> dict[str, Any]:
    return {
        "id": entry.id,
        "content": entry.l2_full,
        "score": None,
        "role": entry.role,
        "message_ids": [message_of[entry.id]] if entry.id in message_of else [],
        "created_at": epoch(entry.created_at),
    }


def check_reply(reply: Any) -> str:
    if not isinstance(reply, str) or not reply.strip():
        raise TypeError(f"it returned {json_type(reply)}; a responder returns the reply text")
    return reply


def fail(run: dict[str, Any], exc: Exception) -> None:
    """A failing responder fails the run, as a failing model does."""
    run.update(
        status="failed",
        failed_at=epoch(None),
        last_error={"code": "server_error", "message": f"The responder failed: {type(exc).__name__}: {exc}"},
    )


def finish(run: dict[str, Any], chat: list[dict[str, str]], reply: str) -> None:
    """Mark the run completed, with ``usage`` counted over the prompt messages and the reply.

    Counted as whitespace-separated words: an estimate of tokens (a responder's real model may
    tokenize differently, and agentbase bundles no tokenizer it could know to be that model's).
    """
    prompt = sum(len(m["content"].split()) for m in chat)
    completion = len(reply.split())
    run.update(
        status="completed",
        completed_at=epoch(None),
        usage={"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    )


def add_run(state: dict[str, Any], run: dict[str, Any], message_ids: list[str]) -> None:
    """Record a finished run and the messages it wrote in the session state."""
    state["runs"] = [*(state.get("runs") or []), run]
    state[_RUN_MESSAGES] = {**(state.get(_RUN_MESSAGES) or {}), run["id"]: message_ids}


def run_message_ids(state: Mapping[str, Any], run_id: str) -> list[str] | None:
    """The ids of the messages a run wrote; ``None`` for a run stored before they were recorded."""
    recorded = (state.get(_RUN_MESSAGES) or {}).get(run_id)
    return list(recorded) if isinstance(recorded, list) else None


def window(
    items: list[dict[str, Any]], *, order: str, after: str | None, before: str | None
) -> list[dict[str, Any]]:
    """Runs in ``order`` between exclusive cursors."""
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
