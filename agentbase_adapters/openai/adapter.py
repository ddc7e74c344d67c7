"""OpenAI threads, messages, runs and conversations over agentbase sessions, in OpenAI's JSON.

How OpenAI objects map onto the kernel::

    thread / conversation  ->  kernel session (same id; see _sessions.py)
    thread message / item  ->  kernel message, ingested into the session's scope (see _translate.py)
    run                    ->  an entry of the session's adapter state, written in one kernel
                               transaction (see _runs.py); the reply is an assistant message

Class tree::

    OpenAIAssistantAdapter        sync, over ``db.sync``; returns OpenAI JSON dicts
    AsyncOpenAIAssistantAdapter   the same methods, each running the sync one in a worker thread
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from agentbase_kernel import (
    AgentBase,
    InvalidArgument,
    Kernel,
    Message,
    MessageNotFound,
    NotFoundError,
    PermissionDenied,
    Session,
    SessionNotFound,
    in_thread,
    on_calling_loop,
)

from ._runs import (
    CONTEXT_TOKEN_BUDGET,
    RUN_ARGUMENTS,
    add_run,
    check_reply,
    fail,
    finish,
    new_run,
    run_context,
    run_message_ids,
    window,
)
from ._sdk import to_sdk
from ._sessions import STATE, check_scope, context, conversation, fixed_scope, scope_of, state_of, thread
from ._translate import CHAT_ROLES, Shape, from_record, to_record
from ._wire import check_choice, check_limit, check_metadata, check_text, invalid, json_type, new_id, page

__all__ = [
    "AsyncOpenAIAssistantAdapter",
    "OpenAIAssistantAdapter",
    "Responder",
    "to_sdk",
]

Responder = Callable[[list[dict[str, str]], list[dict[str, Any]]], "str | Awaitable[str]"]
"""``responder(messages, context) -> reply``: ``messages`` are the thread as chat messages
(``{"role", "content"}``, led by a ``system`` message when the run has instructions); ``context``
is the per-turn prefetch for the last user message (``Kernel.prefetch``: the user's profile facts,
the relevant and the recent memories, within ``context_token_budget`` tokens), items shaped like
``retrieve_context``'s plus a ``section`` key. It returns the reply text."""

_UNSET: Any = object()


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
        db: The agentbase database; the adapter uses its sync kernel (``db.sync``).
        responder: ``fn(messages, context) -> reply text``, needed by runs only (see ``Responder``).
        context_token_budget: How many tokens of memories a run's responder gets as ``context``.
    """

    def __init__(
        self,
        db: AgentBase,
        *,
        responder: Responder | None = None,
        context_token_budget: int = CONTEXT_TOKEN_BUDGET,
        user_id: str | None = None,
        agent_id: str | None = None,
        project_id: str | None = None,
        own_threads_only: bool = False,
    ) -> None:
        if responder is not None and inspect.iscoroutinefunction(responder):
            raise TypeError(
                "An async responder needs AsyncOpenAIAssistantAdapter (or the server); "
                "pass a plain function here."
            )
        if not isinstance(context_token_budget, int) or isinstance(context_token_budget, bool) or context_token_budget < 1:
            raise InvalidArgument(f"context_token_budget must be a positive int, got {context_token_budget!r}")
        self.db = db.view(source="openai")  # entries record the path that wrote them (Entry.source)
        self.responder = responder
        self.context_token_budget = context_token_budget
        self.scope = check_scope(user_id=user_id, agent_id=agent_id, project_id=project_id)
        self.own_threads_only = bool(own_threads_only)

    @property
    def _kernel(self) -> Kernel:
        return self.db.sync

    # -- sessions

    def _session(self, session_id: str) -> Session:
        """The session, if this adapter may reach it; ``SessionNotFound`` otherwise (another
        scope's thread is not found, never forbidden: its existence is not told either)."""
        session = self._kernel.get_session(session_id)
        if any(getattr(session.scope, key) != value for key, value in self.scope.items()) or (
            self.own_threads_only and not state_of(session)
        ):
            raise SessionNotFound(session_id)
        return session

    def _create_session(self, prefix: str, kind: str, metadata: Any, extra: dict[str, Any]) -> Session:
        meta = check_metadata(metadata)
        asked = scope_of(meta)
        for key, value in self.scope.items():
            if asked.get(key, value) != value:
                raise PermissionDenied(
                    f"This key serves {key} {value!r} only: a {kind} for {key} {asked[key]!r} cannot be "
                    "created with it (leave metadata.{key} out, or use that scope's key).".replace("{key}", key),
                    access="write", scope=dict(self.scope), operation=f"create_{kind}",
                )
        return self._kernel.create_session(
            new_id(prefix, nbytes=24 if prefix == "conv" else 12),
            **{**asked, **self.scope},
            metadata={STATE: {"object": kind, "metadata": meta, **extra}},
        )

    def _update_state(self, session_id: str, change: Callable[[Session, dict[str, Any]], None]) -> Session:
        """Read, change and write back the adapter's state in one kernel write transaction, so
        concurrent writers (other processes, other adapter instances) never lose each other's
        changes; other adapters' metadata keys are left alone."""
        kernel = self._kernel
        with kernel.transaction():
            session = self._session(session_id)
            state = state_of(session)
            change(session, state)
            return kernel.update_session(session_id, metadata_patch={STATE: state})

    def _message(self, session_id: str, read: Callable[[], Message]) -> Message:
        self._session(session_id)  # a missing (or unreachable) thread is reported as such
        return read()

    # -- threads

    def create_thread(
        self,
        *,
        messages: list[dict[str, Any]] | None = None,
        metadata: dict[str, str] | None = None,
        tool_resources: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create a thread (a kernel session; ``metadata`` user_id / agent_id / project_id set its scope)."""
        records = _thread_records(messages, param="messages")
        session = self._create_session("thread", "thread", metadata, {"tool_resources": tool_resources or {}})
        if records:
            self._kernel.add_messages(session.id, records)
        return thread(session)

    def retrieve_thread(self, thread_id: str) -> dict[str, Any]:
        """Return the thread; ``SessionNotFound`` if there is none."""
        return thread(self._session(thread_id))

    def modify_thread(
        self,
        thread_id: str,
        *,
        metadata: dict[str, str] | None = _UNSET,
        tool_resources: dict[str, Any] | None = _UNSET,
    ) -> dict[str, Any]:
        """Replace the thread's metadata (its scope keys cannot change) and/or tool resources."""
        meta = None if metadata is _UNSET else check_metadata(metadata)

        def change(session: Session, state: dict[str, Any]) -> None:
            if meta is not None:
                state["metadata"] = fixed_scope(session, meta, param="metadata")
            if tool_resources is not _UNSET:
                state["tool_resources"] = tool_resources or {}

        return thread(self._update_state(thread_id, change))

    def delete_thread(self, thread_id: str) -> dict[str, Any]:
        """Delete the thread, its messages and the memories made from them."""
        return self._delete_session(thread_id, "thread")

    def _delete_session(self, session_id: str, kind: str) -> dict[str, Any]:
        self._session(session_id)
        self._kernel.delete_session(session_id)
        return {"id": session_id, "object": f"{kind}.deleted", "deleted": True}

    # -- thread messages

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
        check_choice(role, ("user", "assistant"), param="role")
        body = {"role": role, "content": content, "attachments": attachments, "metadata": metadata}
        record = to_record(body, shape="thread")
        self._session(thread_id)
        return from_record(self._kernel.add_message(thread_id, **record), shape="thread")

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
        return self._list(thread_id, limit=limit, order=order, after=after, before=before, run_id=run_id,
                          shape="thread")

    def _list(
        self,
        session_id: str,
        *,
        limit: Any,
        order: Any,
        after: str | None,
        before: str | None,
        run_id: str | None,
        shape: Shape,
    ) -> dict[str, Any]:
        size = check_limit(limit)
        direction = check_choice(order or "desc", ("asc", "desc"), param="order")
        session = self._session(session_id)
        cursors: dict[str, Any] = {"after": after or None, "before": before or None}
        try:
            if run_id is None:
                records = self._kernel.list_messages(session_id, limit=size + 1, order=direction, **cursors)
            else:
                records = self._run_messages(session, run_id, order=direction, **cursors)[: size + 1]
        except MessageNotFound as exc:
            param = "after" if exc.message_id == cursors["after"] else "before"
            raise invalid(
                f"Invalid '{param}': no message with id '{exc.message_id}' in this thread.", param=param
            ) from exc
        data = [from_record(record, shape=shape) for record in records[:size]]
        return page(data, has_more=len(records) > size)

    def _run_messages(
        self, session: Session, run_id: str, *, order: str, after: str | None, before: str | None
    ) -> list[Message]:
        """The messages a run wrote, read by the ids recorded with the run (not by scanning the thread)."""
        kernel = self._kernel
        ids = run_message_ids(state_of(session), run_id)
        if ids is None:  # a run stored before message ids were recorded, or no such run
            if not any(run["id"] == run_id for run in state_of(session).get("runs") or []):
                return []
            every = kernel.list_messages(session.id, order=order, after=after, before=before)
            return [m for m in every if isinstance(m.payload, dict) and m.payload.get("run_id") == run_id]
        records = []
        for message_id in ids:
            try:
                records.append(kernel.get_message(session.id, message_id))
            except MessageNotFound:
                continue  # deleted since the run
        lowest = kernel.get_message(session.id, after).seq if after else None
        highest = kernel.get_message(session.id, before).seq if before else None
        records = [m for m in records if (lowest is None or m.seq > lowest) and (highest is None or m.seq < highest)]
        return sorted(records, key=lambda m: m.seq, reverse=order == "desc")

    def retrieve_message(self, thread_id: str, message_id: str) -> dict[str, Any]:
        """Return one message; ``MessageNotFound`` / ``SessionNotFound``."""
        message = self._message(thread_id, lambda: self._kernel.get_message(thread_id, message_id))
        return from_record(message, shape="thread")

    def modify_message(
        self, thread_id: str, message_id: str, *, metadata: dict[str, str] | None = _UNSET
    ) -> dict[str, Any]:
        """Replace a message's metadata."""
        if metadata is _UNSET:
            message = self._message(thread_id, lambda: self._kernel.get_message(thread_id, message_id))
        else:
            meta = check_metadata(metadata)
            message = self._message(
                thread_id, lambda: self._kernel.update_message(thread_id, message_id, metadata=meta)
            )
        return from_record(message, shape="thread")

    def delete_message(self, thread_id: str, message_id: str) -> dict[str, Any]:
        """Delete a message and the memory made from it."""
        self._message(thread_id, lambda: self._kernel.delete_message(thread_id, message_id))
        return {"id": message_id, "object": "thread.message.deleted", "deleted": True}

    # -- retrieval

    def retrieve_context(self, thread_id: str, *, query: str, top_k: int = 5) -> list[dict[str, Any]]:
        """What the kernel's ``find`` returns for ``query`` in the thread's scope, best first.

        Each item is ``{"id", "content", "score", "role", "message_ids", "created_at"}``.
        """
        text = check_text(query, param="query")
        return self._find(self._session(thread_id), text, top_k)

    def _find(self, session: Session, query: str, top_k: int) -> list[dict[str, Any]]:
        scope: dict[str, Any] = {**session.scope.as_dict(), "session_id": session.id}
        hits = self._kernel.find(query, top_k=top_k, **scope)
        return [context(hit) for hit in hits]

    # -- runs

    def create_run(
        self,
        /,
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
        ``usage`` is an estimate: words, not a model's tokens.
        Raises ``InvalidArgument`` without a responder or with ``stream=True``.
        """
        self._check_runnable(stream)
        check_text(assistant_id, param="assistant_id")
        meta = check_metadata(metadata)
        extra = _thread_records(additional_messages, param="additional_messages")
        session = self._session(thread_id)
        kernel = self._kernel
        prompt = "\n\n".join(str(part) for part in (instructions, additional_instructions) if part)
        run = new_run(thread_id, assistant_id=assistant_id, model=model, instructions=prompt, tools=tools,
                      metadata=meta, options=options)
        if extra:
            kernel.add_messages(thread_id, extra)
        # The responder answers the whole thread, as a model does.
        chat = [{"role": "system", "content": prompt}] if prompt else []
        records = kernel.list_messages(thread_id)
        for record in records:
            message = from_record(record, shape="thread")
            text = "\n".join(b["text"]["value"] for b in message["content"] if b["type"] == "text")
            # The kernel's role, not the thread's user/assistant: other adapters' system or tool
            # turns reach the responder as what they are.
            chat.append({"role": CHAT_ROLES.get(record.role, record.role), "content": text})
        query = next((m["content"] for m in reversed(chat) if m["role"] == "user" and m["content"].strip()), None)
        found = run_context(kernel, session, query, records, token_budget=self.context_token_budget)
        written: list[str] = []
        try:
            assert self.responder is not None  # _check_runnable() ran first
            reply = check_reply(self.responder(chat, found))
        except Exception as exc:
            fail(run, exc)
        else:
            answer = {"role": "assistant", "content": reply, "assistant_id": assistant_id, "run_id": run["id"]}
            written.append(kernel.add_message(thread_id, **to_record(answer, shape="thread")).id)
            finish(run, chat, reply)
        self._update_state(thread_id, lambda _, state: add_run(state, run, written))
        return run

    def _check_runnable(self, stream: Any) -> None:
        if self.responder is None:
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
        self, /, *, assistant_id: str, thread: dict[str, Any] | None = None, **run: Any
    ) -> dict[str, Any]:
        """Create a thread from ``thread`` (``messages``, ``metadata``, ``tool_resources``) and run it.

        ``run`` takes ``create_run``'s keyword arguments.
        """
        self._check_runnable(run.get("stream"))
        check_text(assistant_id, param="assistant_id")
        body = thread if isinstance(thread, dict) else {}
        created = self.create_thread(
            messages=body.get("messages"), metadata=body.get("metadata"), tool_resources=body.get("tool_resources")
        )
        named = {key: run.pop(key) for key in RUN_ARGUMENTS if key in run}
        options = {**run.pop("options", {}), **run}
        return self.create_run(created["id"], assistant_id=assistant_id, **named, **options)

    def _runs(self, thread_id: str) -> list[dict[str, Any]]:
        return list(state_of(self._session(thread_id)).get("runs") or [])

    def retrieve_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """Return a run; ``NotFoundError`` if the thread has none with this id."""
        for run in self._runs(thread_id):
            if run["id"] == run_id:
                return dict(run)
        raise NotFoundError(f"No run found with id '{run_id}'.")

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
        size = check_limit(limit)
        direction = check_choice(order or "desc", ("asc", "desc"), param="order")
        runs = window(self._runs(thread_id), order=direction, after=after or None, before=before or None)
        return page(runs[:size], has_more=len(runs) > size)

    def modify_run(
        self, thread_id: str, run_id: str, *, metadata: dict[str, str] | None = _UNSET
    ) -> dict[str, Any]:
        """Replace a run's metadata."""
        run = self.retrieve_run(thread_id, run_id)
        if metadata is _UNSET:
            return run
        meta = check_metadata(metadata)

        def change(_: Session, state: dict[str, Any]) -> None:
            state["runs"] = [{**r, "metadata": meta} if r["id"] == run_id else r for r in state.get("runs") or []]

        self._update_state(thread_id, change)
        return {**run, "metadata": meta}

    def cancel_run(self, thread_id: str, run_id: str) -> dict[str, Any]:
        """Runs finish inside ``create_run``: this raises ``InvalidArgument`` ("Cannot cancel run ...")."""
        run = self.retrieve_run(thread_id, run_id)
        raise invalid(f"Cannot cancel run with status '{run['status']}'.", param=None, code=None)

    # -- conversations

    def create_conversation(
        self, *, items: list[dict[str, Any]] | None = None, metadata: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Create a conversation (a kernel session) with up to 20 initial items."""
        records = _item_records(items, max_items=20)
        session = self._create_session("conv", "conversation", metadata, {})
        if records:
            self._kernel.add_messages(session.id, records)
        return conversation(session)

    def retrieve_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Return the conversation; ``SessionNotFound`` if there is none."""
        return conversation(self._session(conversation_id))

    def update_conversation(self, conversation_id: str, *, metadata: dict[str, str] | None) -> dict[str, Any]:
        """Replace the conversation's metadata (its scope keys cannot change)."""
        meta = check_metadata(metadata)

        def change(session: Session, state: dict[str, Any]) -> None:
            state["metadata"] = fixed_scope(session, meta, param="metadata")

        return conversation(self._update_state(conversation_id, change))

    def delete_conversation(self, conversation_id: str) -> dict[str, Any]:
        """Delete the conversation and its items."""
        return self._delete_session(conversation_id, "conversation")

    def create_items(self, conversation_id: str, *, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Add up to 20 Responses input items; returns them as a list object."""
        if items is None:
            raise invalid("Missing required parameter: 'items'.", param="items", code="missing_required_parameter")
        records = _item_records(items, max_items=20)
        if not records:
            raise invalid(
                "Invalid 'items': empty array. Expected an array with minimum length 1, "
                "but got an empty array instead.",
                param="items",
                code="empty_array",
            )
        self._session(conversation_id)
        added = self._kernel.add_messages(conversation_id, records)
        return page([from_record(m, shape="item") for m in added], has_more=False)

    def list_items(
        self,
        conversation_id: str,
        *,
        limit: int | None = None,
        order: str | None = None,
        after: str | None = None,
    ) -> dict[str, Any]:
        """One page of items (``order`` default ``"desc"``, as OpenAI's)."""
        return self._list(conversation_id, limit=limit, order=order, after=after, before=None, run_id=None,
                          shape="item")

    def retrieve_item(self, conversation_id: str, item_id: str) -> dict[str, Any]:
        """Return one item; ``MessageNotFound`` / ``SessionNotFound``."""
        message = self._message(conversation_id, lambda: self._kernel.get_message(conversation_id, item_id))
        return from_record(message, shape="item")

    def delete_item(self, conversation_id: str, item_id: str) -> dict[str, Any]:
        """Delete one item; returns the conversation, as OpenAI does."""
        self._message(conversation_id, lambda: self._kernel.delete_message(conversation_id, item_id))
        return conversation(self._session(conversation_id))


def _thread_records(messages: Any, *, param: str) -> list[dict[str, Any]]:
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
        records.append(to_record(message, shape="thread", param=f"{where}.content"))
    return records


def _item_records(items: Any, *, max_items: int | None = None) -> list[dict[str, Any]]:
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
    return [to_record(item, shape="item", param=f"items[{i}]") for i, item in enumerate(items)]


class AsyncOpenAIAssistantAdapter:
    """The async twin of ``OpenAIAssistantAdapter``: the same methods, each run in a worker thread.

    Usage::

        oa = AsyncOpenAIAssistantAdapter(AgentBase("memory.db"))
        thread = await oa.create_thread(metadata={"user_id": "alice"})
        await oa.create_message(thread["id"], role="user", content="Hello")

    A plain-function responder runs in the worker thread; an ``async def`` responder is awaited
    on the event loop that called the method.
    """

    def __init__(
        self,
        db: AgentBase,
        *,
        responder: Responder | None = None,
        context_token_budget: int = CONTEXT_TOKEN_BUDGET,
        user_id: str | None = None,
        agent_id: str | None = None,
        project_id: str | None = None,
        own_threads_only: bool = False,
    ) -> None:
        self.db = db.view(source="openai")  # entries record the path that wrote them (Entry.source)
        self.responder = responder
        self._sync = OpenAIAssistantAdapter(
            db,
            responder=None if responder is None else self._respond,
            context_token_budget=context_token_budget,
            user_id=user_id,
            agent_id=agent_id,
            project_id=project_id,
            own_threads_only=own_threads_only,
        )

    def _respond(self, messages: list[dict[str, str]], found: list[dict[str, Any]]) -> Any:
        assert self.responder is not None
        reply = self.responder(messages, found)
        return on_calling_loop(reply) if inspect.isawaitable(reply) else reply

    create_thread = in_thread(OpenAIAssistantAdapter.create_thread)
    retrieve_thread = in_thread(OpenAIAssistantAdapter.retrieve_thread)
    modify_thread = in_thread(OpenAIAssistantAdapter.modify_thread)
    delete_thread = in_thread(OpenAIAssistantAdapter.delete_thread)
    create_message = in_thread(OpenAIAssistantAdapter.create_message)
    list_messages = in_thread(OpenAIAssistantAdapter.list_messages)
    retrieve_message = in_thread(OpenAIAssistantAdapter.retrieve_message)
    modify_message = in_thread(OpenAIAssistantAdapter.modify_message)
    delete_message = in_thread(OpenAIAssistantAdapter.delete_message)
    retrieve_context = in_thread(OpenAIAssistantAdapter.retrieve_context)
    create_run = in_thread(OpenAIAssistantAdapter.create_run)
    create_thread_and_run = in_thread(OpenAIAssistantAdapter.create_thread_and_run)
    retrieve_run = in_thread(OpenAIAssistantAdapter.retrieve_run)
    list_runs = in_thread(OpenAIAssistantAdapter.list_runs)
    modify_run = in_thread(OpenAIAssistantAdapter.modify_run)
    cancel_run = in_thread(OpenAIAssistantAdapter.cancel_run)
    create_conversation = in_thread(OpenAIAssistantAdapter.create_conversation)
    retrieve_conversation = in_thread(OpenAIAssistantAdapter.retrieve_conversation)
    update_conversation = in_thread(OpenAIAssistantAdapter.update_conversation)
    delete_conversation = in_thread(OpenAIAssistantAdapter.delete_conversation)
    create_items = in_thread(OpenAIAssistantAdapter.create_items)
    list_items = in_thread(OpenAIAssistantAdapter.list_items)
    retrieve_item = in_thread(OpenAIAssistantAdapter.retrieve_item)
    delete_item = in_thread(OpenAIAssistantAdapter.delete_item)
