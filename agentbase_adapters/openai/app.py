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
``{"error": {"message", "type", "param", "code"}}`` with 400 / 401 / 403 / 404 / 405 / 500.
Needs ``pip install 'agentbase[openai]'``.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from agentbase_adapters._require import require
from agentbase_adapters.openai._wire import check_limit
from agentbase_adapters.openai.adapter import AsyncOpenAIAssistantAdapter, Responder
from agentbase_kernel import (
    AgentBase,
    AgentBaseError,
    InvalidArgument,
    MessageNotFound,
    NotFoundError,
    SessionNotFound,
)

require("starlette", extra="openai")

from starlette.applications import Starlette  # noqa: E402
from starlette.exceptions import HTTPException  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, Response  # noqa: E402
from starlette.routing import Route  # noqa: E402
from starlette.types import ASGIApp, Receive, Scope, Send  # noqa: E402

__all__ = ["create_app", "serve"]

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


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _masked(key: str) -> str:
    """How OpenAI echoes a wrong key: its start and its last four characters."""
    return key if len(key) <= 8 else f"{key[:3]}{'*' * (len(key) - 7)}{key[-4:]}"


class _Guard:
    """ASGI middleware: the bearer-key check, or loopback clients only when there is no key."""

    def __init__(self, app: ASGIApp, *, api_key: str | None, allow_remote: bool) -> None:
        self.app = app
        self.api_key = api_key
        self.allow_remote = allow_remote

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        if self.api_key is None:
            client = scope.get("client")
            if self.allow_remote or client is None or _is_loopback(client[0]):
                return None
            return _error(
                403,
                "This agentbase server has no API key, so it only answers loopback clients; "
                "start it with an API key (or allow_remote=True) to serve other hosts.",
                kind="permission_error",
                code="remote_client_refused",
            )
        headers = dict(scope["headers"])
        value = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, given = value.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return _error(
                401,
                "You didn't provide an API key. You need to provide your API key in an Authorization "
                "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            )
        given = given.strip()
        if not hmac.compare_digest(given.encode(), self.api_key.encode()):
            return _error(401, f"Incorrect API key provided: {_masked(given)}.", code="invalid_api_key")
        return None


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise InvalidArgument(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
            "using your HTTP library correctly. The OpenAI API expects a JSON payload.)"
        )
    return body


def _field(body: dict[str, Any], key: str) -> Any:
    """A body field as sent (``None`` when absent); the adapter reports it if it is required."""
    return body.get(key)


def _present(body: dict[str, Any], *keys: str) -> dict[str, Any]:
    """Only the keys the client sent, so an omitted field is left unchanged."""
    return {key: body[key] for key in keys if key in body}


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


def create_app(
    db: AgentBase,
    *,
    api_key: str | None = None,
    responder: Responder | None = None,
    allow_remote: bool = False,
) -> ASGIApp:
    """The ASGI app serving ``db`` on OpenAI's threads and conversations endpoints.

    Usage::

        app = create_app(AgentBase("memory.db"), api_key="sk-local", responder=my_fn)
        client = openai.OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="sk-local")
        client.beta.threads.create()

    Args:
        db: The database; the app does not close it.
        api_key: If given, every request needs ``Authorization: Bearer <api_key>`` (else 401).
            Without one, only loopback clients are answered (403) unless ``allow_remote`` is True.
        responder: ``fn(messages, context) -> reply`` for runs; without it, runs get a 400.
        allow_remote: Answer non-loopback clients even without an API key.
    """
    oa = AsyncOpenAIAssistantAdapter(db, responder=responder)

    async def create_thread(request: Request) -> Any:
        body = await _body(request)
        return await oa.create_thread(**_present(body, "messages", "metadata", "tool_resources"))

    async def thread(request: Request) -> Any:
        thread_id = request.path_params["thread_id"]
        if request.method == "GET":
            return await oa.retrieve_thread(thread_id)
        if request.method == "DELETE":
            return await oa.delete_thread(thread_id)
        body = await _body(request)
        return await oa.modify_thread(thread_id, **_present(body, "metadata", "tool_resources"))

    async def messages(request: Request) -> Any:
        thread_id = request.path_params["thread_id"]
        if request.method == "GET":
            query = request.query_params
            return await oa.list_messages(
                thread_id,
                limit=check_limit(query.get("limit")),
                order=query.get("order"),
                after=query.get("after"),
                before=query.get("before"),
                run_id=query.get("run_id"),
            )
        body = await _body(request)
        return await oa.create_message(
            thread_id,
            role=_field(body, "role"),
            content=_field(body, "content"),
            attachments=body.get("attachments"),
            metadata=body.get("metadata"),
        )

    async def message(request: Request) -> Any:
        thread_id, message_id = request.path_params["thread_id"], request.path_params["message_id"]
        if request.method == "GET":
            return await oa.retrieve_message(thread_id, message_id)
        if request.method == "DELETE":
            return await oa.delete_message(thread_id, message_id)
        body = await _body(request)
        return await oa.modify_message(thread_id, message_id, **_present(body, "metadata"))

    async def runs(request: Request) -> Any:
        thread_id = request.path_params["thread_id"]
        if request.method == "GET":
            query = request.query_params
            return await oa.list_runs(
                thread_id,
                limit=check_limit(query.get("limit")),
                order=query.get("order"),
                after=query.get("after"),
                before=query.get("before"),
            )
        body = await _body(request)
        body.pop("thread_id", None)
        return await oa.create_run(thread_id, assistant_id=body.pop("assistant_id", None), **body)

    async def create_thread_and_run(request: Request) -> Any:
        body = await _body(request)
        return await oa.create_thread_and_run(assistant_id=body.pop("assistant_id", None), **body)

    async def run(request: Request) -> Any:
        thread_id, run_id = request.path_params["thread_id"], request.path_params["run_id"]
        if request.method == "GET":
            return await oa.retrieve_run(thread_id, run_id)
        body = await _body(request)
        return await oa.modify_run(thread_id, run_id, **_present(body, "metadata"))

    async def cancel_run(request: Request) -> Any:
        return await oa.cancel_run(request.path_params["thread_id"], request.path_params["run_id"])

    async def create_conversation(request: Request) -> Any:
        body = await _body(request)
        return await oa.create_conversation(**_present(body, "items", "metadata"))

    async def conversation(request: Request) -> Any:
        conversation_id = request.path_params["conversation_id"]
        if request.method == "GET":
            return await oa.retrieve_conversation(conversation_id)
        if request.method == "DELETE":
            return await oa.delete_conversation(conversation_id)
        body = await _body(request)
        if "metadata" not in body:
            raise _missing("metadata")
        return await oa.update_conversation(conversation_id, metadata=body["metadata"])

    async def items(request: Request) -> Any:
        conversation_id = request.path_params["conversation_id"]
        if request.method == "GET":
            query = request.query_params
            return await oa.list_items(
                conversation_id,
                limit=check_limit(query.get("limit")),
                order=query.get("order"),
                after=query.get("after"),
            )
        body = await _body(request)
        if "items" not in body:
            raise _missing("items")
        return await oa.create_items(conversation_id, items=body["items"])

    async def item(request: Request) -> Any:
        conversation_id, item_id = request.path_params["conversation_id"], request.path_params["item_id"]
        if request.method == "GET":
            return await oa.retrieve_item(conversation_id, item_id)
        return await oa.delete_item(conversation_id, item_id)

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
    return _Guard(app, api_key=api_key, allow_remote=allow_remote)


def _missing(param: str) -> InvalidArgument:
    error = InvalidArgument(f"Missing required parameter: '{param}'.")
    error.param = param
    error.code = "missing_required_parameter"
    return error


def serve(
    db_path: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    api_key: str | None = None,
    responder: Responder | None = None,
    allow_remote: bool = False,
) -> None:
    """Serve the file at ``db_path`` on OpenAI's wire format with uvicorn until interrupted.

    Args:
        db_path: The agentbase file (created if missing).
        host: The interface to listen on; without ``api_key`` it must be a loopback address
            unless ``allow_remote`` is True.
        port: The TCP port.
        api_key: The bearer key clients must send (``OpenAI(api_key=...)``).
        responder: ``fn(messages, context) -> reply`` for runs.
        allow_remote: Listen on a non-loopback interface without an API key.

    Raises:
        ValueError: ``host`` is not loopback, there is no ``api_key`` and ``allow_remote`` is False.
    """
    if api_key is None and not allow_remote and not _is_loopback(host):
        raise ValueError(
            f"Refusing to serve on {host} without an API key - pass api_key=... (--api-key), "
            "or allow_remote=True to accept unauthenticated clients from other hosts"
        )
    uvicorn = require("uvicorn", extra="openai")
    with AgentBase(db_path) as db:
        app = create_app(db, api_key=api_key, responder=responder, allow_remote=allow_remote)
        uvicorn.run(app, host=host, port=port)
