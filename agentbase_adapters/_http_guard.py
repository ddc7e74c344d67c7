"""One guard in front of every agentbase HTTP server: rebinding, cross-site writes, size, key.

The OpenAI-wire server, the MCP streamable-HTTP server and the web dashboard all listen on
loopback by default, where any web page the user opens can reach them. ``HttpGuard`` is a pure
ASGI middleware (Starlette-compatible) that refuses, in this order::

    421 wrong_host            the request arrived on a loopback address but names another
                              Host (DNS rebinding: evil.example resolved to 127.0.0.1).
                              Allowed: 127.0.0.1, localhost, [::1] (+ ``allowed_hosts``),
                              with no port or the port the request arrived on.
    403 remote_client_refused no API key is set and the client is not on loopback
                              (unless ``allow_remote=True``).
    401 missing_api_key /     an API key is set and ``Authorization: Bearer <key>`` is
        invalid_api_key       absent or wrong (compared in constant time).
    403 cross_origin_request  an unsafe method (not GET/HEAD/OPTIONS) or a WebSocket handshake
                              sent by a browser from another origin: ``Sec-Fetch-Site`` other
                              than same-origin/none, else an ``Origin`` not this server's own.
    403 csrf_token_mismatch   ``csrf_token`` is set and an unsafe request lacks the header
                              ``X-CSRF-Token: <token>``.
    415 unsupported_media_type ``writes="json"`` and a request with a body, or a write that
                              declares a Content-Type, is not ``application/json`` (a page can send
                              text/plain or a form without a CORS preflight; it cannot send
                              application/json cross-site without one, which we never grant).
    413 body_too_large        the body exceeds ``body_limit`` bytes (default 4 MiB): refused on
                              a larger Content-Length before reading, else counted while read,
                              so no more than ``body_limit`` bytes are ever held.
    400 bad_content_length    a Content-Length that is not a number.

``writes`` picks the cross-site rule for bodies: ``"json"`` for JSON APIs (the two servers),
``"same-origin"`` for an app that takes HTML form posts (the dashboard): it drops the
Content-Type rule and relies on the same-origin check above (the rule Go 1.25's
``http.CrossOriginProtection`` uses), optionally with ``csrf_token``. Non-browser clients send
neither ``Origin`` nor ``Sec-Fetch-Site`` and pass the origin check.

Each app chooses its error body: ``error_body(Refusal) -> JSON value``; the default is
``{"error": {"code", "message"}}``, the OpenAI server passes one giving OpenAI's shape.

Keys (see docs/server-security.md)::

    key = resolve_api_key(cli_value, key_file, env="AGENTBASE_API_KEY")   # flag > file > env
    check_bind(host, key, allow_remote=False)   # InvalidArgument: non-loopback bind, no key

We do not generate a key when none is given (Jupyter does): a generated key changes on every
restart, so configured clients break, and printing it puts a secret in logs and terminals. On
loopback no key is needed (the guard above protects against browsers); beyond loopback the
server refuses to start without one and says how to make one.

JSON bodies go through ``parse_json(raw)``: at most ``MAX_JSON_DEPTH`` (64) levels of nesting,
no NaN/Infinity, no number too large for a float, UTF-8 only; anything else raises
``InvalidJson`` (a ``ValueError``) for the app to turn into a 400 - never RecursionError.

Usage::

    app = HttpGuard(starlette_app, api_key=resolve_api_key(None, None), body_limit=2**20)
    uvicorn.run(app, host="127.0.0.1", port=8000)
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import math
import os
import re
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from agentbase_kernel import InvalidArgument

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_BODY_LIMIT",
    "KEY_SCOPE",
    "LOOPBACK_HOSTS",
    "MAX_JSON_DEPTH",
    "HttpGuard",
    "InvalidJson",
    "Refusal",
    "check_api_key",
    "check_bind",
    "default_error_body",
    "is_loopback",
    "parse_json",
    "resolve_api_key",
]

API_KEY_ENV = "AGENTBASE_API_KEY"
KEY_SCOPE = "agentbase.api_key"  # the ASGI scope entry holding the key a request authenticated with
DEFAULT_BODY_LIMIT = 4 * 1024 * 1024
MAX_JSON_DEPTH = 64
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
CSRF_HEADER = b"x-csrf-token"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


@dataclass(frozen=True)
class Refusal:
    """Why the guard answered instead of the app: HTTP status, a stable code, a sentence."""

    status: int
    code: str
    message: str


def default_error_body(refusal: Refusal) -> Any:
    """``{"error": {"code": ..., "message": ...}}``."""
    return {"error": {"code": refusal.code, "message": refusal.message}}


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP literals (``127.0.0.0/8``, ``::1``, bracketed or not)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# -- keys ---------------------------------------------------------------------------------------

_KEY_CHARS = re.compile(r"[\x21-\x7e]+")  # visible ASCII: what an HTTP header carries unmangled


def check_api_key(key: str, source: str) -> str:
    """``key`` stripped, or ``InvalidArgument`` naming ``source`` if it is empty or not visible ASCII."""
    return _checked_key(key, source)


def _checked_key(key: str, source: str) -> str:
    key = key.strip()
    if not key:
        raise InvalidArgument(f"The API key from {source} is empty - put the key in it, or leave it unset.")
    if not _KEY_CHARS.fullmatch(key):
        raise InvalidArgument(
            f"The API key from {source} has spaces or non-ASCII characters, which an "
            "Authorization header cannot carry - use letters, digits and punctuation only."
        )
    return key


def resolve_api_key(
    cli_value: str | None, key_file: str | os.PathLike[str] | None, env: str = API_KEY_ENV
) -> str | None:
    """The server's API key: ``cli_value``, else the first line of ``key_file``, else ``$env``.

    ``--api-key`` on a command line is visible to every user in the process list; a file
    (mode 600) or the environment variable is not. Giving both a value and a file is an error.

    Raises:
        InvalidArgument: Both given; the file is missing/unreadable/empty; the key has spaces
            or non-ASCII characters.
    """
    if cli_value is not None and key_file is not None:
        raise InvalidArgument("Give the API key once: either --api-key or --api-key-file, not both.")
    if cli_value is not None:
        return _checked_key(cli_value, "--api-key")
    if key_file is not None:
        path = Path(key_file)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidArgument(f"Cannot read the API key file {str(path)!r}: {exc}") from exc
        first = text.strip().splitlines()[0] if text.strip() else ""
        return _checked_key(first, f"the file {str(path)!r}")
    value = os.environ.get(env)
    if value is None or not value.strip():
        return None
    return _checked_key(value, f"${env}")


def check_bind(host: str, api_key: str | None, *, allow_remote: bool = False) -> None:
    """Refuse to listen beyond loopback without a key (call before binding).

    Raises:
        InvalidArgument: ``host`` is not loopback, ``api_key`` is None and not ``allow_remote``.
    """
    if api_key is None and not allow_remote and not is_loopback(host):
        raise InvalidArgument(
            f"Refusing to serve on {host} without an API key - pass api_key=... (from a shell: "
            f"--api-key-file PATH, whose first line is the key, or ${API_KEY_ENV}). Make one with "
            "`python -c \"import secrets; print(secrets.token_urlsafe(32))\" > key.txt; chmod 600 key.txt`. "
            "Or listen on 127.0.0.1, or answer every host unauthenticated with allow_remote=True (--allow-remote)."
        )


# -- JSON ---------------------------------------------------------------------------------------


class InvalidJson(InvalidArgument):
    """The request body is not JSON we accept (syntax, nesting, NaN, encoding)."""


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[list(b"[{")] = 1
_BRACKET_STEP[list(b"]}")] = -1


def _too_deep(raw: bytes, max_depth: int) -> bool:
    """Whether brackets outside strings nest deeper than ``max_depth``, found without recursion.

    Vectorised (a running sum of +1/-1 per bracket) so a 4 MB body costs milliseconds.
    """
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return False  # cannot be too deep: ordinary bodies skip the scan
    outside = _JSON_STRING.sub(b"", raw)
    steps = _BRACKET_STEP[np.frombuffer(outside, dtype=np.uint8)]
    return bool(steps.size) and int(np.cumsum(steps, dtype=np.int32).max()) > max_depth


def _no_constant(name: str) -> Any:
    raise InvalidJson(f"{name} is not valid JSON: send numbers as finite decimals.")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise InvalidJson(f"The number {text[:40]} is too large: send numbers below 1.8e308.")
    return value


def parse_json(raw: bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse a request body as strict JSON (RFC 8259), nested at most ``max_depth`` deep.

    Raises:
        InvalidJson: Not UTF-8, not JSON, deeper than ``max_depth``, NaN/Infinity, or a number
            beyond float range or Python's int-digit limit.
    """
    if _too_deep(raw, max_depth):
        raise InvalidJson(f"The JSON body is nested more than {max_depth} levels deep.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidJson("The body is not UTF-8: send JSON encoded as UTF-8.") from None
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except InvalidJson:
        raise
    except (ValueError, RecursionError) as exc:  # RecursionError: belt and braces after _too_deep
        raise InvalidJson(f"The body is not valid JSON: {exc}") from None


# -- the middleware -----------------------------------------------------------------------------


def _split_host(value: str) -> tuple[str, str | None]:
    """``Host`` header -> (name, port or None); IPv6 literals keep their brackets."""
    if value.startswith("["):
        end = value.find("]")
        if end == -1:
            return value, None
        name, rest = value[: end + 1], value[end + 1 :]
        return name, rest[1:] if rest.startswith(":") else (None if not rest else rest)
    name, sep, port = value.rpartition(":")
    return (name, port) if sep else (value, None)


class HttpGuard:
    """ASGI middleware: Host, client, key, origin, content type and size checks before the app.

    Usage::

        guarded = HttpGuard(app, api_key="k", error_body=lambda r: {"error": r.message})
        uvicorn.run(guarded, host="127.0.0.1", port=8000)

    Args:
        app: The ASGI app to protect (kept as ``.app``).
        api_key: If set, every HTTP/WebSocket request needs ``Authorization: Bearer <api_key>``.
            Several keys (a collection) are each accepted; the one a request sent is left in the
            ASGI scope as ``scope["agentbase.api_key"]`` for the app (``KEY_SCOPE``), so an app can
            map keys to tenants.
        allow_remote: Without a key, still answer non-loopback clients.
        writes: ``"json"``: bodies must be ``application/json`` (415). ``"same-origin"``: any
            body type, cross-origin browser writes refused (403) - for form-posting apps.
        csrf_token: If set, unsafe methods also need the header ``X-CSRF-Token: <csrf_token>``.
        body_limit: Largest accepted request body in bytes (413 above it).
        allowed_hosts: More Host names to accept on loopback (e.g. a reverse proxy's name).
        error_body: ``Refusal -> JSON value`` for the response body.
        response_headers: Headers added to every response, the guard's refusals included
            (the dashboard's ``Content-Security-Policy`` and ``X-Frame-Options``).
    """

    def __init__(
        self,
        app: _ASGIApp,
        *,
        api_key: str | Collection[str] | None = None,
        allow_remote: bool = False,
        writes: Literal["json", "same-origin"] = "json",
        csrf_token: str | None = None,
        body_limit: int = DEFAULT_BODY_LIMIT,
        allowed_hosts: Iterable[str] = (),
        error_body: Callable[[Refusal], Any] = default_error_body,
        response_headers: Mapping[str, str] | None = None,
    ) -> None:
        if writes not in ("json", "same-origin"):
            raise ValueError(f"writes must be 'json' or 'same-origin', not {writes!r}")
        if isinstance(body_limit, bool) or not isinstance(body_limit, int) or body_limit < 0:
            raise ValueError(f"body_limit must be a byte count >= 0, not {body_limit!r}")
        self.app = app
        keys = [api_key] if isinstance(api_key, str) else list(api_key or ())
        if api_key is not None and not keys:
            raise ValueError("api_key is an empty collection: pass None for no key, or the keys")
        self.api_keys = tuple(key.encode("utf-8") for key in keys)
        self.api_key = api_key
        self.response_headers = [(k.lower().encode("latin-1"), v.encode("latin-1"))
                                 for k, v in (response_headers or {}).items()]
        self.allow_remote = allow_remote
        self.writes = writes
        self.csrf_token = csrf_token
        self.body_limit = body_limit
        self.allowed_hosts = LOOPBACK_HOSTS | {h.lower() for h in allowed_hosts}
        self.error_body = error_body

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.response_headers and scope["type"] == "http":
            send = self._with_headers(send)
        headers = _Headers(scope)
        refusal = self._refuse_caller(scope, headers)
        if refusal is None and scope["type"] == "websocket":
            refusal = self._refuse_cross_origin(headers)  # browsers open sockets anywhere, no CORS
        if refusal is None and scope["type"] == "http" and scope["method"] not in _SAFE_METHODS:
            refusal = self._refuse_cross_origin(headers) or self._refuse_csrf(headers)
        if refusal is None and scope["type"] == "http":
            refusal = self._refuse_declared_body(headers, write=scope["method"] not in _SAFE_METHODS)
        if refusal is not None:
            await self._answer(scope, send, refusal)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        body, refusal = await self._read_body(receive)
        if refusal is None and body and self.writes == "json" and not _is_json(headers.get(b"content-type")):
            refusal = self._unsupported_type(headers)
        if refusal is not None:
            await self._answer(scope, send, refusal)
            return
        await self.app(scope, _replay(body, receive), send)

    def _with_headers(self, send: _Send) -> _Send:
        async def sending(message: _Message) -> None:
            if message["type"] == "http.response.start":
                present = {bytes(name).lower() for name, _ in message.get("headers", ())}
                extra = [(k, v) for k, v in self.response_headers if k not in present]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        return sending

    # each check returns the Refusal, or None to go on

    def _refuse_caller(self, scope: _Scope, headers: _Headers) -> Refusal | None:
        server = scope.get("server")
        if server and is_loopback(str(server[0])):
            host = headers.get(b"host")
            name, port = _split_host(host.decode("latin-1")) if host else ("", None)
            right_port = port is None or port == str(server[1])
            if name.lower() not in self.allowed_hosts or not right_port:
                shown = host.decode("latin-1")[:100] if host else "(none)"
                return Refusal(
                    421,
                    "wrong_host",
                    f"This server answers only requests addressed to 127.0.0.1, localhost or [::1] "
                    f"on port {server[1]}; the Host header was {shown!r}. (A web page resolving its "
                    "own domain to this machine - DNS rebinding - is refused this way.)",
                )
        if not self.api_keys:
            client = scope.get("client")
            if self.allow_remote or not client or is_loopback(str(client[0])):
                return None
            return Refusal(
                403,
                "remote_client_refused",
                "This agentbase server has no API key, so it only answers loopback clients; "
                "start it with an API key (or allow_remote=True) to serve other hosts.",
            )
        value = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, given = value.partition(" ")
        given = given.strip()
        if scheme.lower() != "bearer" or not given:
            return Refusal(
                401,
                "missing_api_key",
                "You didn't provide an API key. You need to provide your API key in an Authorization "
                "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            )
        sent = given.encode("latin-1")
        # every key is compared (no early exit), so the time taken does not tell which one was close
        matches = [key for key in self.api_keys if hmac.compare_digest(sent, key)]
        if not matches:
            return Refusal(401, "invalid_api_key", f"Incorrect API key provided: {_masked(given)}.")
        scope[KEY_SCOPE] = matches[0].decode("utf-8")
        return None

    def _refuse_cross_origin(self, headers: _Headers) -> Refusal | None:
        site = headers.get(b"sec-fetch-site")
        origin = headers.get(b"origin")
        if site is not None:
            cross = site.lower() not in (b"same-origin", b"none")
        elif origin is not None:
            cross = not _same_origin(origin, headers.get(b"host"))
        else:
            cross = False  # not a browser: no cross-site forgery possible
        if not cross:
            return None
        return Refusal(
            403,
            "cross_origin_request",
            "Cross-origin writes are refused: this server takes requests from its own pages "
            "and from non-browser clients only.",
        )

    def _refuse_csrf(self, headers: _Headers) -> Refusal | None:
        if self.csrf_token is None:
            return None
        given = headers.get(CSRF_HEADER, b"")
        if hmac.compare_digest(given, self.csrf_token.encode("utf-8")):
            return None
        return Refusal(403, "csrf_token_mismatch", "Missing or wrong X-CSRF-Token header.")

    def _refuse_declared_body(self, headers: _Headers, *, write: bool) -> Refusal | None:
        length = headers.get(b"content-length")
        if length is not None:
            if not length.strip().isdigit():
                return Refusal(400, "bad_content_length", "The Content-Length header is not a number.")
            if int(length) > self.body_limit:
                return self._too_large()
        has_body = (length is not None and int(length) > 0) or b"transfer-encoding" in headers
        kind = headers.get(b"content-type")
        # An empty form post is still a write a page can send: a declared non-JSON type is refused too.
        typed_write = write and kind is not None
        if (has_body or typed_write) and self.writes == "json" and not _is_json(kind):
            return self._unsupported_type(headers)
        return None

    async def _read_body(self, receive: _Receive) -> tuple[bytes, Refusal | None]:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # http.disconnect: the app sees an empty body
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.body_limit:
                return b"", self._too_large()
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks), None

    def _too_large(self) -> Refusal:
        return Refusal(
            413,
            "body_too_large",
            f"The request body is larger than this server's limit of {self.body_limit} bytes.",
        )

    @staticmethod
    def _unsupported_type(headers: _Headers) -> Refusal:
        given = headers.get(b"content-type")
        shown = given.decode("latin-1")[:100] if given else "none"
        return Refusal(
            415,
            "unsupported_media_type",
            f"Send the request body as JSON with the header Content-Type: application/json "
            f"(got {shown!r}).",
        )

    async def _answer(self, scope: _Scope, send: _Send, refusal: Refusal) -> None:
        if scope["type"] == "websocket":
            # Closing before accept makes the server answer the handshake with 403.
            await send({"type": "websocket.close", "code": 1008, "reason": refusal.code})
            return
        body = self.error_body(refusal)
        if isinstance(body, str):
            payload, kind = body.encode("utf-8"), b"text/plain; charset=utf-8"
        else:
            payload, kind = json.dumps(body).encode("utf-8"), b"application/json"
        headers = [(b"content-type", kind), (b"content-length", str(len(payload)).encode())]
        if refusal.status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        if refusal.status == 413:
            headers.append((b"connection", b"close"))  # the unread body is not drained
        await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})


class _Headers:
    """The request headers, lower-cased; a repeated header keeps its first value."""

    def __init__(self, scope: _Scope) -> None:
        self._values: dict[bytes, bytes] = {}
        for name, value in scope.get("headers", ()):
            self._values.setdefault(bytes(name).lower(), bytes(value))

    def get(self, name: bytes, default: bytes | None = None) -> Any:
        return self._values.get(name, default)

    def __contains__(self, name: bytes) -> bool:
        return name in self._values


def _is_json(content_type: bytes | None) -> bool:
    if content_type is None:
        return False
    media = content_type.split(b";", 1)[0].strip().lower()
    return media == b"application/json"


def _same_origin(origin: bytes, host: bytes | None) -> bool:
    if host is None or origin == b"null":
        return False
    text = origin.decode("latin-1").lower()
    scheme, sep, rest = text.partition("://")
    return bool(sep) and scheme in ("http", "https") and rest == host.decode("latin-1").lower()


def _masked(key: str) -> str:
    """How OpenAI echoes a wrong key: its start and its last four characters."""
    return key if len(key) <= 8 else f"{key[:3]}{'*' * (len(key) - 7)}{key[-4:]}"


def _replay(body: bytes, receive: _Receive) -> _Receive:
    """A ``receive`` that first hands the app the body already read, then the real one."""
    sent = False

    async def replayed() -> _Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
