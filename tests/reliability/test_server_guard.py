"""The shared HTTP guard (agentbase_adapters/_http_guard.py) in front of a small Starlette app.

The app echoes what reached it, so each test can say both what the client got and whether the
request got through. Host checks need the request to arrive on a loopback address: the
TestClient's ``base_url`` sets that (``scope["server"]``); one test uses a real uvicorn socket.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from hypothesis import given
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket, WebSocketDisconnect

from agentbase_adapters._http_guard import (
    KEY_SCOPE,
    HttpGuard,
    InvalidJson,
    Refusal,
    check_bind,
    parse_json,
    resolve_api_key,
)
from agentbase_kernel.errors import InvalidArgument

from ._inputs import (
    BAD_HOSTS,
    GOOD_HOSTS,
    JSON_CONTENT_TYPES,
    NOT_JSON_CONTENT_TYPES,
    RAW_BODIES,
    SETTINGS,
    TALLY,
    nested,
)

PORT = 8000
BASE = f"http://127.0.0.1:{PORT}"


def _echo_app() -> Starlette:
    async def echo(request: Request) -> JSONResponse:
        body = await request.body()
        return JSONResponse({"reached": True, "bytes": len(body)})

    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text("hello")
        await websocket.close()

    return Starlette(routes=[Route("/x", echo, methods=["GET", "POST", "DELETE"]), WebSocketRoute("/ws", ws)])


def client(guard: HttpGuard, *, peer: str = "127.0.0.1", base: str = BASE) -> TestClient:
    return TestClient(guard, base_url=base, client=(peer, 50000))


@pytest.fixture
def guarded() -> TestClient:
    return client(HttpGuard(_echo_app(), body_limit=1000))


def refused(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json() == {"error": {"code": code, "message": response.json()["error"]["message"]}}
    assert "reached" not in response.json()


# -- item 2: DNS rebinding --------------------------------------------------------------------


@pytest.mark.parametrize("host", GOOD_HOSTS)
def test_loopback_host_names_are_served(guarded: TestClient, host: str) -> None:
    response = guarded.get("/x", headers={"host": host.format(port=PORT)})
    assert response.json()["reached"] is True


@pytest.mark.parametrize("host", BAD_HOSTS)
def test_other_host_names_get_421(guarded: TestClient, host: str) -> None:
    TALLY["inputs_tried"] += 1
    refused(guarded.get("/x", headers={"host": host.format(port=PORT)}), 421, "wrong_host")


def test_allowed_hosts_adds_a_name() -> None:
    proxied = client(HttpGuard(_echo_app(), allowed_hosts=["memory.internal"]))
    assert proxied.get("/x", headers={"host": f"memory.internal:{PORT}"}).status_code == 200
    assert proxied.get("/x", headers={"host": "evil.example"}).status_code == 421


def test_a_request_that_arrived_elsewhere_is_not_host_checked() -> None:
    # Bound beyond loopback (with a key), the server is reached by its LAN/DNS name.
    lan = client(HttpGuard(_echo_app(), api_key="k" * 20), base="http://192.168.1.5:8000")
    ok = lan.get("/x", headers={"host": "memory.example:8000", "authorization": "Bearer " + "k" * 20})
    assert ok.status_code == 200


def test_websocket_with_a_foreign_host_is_closed() -> None:
    guarded = client(HttpGuard(_echo_app()))
    url = f"ws://127.0.0.1:{PORT}/ws"  # the TestClient's websockets ignore base_url
    with guarded.websocket_connect(url) as ws:
        assert ws.receive_text() == "hello"
    with pytest.raises(WebSocketDisconnect) as excinfo:
        with guarded.websocket_connect(url, headers={"host": "evil.example"}) as ws:
            ws.receive_text()
    assert excinfo.value.code == 1008
    with pytest.raises(WebSocketDisconnect):  # a page elsewhere opening a socket: no CORS protects it
        with guarded.websocket_connect(url, headers={"host": f"127.0.0.1:{PORT}", "origin": "http://evil.example"}) as ws:
            ws.receive_text()
    with guarded.websocket_connect(url, headers={"host": f"127.0.0.1:{PORT}", "origin": BASE}) as ws:
        assert ws.receive_text() == "hello"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def real_server() -> Iterator[int]:
    """The guarded echo app behind uvicorn on a free loopback port."""
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(HttpGuard(_echo_app(), body_limit=1000), host="127.0.0.1", port=port,
                       log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    yield port
    server.should_exit = True
    thread.join(timeout=10)


def _raw(port: int, method: str, headers: dict[str, str], body: bytes | None = None,
         chunks: list[bytes] | None = None) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, "/x", skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if chunks is not None:
            conn.putheader("Transfer-Encoding", "chunked")
        elif body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        try:
            if chunks is not None:
                for chunk in chunks:
                    conn.send(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                conn.send(b"0\r\n\r\n")
            elif body:
                conn.send(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered 413 and closed before the whole body went out
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_real_socket_checks_host_and_port(real_server: int) -> None:
    port = real_server
    assert _raw(port, "GET", {"Host": f"localhost:{port}"}) == (200, {"reached": True, "bytes": 0})
    assert _raw(port, "GET", {"Host": f"[::1]:{port}"})[0] == 200
    status, body = _raw(port, "GET", {"Host": f"evil.example:{port}"})
    assert (status, body["error"]["code"]) == (421, "wrong_host")
    assert _raw(port, "GET", {"Host": f"127.0.0.1:{port + 1}"})[0] == 421


def test_real_socket_chunked_body_over_the_limit_is_413(real_server: int) -> None:
    headers = {"Host": f"127.0.0.1:{real_server}", "Content-Type": "application/json"}
    status, body = _raw(real_server, "POST", headers, chunks=[b" " * 300] * 10)
    assert (status, body["error"]["code"]) == (413, "body_too_large")
    assert _raw(real_server, "POST", headers, chunks=[b" " * 300] * 3) == (200, {"reached": True, "bytes": 900})


# -- item 1: cross-site writes ----------------------------------------------------------------


@pytest.mark.parametrize("content_type", NOT_JSON_CONTENT_TYPES)
def test_a_body_that_is_not_json_gets_415(guarded: TestClient, content_type: str) -> None:
    TALLY["inputs_tried"] += 1
    response = guarded.post("/x", content=b'{"metadata": {"user_id": "alice"}}',
                            headers={"content-type": content_type})
    refused(response, 415, "unsupported_media_type")


def test_a_body_without_content_type_gets_415(guarded: TestClient) -> None:
    response = guarded.post("/x", content=b"{}", headers={"content-type": ""})
    refused(response, 415, "unsupported_media_type")
    request = guarded.build_request("POST", "/x", content=b"{}")
    assert "content-type" not in request.headers
    refused(guarded.send(request), 415, "unsupported_media_type")


@pytest.mark.parametrize("content_type", JSON_CONTENT_TYPES)
def test_json_bodies_pass(guarded: TestClient, content_type: str) -> None:
    response = guarded.post("/x", content=b"{}", headers={"content-type": content_type})
    assert response.json() == {"reached": True, "bytes": 2}


def test_a_request_without_a_body_needs_no_content_type(guarded: TestClient) -> None:
    assert guarded.post("/x").json()["reached"] is True
    assert guarded.delete("/x").json()["reached"] is True
    assert guarded.get("/x", headers={"content-type": "text/plain"}).json()["reached"] is True


def test_an_empty_form_post_is_415(guarded: TestClient) -> None:
    # <form method=post> with no fields: Content-Length 0, a form type - still a write.
    response = guarded.post("/x", content=b"", headers={"content-type": "application/x-www-form-urlencoded"})
    refused(response, 415, "unsupported_media_type")


@pytest.mark.parametrize("headers", [
    {"origin": "http://evil.example"},
    {"origin": "null"},
    {"origin": f"http://localhost:{PORT + 1}"},
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},
    {"sec-fetch-site": "cross-site", "origin": BASE},  # Sec-Fetch-Site wins: it cannot be forged by a page
], ids=["foreign-origin", "null-origin", "other-port", "cross-site", "same-site", "cross-site-own-origin"])
def test_cross_origin_writes_get_403(guarded: TestClient, headers: dict[str, str]) -> None:
    refused(guarded.post("/x", json={}, headers=headers), 403, "cross_origin_request")


def test_same_origin_and_non_browser_writes_pass(guarded: TestClient) -> None:
    assert guarded.post("/x", json={}, headers={"origin": BASE}).status_code == 200
    assert guarded.post("/x", json={}, headers={"sec-fetch-site": "same-origin"}).status_code == 200
    assert guarded.post("/x", json={}, headers={"sec-fetch-site": "none"}).status_code == 200
    assert guarded.post("/x", json={}).status_code == 200  # curl, the openai SDK: no Origin at all


def test_cross_origin_reads_are_not_refused(guarded: TestClient) -> None:
    # Without CORS headers the page cannot read the answer; a GET changes nothing.
    assert guarded.get("/x", headers={"origin": "http://evil.example"}).status_code == 200


def test_same_origin_mode_takes_forms_from_its_own_pages_only() -> None:
    forms = client(HttpGuard(_echo_app(), writes="same-origin", csrf_token="tok-123"))
    ok = forms.post("/x", data={"a": "b"}, headers={"origin": BASE, "x-csrf-token": "tok-123"})
    assert ok.json()["reached"] is True
    refused(forms.post("/x", data={"a": "b"}, headers={"origin": "http://evil.example", "x-csrf-token": "tok-123"}),
            403, "cross_origin_request")
    refused(forms.post("/x", data={"a": "b"}, headers={"origin": BASE}), 403, "csrf_token_mismatch")
    refused(forms.post("/x", data={"a": "b"}, headers={"x-csrf-token": "tok-999"}), 403, "csrf_token_mismatch")


def test_unknown_writes_mode_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="writes must be 'json' or 'same-origin'"):
        HttpGuard(_echo_app(), writes="forms")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="body_limit must be a byte count"):
        HttpGuard(_echo_app(), body_limit=-1)


# -- item 4: body limit -----------------------------------------------------------------------


def test_a_declared_length_over_the_limit_is_refused_before_reading(guarded: TestClient) -> None:
    refused(guarded.post("/x", content=b"x" * 1001, headers={"content-type": "application/json"}),
            413, "body_too_large")
    assert guarded.post("/x", content=b" " * 1000, headers={"content-type": "application/json"}).status_code == 200


def test_an_endless_body_is_cut_at_the_limit() -> None:
    """A body that never ends: the guard stops reading past the limit and answers 413."""
    limit, chunk = 10_000, b" " * 4096
    pulled = 0
    reached = False

    async def app(scope: Any, receive: Any, send: Any) -> None:
        nonlocal reached
        reached = True

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/x", "server": ("127.0.0.1", PORT), "client": ("127.0.0.1", 1),
             "headers": [(b"host", f"127.0.0.1:{PORT}".encode()), (b"content-type", b"application/json"),
                         (b"transfer-encoding", b"chunked")]}
    asyncio.run(HttpGuard(app, body_limit=limit)(scope, receive, send))
    assert not reached
    assert sent[0]["status"] == 413
    assert pulled <= limit + len(chunk)


def test_bad_content_length_is_400() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        raise AssertionError("the body must not be read")

    scope = {"type": "http", "method": "POST", "path": "/x", "server": ("127.0.0.1", PORT), "client": ("127.0.0.1", 1),
             "headers": [(b"host", b"localhost"), (b"content-type", b"application/json"), (b"content-length", b"12x")]}
    asyncio.run(HttpGuard(_echo_app())(scope, receive, send))
    assert sent[0]["status"] == 400
    assert json.loads(sent[1]["body"])["error"]["code"] == "bad_content_length"


# -- keys -------------------------------------------------------------------------------------


def test_key_is_required_when_set() -> None:
    keyed = client(HttpGuard(_echo_app(), api_key="sk-right-key-123"))
    missing = keyed.get("/x")
    refused(missing, 401, "missing_api_key")
    assert missing.headers["www-authenticate"] == "Bearer"
    refused(keyed.get("/x", headers={"authorization": "Bearer sk-wrong-key-999"}), 401, "invalid_api_key")
    refused(keyed.get("/x", headers={"authorization": "Basic sk-right-key-123"}), 401, "missing_api_key")
    refused(keyed.get("/x", headers={"authorization": "Bearer ключ".encode()}), 401, "invalid_api_key")
    assert keyed.get("/x", headers={"authorization": "Bearer sk-right-key-123"}).status_code == 200
    assert keyed.get("/x", headers={"authorization": "bearer  sk-right-key-123 "}).status_code == 200


def test_several_keys_each_pass_and_the_app_learns_which() -> None:
    async def which(request: Request) -> JSONResponse:
        return JSONResponse({"key": request.scope.get(KEY_SCOPE)})

    keyed = client(HttpGuard(Starlette(routes=[Route("/x", which)]), api_key=["sk-alice-key-1", "sk-bob-key-22"]))
    assert keyed.get("/x", headers={"authorization": "Bearer sk-alice-key-1"}).json() == {"key": "sk-alice-key-1"}
    assert keyed.get("/x", headers={"authorization": "Bearer sk-bob-key-22"}).json() == {"key": "sk-bob-key-22"}
    refused(keyed.get("/x", headers={"authorization": "Bearer sk-carol-key"}), 401, "invalid_api_key")
    refused(keyed.get("/x"), 401, "missing_api_key")
    with pytest.raises(ValueError, match="empty collection"):
        HttpGuard(_echo_app(), api_key=[])


def test_response_headers_go_on_every_answer_and_refusal() -> None:
    guard = HttpGuard(_echo_app(), response_headers={"X-Frame-Options": "DENY"})
    assert client(guard).get("/x").headers["x-frame-options"] == "DENY"
    assert client(guard).get("/x", headers={"host": "evil.example"}).headers["x-frame-options"] == "DENY"
    assert client(guard).get("/missing").headers["x-frame-options"] == "DENY"


def test_without_a_key_only_loopback_peers_are_answered() -> None:
    refused(client(HttpGuard(_echo_app()), peer="10.1.2.3").get("/x"), 403, "remote_client_refused")
    assert client(HttpGuard(_echo_app()), peer="::1").get("/x").status_code == 200
    assert client(HttpGuard(_echo_app(), allow_remote=True), peer="10.1.2.3").get("/x").status_code == 200


def test_each_app_chooses_its_error_body() -> None:
    def shaped(refusal: Refusal) -> Any:
        return {"problem": refusal.code, "status": refusal.status}

    response = client(HttpGuard(_echo_app(), error_body=shaped)).get("/x", headers={"host": "evil.example"})
    assert response.json() == {"problem": "wrong_host", "status": 421}
    text = client(HttpGuard(_echo_app(), error_body=lambda r: r.message)).get("/x", headers={"host": "evil.example"})
    assert text.headers["content-type"].startswith("text/plain") and "Host header" in text.text


def test_resolve_api_key_order_and_sources(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = tmp_path / "key.txt"
    key_file.write_text("sk-from-file\nsecond line ignored\n")
    monkeypatch.delenv("AGENTBASE_API_KEY", raising=False)
    assert resolve_api_key(None, None) is None
    monkeypatch.setenv("AGENTBASE_API_KEY", " sk-from-env\n")
    assert resolve_api_key(None, None) == "sk-from-env"
    assert resolve_api_key(None, key_file) == "sk-from-file"
    assert resolve_api_key("sk-from-flag", None) == "sk-from-flag"
    monkeypatch.setenv("OTHER_KEY", "sk-other")
    assert resolve_api_key(None, None, env="OTHER_KEY") == "sk-other"
    monkeypatch.setenv("AGENTBASE_API_KEY", "   ")
    assert resolve_api_key(None, None) is None


@pytest.mark.parametrize(("cli", "content", "message"), [
    ("sk-a", "sk-b", "either --api-key or --api-key-file, not both"),
    (None, "", "is empty"),
    (None, "\n\n", "is empty"),
    (None, "two words", "has spaces or non-ASCII"),
    (None, "ключ", "has spaces or non-ASCII"),
    (None, b"\xff\xfe", "Cannot read the API key file"),
    (None, None, "Cannot read the API key file"),
], ids=["both", "empty", "blank-lines", "space", "non-ascii", "not-utf8", "missing"])
def test_resolve_api_key_refusals(tmp_path: Any, cli: str | None, content: Any, message: str) -> None:
    key_file = tmp_path / "key.txt"
    if isinstance(content, bytes):
        key_file.write_bytes(content)
    elif content is not None:
        key_file.write_text(content)
    with pytest.raises(InvalidArgument, match=message):
        resolve_api_key(cli, key_file)


def test_bind_beyond_loopback_needs_a_key() -> None:
    for host in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.5"):
        check_bind(host, None)
    check_bind("0.0.0.0", "k")
    check_bind("0.0.0.0", None, allow_remote=True)
    for host in ("0.0.0.0", "::", "192.168.1.5", "example.org"):
        with pytest.raises(InvalidArgument, match=f"^Refusing to serve on {host} without an API key"):
            check_bind(host, None)


# -- item 4/5: JSON parsing -------------------------------------------------------------------


def test_parse_json_caps_nesting_at_64() -> None:
    assert parse_json(json.dumps(nested(63)).encode()) == nested(63)
    assert parse_json(json.dumps(nested(64)).encode()) == nested(64)
    with pytest.raises(InvalidJson, match="nested more than 64 levels deep"):
        parse_json(json.dumps(nested(65)).encode())
    with pytest.raises(InvalidJson, match="nested more than 64 levels deep"):
        parse_json(json.dumps(nested(65, kind="dict")).encode())
    assert parse_json(b'["' + b"[" * 10_000 + b'"]') == ["[" * 10_000]  # brackets in strings do not count
    assert parse_json(b'["\\"' + b"{" * 100 + b'"]') == ['"' + "{" * 100]


@pytest.mark.parametrize("raw", RAW_BODIES, ids=[repr(r[:12]) for r in RAW_BODIES])
def test_parse_json_never_raises_a_raw_error(raw: bytes) -> None:
    TALLY["inputs_tried"] += 1
    try:
        parse_json(raw)
    except InvalidJson as exc:
        assert str(exc)


@pytest.mark.parametrize(("raw", "message"), [
    (b"NaN", "NaN is not valid JSON"), (b"[-Infinity]", "-Infinity is not valid JSON"),
    (b'{"k": Infinity}', "Infinity is not valid JSON"), (b"1e999", "too large"), (b"-1e400", "too large"),
    (b"9" * 5000, "not valid JSON"), (b"\xff", "not UTF-8"), (b"[1,", "not valid JSON"),
    (b"[" * 100_000, "nested more than 64"),
])
def test_parse_json_refusals(raw: bytes, message: str) -> None:
    with pytest.raises(InvalidJson, match=message):
        parse_json(raw)


@SETTINGS
@given(raw=st.one_of(st.binary(max_size=200),
                     st.lists(st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b":", b",", b"1", b'"a"']),
                              max_size=300).map(b"".join)))
def test_parse_json_property(raw: bytes) -> None:
    TALLY["inputs_tried"] += 1
    try:
        value = parse_json(raw)
    except InvalidJson:
        return
    assert json.loads(raw) == value


@SETTINGS
@given(host=st.one_of(st.sampled_from(BAD_HOSTS + GOOD_HOSTS), st.text(alphabet="abcl:.[]1270ho st", max_size=24)),
       content_type=st.sampled_from(JSON_CONTENT_TYPES + NOT_JSON_CONTENT_TYPES))
def test_guard_property_host_and_type(host: str, content_type: str) -> None:
    """Whatever the Host and type, a request reaches the app only with a loopback name and JSON."""
    TALLY["inputs_tried"] += 1
    host = host.format(port=PORT) if "{port}" in host else host
    guarded = client(HttpGuard(_echo_app()))
    try:
        response = guarded.post("/x", content=b"{}", headers={"host": host, "content-type": content_type})
    except Exception:  # httpx itself refuses some header values before sending
        return
    name, _, port = host.lower().rpartition(":") if not host.endswith("]") else (host.lower(), "", "")
    name = name or host.lower()
    # "localhost:" (a colon, no port) is refused like any other port (test_other_host_names_get_421)
    loopback = (name in ("127.0.0.1", "localhost", "[::1]") and port == str(PORT)) or host.lower() in (
        "127.0.0.1", "localhost", "[::1]")
    is_json = content_type.split(";")[0].strip().lower() == "application/json"
    if loopback and is_json:
        assert response.json() == {"reached": True, "bytes": 2}
    else:
        assert response.status_code in (421, 415), (host, content_type, response.text)
