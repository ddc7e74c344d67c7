"""An ASGI app (Starlette) that serves agentbase sessions on OpenAI's wire format.

The real ``openai.OpenAI(base_url=".../v1")`` and ``AsyncOpenAI`` run unchanged against it::

    /v1/threads                                  POST
    /v1/threads/runs                             POST   (create_and_run)
    /v1/threads/{thread_id}                      GET POST DELETE
    /v1/threads/{thread_id}/messages             GET POST
    /v1/threads/{thread_id}/messages/{id}        GET POST DELETE
    /v1/threads/{thread_id}/runs                 GET POST
    /v1/threads/{thread_id}/runs/{id}            GET POST
    /v1/threads/{thread_id}/runs/{id}/cancel     POST
    /v1/conversations                            POST
    /v1/conversations/{conversation_id}          GET POST DELETE
    /v1/conversations/{conversation_id}/items    GET POST
    /v1/conversations/{conversation_id}/items/{id}  GET DELETE

Each endpoint translates the request into one ``AsyncOpenAIAssistantAdapter`` call, which awaits
the kernel's async methods, so the event loop is never blocked. Errors use OpenAI's body
``{"error": {"message", "type", "param", "code"}}``: 400 / 404 / 405 for what the request asks,
and, from ``agentbase_adapters._http_guard.HttpGuard`` in front of every route, 401 (key), 403
(remote client without a key, cross-origin write), 413 (body over ``body_limit``), 415 (a body
that is not ``application/json``) and 421 (a Host other than loopback's, DNS rebinding). Body
fields are whitelisted per endpoint (an unknown one is a 400, never a keyword argument); 500
is left for our own faults. docs/server-security.md has the rules.
Needs ``pip install 'agentbase-memory[openai]'``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from agentbase_adapters._http_guard import (
    DEFAULT_BODY_LIMIT,
    KEY_SCOPE,
    HttpGuard,
    InvalidJson,
    Refusal,
    check_api_key,
    check_bind,
    parse_json,
    resolve_api_key,
)
from agentbase_adapters._require import require, require_extra
from agentbase_adapters.openai._runs import CONTEXT_TOKEN_BUDGET
from agentbase_adapters.openai._sessions import check_scope
from agentbase_adapters.openai._wire import check_fields, check_limit, check_types
from agentbase_adapters.openai.adapter import AsyncOpenAIAssistantAdapter, Responder
from agentbase_kernel import (
    AgentBase,
    AgentBaseError,
    InvalidArgument,
    MessageNotFound,
    NotFoundError,
    PermissionDenied,
    SessionNotFound,
)

require("starlette", extra="openai")

from starlette.applications import Starlette  # noqa: E402
from starlette.exceptions import HTTPException  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402
from starlette.types import ASGIApp  # noqa: E402

__all__ = ["check_key_scopes", "create_app", "load_key_scopes", "serve"]

_log = logging.getLogger(__name__)
_Endpoint = Callable[[Request], Awaitable[Response]]


def _error(
    status: int,
    message: str,
    *,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status)


def _openai_refusal(refusal: Refusal) -> dict[str, Any]:
    """The guard's refusals in OpenAI's error body (a missing key has ``code: null`` there)."""
    kind = "permission_error" if refusal.status == 403 else "invalid_request_error"
    code = None if refusal.code == "missing_api_key" else refusal.code
    return {"error": {"message": refusal.message, "type": kind, "param": None, "code": code}}


_NOT_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload.)"
)


async def _body(request: Request, *fields: str) -> dict[str, Any]:
    """The JSON object sent (``{}`` for none), holding only ``fields`` (else a 400 naming the first other)."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = parse_json(raw)
    except InvalidJson as exc:
        raise InvalidArgument(f"{_NOT_JSON} {exc}") from None
    if not isinstance(body, dict):
        raise InvalidArgument(_NOT_JSON)
    return check_fields(body, fields)


def _endpoint(kind: str, handler: Callable[[Request], Awaitable[Any]]) -> _Endpoint:
    """Wrap a handler that returns OpenAI JSON: errors become OpenAI's error body."""

    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await handler(request))
        except SessionNotFound as exc:
            return _error(404, f"No {kind} found with id '{exc.session_id}'.")
        except MessageNotFound as exc:
            noun = "item" if kind == "conversation" else "message"
            return _error(404, f"No {noun} found with id '{exc.message_id}'.")
        except NotFoundError as exc:
            return _error(404, str(exc))
        except InvalidArgument as exc:
            return _error(400, str(exc), param=getattr(exc, "param", None), code=getattr(exc, "code", None))
        except PermissionDenied as exc:  # a scope policy (docs/lifecycle.md): the SDK's PermissionDeniedError
            return _error(403, str(exc), kind="permission_error")
        except AgentBaseError as exc:
            _log.exception("agentbase failed on %s %s", request.method, request.url.path)
            return _error(
                500, f"The server had an error while processing your request: {exc}", kind="server_error"
            )
        except Exception:
            # Still OpenAI's error body, so the SDK raises its InternalServerError, not a parse error.
            _log.exception("unexpected error on %s %s", request.method, request.url.path)
            return _error(500, "The server had an error while processing your request.", kind="server_error")

    return endpoint


# Body fields per endpoint: the openai SDK's own params (tests/adapters/openai/
# test_server_hardening.py compares them with the installed SDK's TypedDicts).
_RUN_OPTIONS = (
    "max_completion_tokens",
    "max_prompt_tokens",
    "parallel_tool_calls",
    "reasoning_effort",
    "response_format",
    "temperature",
    "tool_choice",
    "top_p",
    "truncation_strategy",
)
_RUN_FIELDS = (
    "assistant_id",
    "model",
    "instructions",
    "additional_instructions",
    "additional_messages",
    "metadata",
    "tools",
    "stream",
    *_RUN_OPTIONS,
)
_CREATE_AND_RUN_FIELDS = (
    "assistant_id",
    "thread",
    "tool_resources",
    "model",
    "instructions",
    "metadata",
    "tools",
    "stream",
    *(option for option in _RUN_OPTIONS if option != "reasoning_effort"),  # runs.create only
)
_RUN_KINDS = {
    "model": "string",
    "instructions": "string",
    "additional_instructions": "string",
    "additional_messages": "array",
    "tools": "array",
    "stream": "boolean",
    "thread": "object",
    "tool_resources": "object",
    "max_completion_tokens": "integer",
    "max_prompt_tokens": "integer",
    "parallel_tool_calls": "boolean",
    "reasoning_effort": "string",
    "response_format": "string|object",
    "temperature": "number",
    "tool_choice": "string|object",
    "top_p": "number",
    "truncation_strategy": "object",
}
_THREAD_KINDS = {"messages": "array", "tool_resources": "object"}


def _run_arguments(body: dict[str, Any]) -> dict[str, Any]:
    """``create_run``'s keyword arguments from a checked body: named ones, the rest as options."""
    check_types(body, _RUN_KINDS)
    named = ("model", "instructions", "additional_instructions", "additional_messages", "metadata", "tools", "stream")
    arguments = {key: body[key] for key in named if key in body}
    arguments.update({key: body[key] for key in _RUN_OPTIONS if key in body})
    return arguments


def load_key_scopes(path: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """A key -> scope table from a JSON file: ``{"sk-...": {"user_id": "alice"}, ...}``.

    Each key is a bearer key a client sends; its scope holds at least one of ``user_id`` /
    ``agent_id`` / ``project_id``. Keep the file private (``chmod 600``): it holds the keys.

    Raises:
        InvalidArgument: The file cannot be read, is not such an object, or a key or scope is malformed.
    """
    try:
        table = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidArgument(f"Cannot read the key table {str(path)!r}: {exc}") from exc
    return check_key_scopes(table, source=f"the key table {str(path)!r}")


def check_key_scopes(table: Any, *, source: str = "key_scopes") -> dict[str, dict[str, str]]:
    """``table`` checked: visible-ASCII keys, each mapped to a scope of known, well-formed ids."""
    if not isinstance(table, dict):
        raise InvalidArgument(f"{source} must be an object of key -> scope, got {type(table).__name__}")
    if not table:
        raise InvalidArgument(f"{source} has no keys: give at least one key -> scope")
    checked: dict[str, dict[str, str]] = {}
    for key, scope in table.items():
        key = check_api_key(str(key), source)
        if not isinstance(scope, dict) or set(scope) - {"user_id", "agent_id", "project_id"}:
            raise InvalidArgument(f"{source}: the scope of key {key[:3]}... must be an object of user_id / agent_id / "
                                  f"project_id, got unknown or malformed {scope!r:.80}")
        ids = check_scope(**scope)
        if not ids:
            raise InvalidArgument(f"{source}: the scope of key {key[:3]}... needs at least one of user_id / agent_id / "
                                  "project_id")
        checked[key] = ids
    return checked


def create_app(
    db: AgentBase,
    *,
    api_key: str | None = None,
    responder: Responder | None = None,
    allow_remote: bool = False,
    body_limit: int = DEFAULT_BODY_LIMIT,
    allowed_hosts: tuple[str, ...] = (),
    context_token_budget: int = CONTEXT_TOKEN_BUDGET,
    user_id: str | None = None,
    agent_id: str | None = None,
    project_id: str | None = None,
    key_scopes: dict[str, dict[str, str]] | None = None,
) -> ASGIApp:
    """The ASGI app serving ``db`` on OpenAI's threads and conversations endpoints.

    Usage::

        app = create_app(AgentBase("memory.db"), api_key="sk-local", responder=my_fn)
        client = openai.OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="sk-local")
        client.beta.threads.create()

    The embedder is the one ``db`` was opened with (``AgentBase(path, embedder=...)``).

    Args:
        db: The database; the app does not close it.
        api_key: If given, every request needs ``Authorization: Bearer <api_key>`` (else 401).
            Without one, only loopback clients are answered (403) unless ``allow_remote`` is True.
        responder: ``fn(messages, context) -> reply`` for runs; without it, runs get a 400.
        allow_remote: Answer non-loopback clients even without an API key.
        body_limit: Largest request body in bytes (413 above it); default 4 MiB.
        allowed_hosts: Host names to accept besides 127.0.0.1 / localhost / [::1] on a loopback
            socket (e.g. a reverse proxy's name); any other is a 421.
        context_token_budget: How many tokens of memories (``Kernel.prefetch``) a run's responder gets.
        user_id: Serve this user's sessions only (with ``agent_id`` / ``project_id``: that scope):
            threads it makes get the scope, any other thread or conversation is a 404.
        agent_id: As ``user_id``, for an agent.
        project_id: As ``user_id``, for a project.
        key_scopes: Several keys, each with its own scope (``{key: {"user_id": ...}}``, see
            ``load_key_scopes``); instead of ``api_key`` and a server-wide scope.

    Without a scope the server reaches only the threads and conversations made through it (the
    sessions other adapters wrote in the same file are 404); docs/server-security.md, "Scopes".
    """
    server_scope = check_scope(user_id=user_id, agent_id=agent_id, project_id=project_id)
    if key_scopes is not None and (api_key is not None or server_scope):
        raise InvalidArgument("Give either key_scopes (each key its scope) or api_key with user_id / agent_id / "
                              "project_id, not both.")

    def adapter(scope: dict[str, str]) -> AsyncOpenAIAssistantAdapter:
        return AsyncOpenAIAssistantAdapter(db, responder=responder, context_token_budget=context_token_budget,
                                           own_threads_only=not scope, **scope)

    if key_scopes is not None:
        by_key = {key: adapter(scope) for key, scope in check_key_scopes(key_scopes).items()}
        keys: Any = list(by_key)
    else:
        one, keys = adapter(server_scope), api_key

    def pick(request: Request) -> AsyncOpenAIAssistantAdapter:
        """The adapter of the key this request authenticated with (the guard checked it)."""
        return by_key[request.scope[KEY_SCOPE]] if key_scopes is not None else one

    async def create_thread(request: Request) -> Any:
        body = check_types(await _body(request, "messages", "metadata", "tool_resources"), _THREAD_KINDS)
        return await pick(request).create_thread(**body)

    async def thread(request: Request) -> Any:
        thread_id = request.path_params["thread_id"]
        if request.method == "GET":
            return await pick(request).retrieve_thread(thread_id)
        if request.method == "DELETE":
            return await pick(request).delete_thread(thread_id)
        body = check_types(await _body(request, "metadata", "tool_resources"), _THREAD_KINDS)
        return await pick(request).modify_thread(thread_id, **body)

    async def messages(request: Request) -> Any:
        thread_id = request.path_params["thread_id"]
        if request.method == "GET":
            query = request.query_params
            return await pick(request).list_messages(
                thread_id,
                limit=check_limit(query.get("limit")),
                order=query.get("order"),
                after=query.get("after"),
                before=query.get("before"),
                run_id=query.get("run_id"),
            )
        body = check_types(
            await _body(request, "role", "content", "attachments", "metadata"), {"attachments": "array"}
        )
        return await pick(request).create_message(
            thread_id,
            role=cast(Any, body.get("role")),  # checked by the adapter, which names what is missing
            content=cast(Any, body.get("content")),
            attachments=body.get("attachments"),
            metadata=body.get("metadata"),
        )

    async def message(request: Request) -> Any:
        thread_id, message_id = request.path_params["thread_id"], request.path_params["message_id"]
        if request.method == "GET":
            return await pick(request).retrieve_message(thread_id, message_id)
        if request.method == "DELETE":
            return await pick(request).delete_message(thread_id, message_id)
        body = await _body(request, "metadata")
        return await pick(request).modify_message(thread_id, message_id, **body)

    async def runs(request: Request) -> Any:
        thread_id = request.path_params["thread_id"]
        if request.method == "GET":
            query = request.query_params
            return await pick(request).list_runs(
                thread_id,
                limit=check_limit(query.get("limit")),
                order=query.get("order"),
                after=query.get("after"),
                before=query.get("before"),
            )
        body = await _body(request, *_RUN_FIELDS)
        return await pick(request).create_run(thread_id, assistant_id=cast(Any, body.get("assistant_id")), **_run_arguments(body))

    async def create_thread_and_run(request: Request) -> Any:
        body = await _body(request, *_CREATE_AND_RUN_FIELDS)
        arguments = _run_arguments(body)
        if "tool_resources" in body:
            arguments["tool_resources"] = body["tool_resources"]  # echoed nowhere: threads keep their own
        return await pick(request).create_thread_and_run(
            assistant_id=cast(Any, body.get("assistant_id")), thread=body.get("thread"), **arguments
        )

    async def run(request: Request) -> Any:
        thread_id, run_id = request.path_params["thread_id"], request.path_params["run_id"]
        if request.method == "GET":
            return await pick(request).retrieve_run(thread_id, run_id)
        body = await _body(request, "metadata")
        return await pick(request).modify_run(thread_id, run_id, **body)

    async def cancel_run(request: Request) -> Any:
        await _body(request)  # none expected: a stray field is a 400, as for every endpoint
        return await pick(request).cancel_run(request.path_params["thread_id"], request.path_params["run_id"])

    async def create_conversation(request: Request) -> Any:
        body = await _body(request, "items", "metadata")
        return await pick(request).create_conversation(**body)

    async def conversation(request: Request) -> Any:
        conversation_id = request.path_params["conversation_id"]
        if request.method == "GET":
            return await pick(request).retrieve_conversation(conversation_id)
        if request.method == "DELETE":
            return await pick(request).delete_conversation(conversation_id)
        body = await _body(request, "metadata")
        if "metadata" not in body:
            raise _missing("metadata")
        return await pick(request).update_conversation(conversation_id, metadata=body["metadata"])

    async def items(request: Request) -> Any:
        conversation_id = request.path_params["conversation_id"]
        if request.method == "GET":
            query = request.query_params
            return await pick(request).list_items(
                conversation_id,
                limit=check_limit(query.get("limit")),
                order=query.get("order"),
                after=query.get("after"),
            )
        body = await _body(request, "items")
        if "items" not in body:
            raise _missing("items")
        return await pick(request).create_items(conversation_id, items=body["items"])

    async def item(request: Request) -> Any:
        conversation_id, item_id = request.path_params["conversation_id"], request.path_params["item_id"]
        if request.method == "GET":
            return await pick(request).retrieve_item(conversation_id, item_id)
        return await pick(request).delete_item(conversation_id, item_id)

    def route(
        path: str, handler: Callable[[Request], Awaitable[Any]], *methods: str, kind: str = "thread"
    ) -> Route:
        return Route(path, _endpoint(kind, handler), methods=list(methods))

    routes = [
        route("/v1/threads", create_thread, "POST"),
        route("/v1/threads/runs", create_thread_and_run, "POST"),
        route("/v1/threads/{thread_id}", thread, "GET", "POST", "DELETE"),
        route("/v1/threads/{thread_id}/messages", messages, "GET", "POST"),
        route("/v1/threads/{thread_id}/messages/{message_id}", message, "GET", "POST", "DELETE"),
        route("/v1/threads/{thread_id}/runs", runs, "GET", "POST"),
        route("/v1/threads/{thread_id}/runs/{run_id}", run, "GET", "POST"),
        route("/v1/threads/{thread_id}/runs/{run_id}/cancel", cancel_run, "POST"),
        route("/v1/conversations", create_conversation, "POST", kind="conversation"),
        route(
            "/v1/conversations/{conversation_id}", conversation, "GET", "POST", "DELETE", kind="conversation"
        ),
        route("/v1/conversations/{conversation_id}/items", items, "GET", "POST", kind="conversation"),
        route(
            "/v1/conversations/{conversation_id}/items/{item_id}", item, "GET", "DELETE", kind="conversation"
        ),
    ]

    async def not_routed(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        return _error(status, f"Invalid URL ({request.method} {request.url.path})")

    app = Starlette(routes=routes, exception_handlers={404: not_routed, 405: not_routed})
    return HttpGuard(
        app,
        api_key=keys,
        allow_remote=allow_remote,
        writes="json",
        body_limit=body_limit,
        allowed_hosts=allowed_hosts,
        error_body=_openai_refusal,
    )


def _missing(param: str) -> InvalidArgument:
    error = InvalidArgument(f"Missing required parameter: '{param}'.")
    error.param = param
    error.code = "missing_required_parameter"
    return error


def serve(
    db_path: str | os.PathLike[str] | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    api_key: str | None = None,
    api_key_file: str | os.PathLike[str] | None = None,
    embedder: Any = "auto",
    ner: str | None = "auto",
    responder: Responder | None = None,
    allow_remote: bool = False,
    body_limit: int = DEFAULT_BODY_LIMIT,
    user_id: str | None = None,
    agent_id: str | None = None,
    project_id: str | None = None,
    key_scopes_file: str | os.PathLike[str] | None = None,
) -> None:
    """Serve the file at ``db_path`` on OpenAI's wire format with uvicorn until interrupted.

    The key is ``api_key``, else the first line of ``api_key_file``, else ``$AGENTBASE_API_KEY``
    (``resolve_api_key``); with none, only loopback clients are answered.

    Args:
        db_path: The agentbase file (created if missing); ``None``: ``$AGENTBASE_PATH``, the ``.agentbase`` pointer, ``./agentbase.db`` (``locate_database``).
        host: The interface to listen on; without a key it must be a loopback address
            unless ``allow_remote`` is True.
        port: The TCP port.
        api_key: The bearer key clients must send (``OpenAI(api_key=...)``).
        api_key_file: A file whose first line is the key (keeps it out of the process list).
        embedder: As for ``AgentBase``: ``"auto"``, ``"none"``, ``"minilm"``, ``"minilm-int8"``,
            ``"sentence-transformers:<path>"``, ... - the one the file was written with.
        ner: As for ``AgentBase``: ``"auto"``, ``"regex"``, a spaCy model name, or None.
        responder: ``fn(messages, context) -> reply`` for runs.
        allow_remote: Listen on a non-loopback interface without an API key.
        body_limit: Largest request body in bytes (413 above it).
        user_id: Serve this user's threads only (``agent_id`` / ``project_id`` likewise); without
            a scope, only the threads and conversations made through this server.
        agent_id: As ``user_id``, for an agent.
        project_id: As ``user_id``, for a project.
        key_scopes_file: A JSON key -> scope table (``load_key_scopes``): several keys, each
            reaching its own scope; instead of a single key and scope.

    Raises:
        InvalidArgument: No key for a non-loopback ``host`` (and not ``allow_remote``), a bad key,
            key file or key table, both a key table and a single key or scope, an unknown embedder.
        EmbeddingMismatch: The file was written with another embedder than ``embedder``.
    """
    require_extra("openai")
    scope = check_scope(user_id=user_id, agent_id=agent_id, project_id=project_id)
    if key_scopes_file is not None:
        if api_key is not None or api_key_file is not None or scope:
            raise InvalidArgument("Give either a key table (--keys) or one key with --user-id / --agent-id / "
                                  "--project-id, not both.")
        table: dict[str, dict[str, str]] | None = load_key_scopes(key_scopes_file)
        key = None
    else:
        table, key = None, resolve_api_key(api_key, api_key_file)
    check_bind(host, key or (next(iter(table)) if table else None), allow_remote=allow_remote)
    uvicorn = require("uvicorn", extra="openai")
    with AgentBase(db_path, embedder=embedder, ner=ner) as db:
        db.sync.initialize()  # a wrong embedder or path fails here, before the port is bound
        app = create_app(
            db, api_key=key, responder=responder, allow_remote=allow_remote, body_limit=body_limit,
            key_scopes=table, user_id=user_id, agent_id=agent_id, project_id=project_id,
        )
        uvicorn.run(app, host=host, port=port)
