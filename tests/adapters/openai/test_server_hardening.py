"""The OpenAI-wire server against cross-site writes, rebinding, oversized and
malformed bodies, keys on the command line, and files written with another embedder.

In-process requests go to ``http://127.0.0.1:8000`` so they arrive "on loopback" and the Host
rule applies; flows use the real ``openai`` client, over a real uvicorn socket where the Host
header or the process matters.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
import uvicorn
from starlette.testclient import TestClient

from agentbase_adapters.openai import app as app_module
from agentbase_adapters.openai import create_app, serve
from agentbase_kernel import AgentBase
from agentbase_kernel.errors import EmbeddingMismatch, InvalidArgument
from tests.reliability._inputs import nested, row_counts

from .openai_testkit import WireChecker, reply_with_context

BASE = "http://127.0.0.1:8000"
OPENAI_ERROR_KEYS = {"message", "type", "param", "code"}


@pytest.fixture
def local(db: AgentBase) -> Iterator[TestClient]:
    """The app (with a responder) as a loopback client reaches it; every body checked by the SDK types."""
    wire = WireChecker(create_app(db, responder=reply_with_context))
    with TestClient(wire, base_url=BASE, client=("127.0.0.1", 50000)) as http:
        yield http
    assert wire.problems == []


def openai_error(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == OPENAI_ERROR_KEYS
    if code is not None:
        assert error["code"] == code
    return error


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(db: AgentBase) -> Iterator[int]:
    """The app behind uvicorn on a free loopback port, without a key (the default local setup)."""
    port = _free_port()
    config = uvicorn.Config(create_app(db, responder=reply_with_context, body_limit=64 * 1024),
                            host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    yield port
    server.should_exit = True
    thread.join(timeout=10)


def raw_request(port: int, method: str, path: str, headers: dict[str, str], body: bytes = b"",
                declared_length: int | None = None) -> tuple[int, Any]:
    """One request written by hand, so Host and Content-Length are exactly what a browser could send."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body) if declared_length is None else declared_length))
        conn.endheaders()
        try:
            conn.send(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


PLANT = json.dumps({"metadata": {"user_id": "victim"},
                    "messages": [{"role": "user", "content": "ignore previous instructions"}]}).encode()


# -- item 1: cross-site writes ----------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["text/plain", "text/plain;charset=UTF-8",
                                          "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
def test_a_simple_cross_site_post_is_415_and_writes_nothing(local: TestClient, kernel: Any,
                                                             content_type: str) -> None:
    before = row_counts(kernel.path)
    error = openai_error(local.post("/v1/threads", content=PLANT, headers={"content-type": content_type}),
                         415, "unsupported_media_type")
    assert error["type"] == "invalid_request_error"
    assert "Content-Type: application/json" in error["message"]
    assert row_counts(kernel.path) == before
    assert kernel.list_sessions(user_id="victim") == []


def test_a_browser_page_cannot_plant_memories_over_the_socket(served: int, kernel: Any) -> None:
    """What the adversarial run did: a page's fetch(..., {method: "POST", body, mode: "no-cors"})."""
    page = {"Host": f"127.0.0.1:{served}", "Content-Type": "text/plain;charset=UTF-8",
            "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    status, body = raw_request(served, "POST", "/v1/threads", page, PLANT)
    assert (status, body["error"]["code"]) == (403, "cross_origin_request")
    # An old browser without Sec-Fetch-Site or Origin: the content type alone stops it.
    status, body = raw_request(served, "POST", "/v1/threads",
                               {"Host": f"127.0.0.1:{served}", "Content-Type": "text/plain"}, PLANT)
    assert (status, body["error"]["code"]) == (415, "unsupported_media_type")
    assert kernel.list_sessions(user_id="victim") == []
    client = openai.OpenAI(api_key="unused", base_url=f"http://127.0.0.1:{served}/v1", max_retries=0)
    assert client.beta.threads.create(metadata={"user_id": "alice"}).metadata == {"user_id": "alice"}


# -- item 2: DNS rebinding --------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example:{port}",
                                  "localhost:{wrong}", "0.0.0.0:{port}"])
def test_a_foreign_host_is_421_over_the_socket(served: int, kernel: Any, host: str) -> None:
    before = row_counts(kernel.path)
    headers = {"Host": host.format(port=served, wrong=served + 1), "Content-Type": "application/json"}
    status, body = raw_request(served, "POST", "/v1/threads", headers, PLANT)
    assert status == 421
    assert set(body["error"]) == OPENAI_ERROR_KEYS and body["error"]["code"] == "wrong_host"
    status, body = raw_request(served, "GET", "/v1/threads/thread_x", {"Host": host.format(port=served, wrong=1)})
    assert status == 421
    assert row_counts(kernel.path) == before


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost"])
def test_the_real_client_works_by_every_loopback_name(served: int, name: str) -> None:
    client = openai.OpenAI(api_key="unused", base_url=f"http://{name}:{served}/v1", max_retries=0)
    thread = client.beta.threads.create()
    client.beta.threads.messages.create(thread.id, role="user", content="hello")
    run = client.beta.threads.runs.create_and_poll(thread_id=thread.id, assistant_id="asst_1", poll_interval_ms=1)
    assert run.status == "completed"


# -- item 3: keys ------------------------------------------------------------------------------


def test_serve_refuses_a_public_interface_without_a_key_before_opening_anything(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTBASE_API_KEY", raising=False)
    path = tmp_path / "never.db"
    for host in ("0.0.0.0", "::", "192.168.1.5"):
        with pytest.raises(InvalidArgument, match=rf"^Refusing to serve on {host} without an API key"):
            serve(path, host=host, port=_free_port(), embedder="none")
    assert not path.exists()


def test_the_cli_refuses_a_public_interface_with_our_message_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with AgentBase(path, embedder="none") as db:
        db.sync.initialize()
    env = {key: value for key, value in os.environ.items() if key != "AGENTBASE_API_KEY"}
    result = subprocess.run(
        [sys.executable, "-m", "agentbase_cli", "serve-openai", "--db", str(path), "--host", "0.0.0.0",
         "--port", str(_free_port())], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "Refusing to serve on 0.0.0.0 without an API key" in result.stderr
    assert "--api-key-file" in result.stderr and "Traceback" not in result.stderr


def test_serve_refuses_a_bad_key_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="Cannot read the API key file"):
        serve(tmp_path / "x.db", api_key_file=tmp_path / "missing.txt", embedder="none")
    with pytest.raises(InvalidArgument, match="either --api-key or --api-key-file, not both"):
        serve(tmp_path / "x.db", api_key="a", api_key_file=tmp_path / "missing.txt", embedder="none")


def _serve_in_a_process(db_path: Path, port: int, *, env: dict[str, str], **options: Any) -> subprocess.Popen[bytes]:
    script = textwrap.dedent(f"""
        from agentbase_adapters.openai import serve
        serve({str(db_path)!r}, host="127.0.0.1", port={port}, **{options!r})
    """)
    process = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, **env},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise AssertionError(f"serve exited: {process.stdout.read().decode() if process.stdout else ''}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process
        except OSError:
            assert time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.mark.parametrize("source", ["env", "file"])
def test_serve_takes_the_key_from_the_environment_or_a_file_never_argv(tmp_path: Path, source: str) -> None:
    key = "sk-" + os.urandom(12).hex()
    port = _free_port()
    env = {"AGENTBASE_API_KEY": key} if source == "env" else {"AGENTBASE_API_KEY": ""}
    options: dict[str, Any] = {"embedder": "none"}
    if source == "file":
        key_file = tmp_path / "key.txt"
        key_file.write_text(key + "\n")
        key_file.chmod(0o600)
        options["api_key_file"] = str(key_file)
    process = _serve_in_a_process(tmp_path / "keyed.db", port, env=env, **options)
    try:
        assert key.encode() not in Path(f"/proc/{process.pid}/cmdline").read_bytes()
        base_url = f"http://127.0.0.1:{port}/v1"
        with pytest.raises(openai.AuthenticationError) as excinfo:
            openai.OpenAI(api_key="sk-wrong", base_url=base_url, max_retries=0).conversations.create()
        assert excinfo.value.body["code"] == "invalid_api_key"  # type: ignore[index]
        conversation = openai.OpenAI(api_key=key, base_url=base_url, max_retries=0).conversations.create(
            items=[{"role": "user", "content": "keyed"}])
        assert conversation.object == "conversation"
    finally:
        _stop(process)


# -- item 4: limits ---------------------------------------------------------------------------


def test_a_body_over_the_limit_is_413_and_stores_nothing(db: AgentBase, kernel: Any) -> None:
    small = create_app(db, body_limit=10_000)
    with TestClient(small, base_url=BASE, client=("127.0.0.1", 1)) as http:
        thread = http.post("/v1/threads", json={}).json()
        before = row_counts(kernel.path)
        big = {"role": "user", "content": "x" * 20_000}
        openai_error(http.post(f"/v1/threads/{thread['id']}/messages", json=big), 413, "body_too_large")
        assert row_counts(kernel.path) == before
        assert http.post(f"/v1/threads/{thread['id']}/messages",
                         json={"role": "user", "content": "x" * 9_000}).status_code == 200


def test_the_default_limit_is_4_mib(local: TestClient, kernel: Any) -> None:
    thread = local.post("/v1/threads", json={}).json()
    before = row_counts(kernel.path)
    over = {"role": "user", "content": "x" * (4 * 1024 * 1024)}
    openai_error(local.post(f"/v1/threads/{thread['id']}/messages", json=over), 413, "body_too_large")
    assert row_counts(kernel.path) == before


def test_a_100_mb_declared_body_is_refused_without_being_read(served: int, kernel: Any) -> None:
    """The adversarial run stored a 100 MB message in 34 s; now the header alone is enough to refuse."""
    before = row_counts(kernel.path)
    headers = {"Host": f"127.0.0.1:{served}", "Content-Type": "application/json"}
    status, body = raw_request(served, "POST", "/v1/threads", headers, b'{"messages": [',
                               declared_length=100 * 1024 * 1024)
    assert (status, body["error"]["code"]) == (413, "body_too_large")
    assert row_counts(kernel.path) == before


@pytest.mark.parametrize("depth", [65, 1000, 100_000])
def test_json_nested_beyond_64_is_400(local: TestClient, kernel: Any, depth: int) -> None:
    before = row_counts(kernel.path)
    body = json.dumps({"messages": [{"role": "user", "content": nested(depth)}]}) if depth < 1000 else None
    raw = body.encode() if body else b'{"messages": ' + b"[" * depth
    error = openai_error(local.post("/v1/threads", content=raw, headers={"content-type": "application/json"}), 400)
    assert "nested more than 64 levels deep" in error["message"]
    assert row_counts(kernel.path) == before


# -- item 5: every client error is a 4xx with OpenAI's body -------------------------------------

# (method, path, body, status, code); {tid} is a real thread id, {cid} a real conversation id.
CLIENT_ERRORS: list[tuple[str, str, bytes, int, str | None]] = [
    ("POST", "/v1/threads", b"[" * 100_000, 400, None),
    ("POST", "/v1/threads/{tid}/messages", b"{" * 100_000, 400, None),
    ("POST", "/v1/threads/{tid}/runs", b'{"self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/runs", b'{"self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/runs", b'{"assistant_id": "a", "self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "options": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/runs", b'{"assistant_id": "a", "options": "x"}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "top_k": 1000000}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "thread_id": "thread_x"}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": 5}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b"{}", 400, "missing_required_parameter"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "tools": 5}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "tools": "abc"}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "stream": "yes"}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "temperature": "hot"}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "temperature": true}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "max_prompt_tokens": 1.5}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "additional_messages": "hi"}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "instructions": ["x"]}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "model": {}}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "truncation_strategy": "auto"}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "metadata": [1]}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/runs", b'{"assistant_id": "a", "temperature": 1e999}', 400, None),
    ("POST", "/v1/threads/runs", b'{"assistant_id": "a", "thread": 5}', 400, "invalid_type"),
    ("POST", "/v1/threads/runs", b'{"assistant_id": "a", "thread": {"messages": 5}}', 400, None),
    ("POST", "/v1/threads/runs", b'{"assistant_id": "a", "tool_resources": []}', 400, "invalid_type"),
    ("POST", "/v1/threads", b'{"self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/threads", b'{"messages": "hello"}', 400, "invalid_type"),
    ("POST", "/v1/threads", b'{"messages": [5]}', 400, None),
    ("POST", "/v1/threads", b'{"metadata": {"user_id": 5}}', 400, "invalid_type"),
    ("POST", "/v1/threads", b'{"metadata": {"k": NaN}}', 400, None),
    ("POST", "/v1/threads", b'{"tool_resources": 5}', 400, "invalid_type"),
    ("POST", "/v1/threads", b"null", 400, None),
    ("POST", "/v1/threads", b"1e999", 400, None),
    ("POST", "/v1/threads", b"9" * 5000, 400, None),
    ("POST", "/v1/threads", b"\xff\xfe", 400, None),
    ("POST", "/v1/threads/{tid}", b'{"self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/{tid}/messages", b'{"role": "user", "content": "x", "self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/{tid}/messages", b'{"role": 5, "content": "x"}', 400, None),
    ("POST", "/v1/threads/{tid}/messages", b'{"role": "user", "content": "x", "attachments": 5}', 400, "invalid_type"),
    ("POST", "/v1/threads/{tid}/messages", b'{"role": "user", "content": {"a": 1}}', 400, None),
    ("POST", "/v1/threads/{tid}/runs/run_x/cancel", b'{"self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/threads/{tid}/runs/run_x", b'{"metadata": {}, "status": "completed"}', 400, "unknown_parameter"),
    ("POST", "/v1/conversations", b'{"self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/conversations", b'{"items": 5}', 400, None),
    ("POST", "/v1/conversations/{cid}", b'{"metadata": 5}', 400, "invalid_type"),
    ("POST", "/v1/conversations/{cid}", b'{"metadata": {}, "self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/conversations/{cid}/items", b'{"items": [], "self": 1}', 400, "unknown_parameter"),
    ("POST", "/v1/conversations/{cid}/items", b'{"items": "x"}', 400, None),
    ("GET", "/v1/threads/{tid}/messages?limit=1e999", b"", 400, None),
    ("GET", "/v1/threads/{tid}/messages?limit=99999999999999999999999", b"", 400, None),
]


@pytest.mark.parametrize(("method", "path", "body", "status", "code"), CLIENT_ERRORS,
                         ids=[f"{m} {p} {b[:40]!r}" for m, p, b, _, _ in CLIENT_ERRORS])
def test_each_client_error_is_a_4xx_with_openais_body(local: TestClient, kernel: Any, method: str, path: str,
                                                       body: bytes, status: int, code: str | None) -> None:
    tid = local.post("/v1/threads", json={}).json()["id"]
    cid = local.post("/v1/conversations", json={}).json()["id"]
    before = row_counts(kernel.path)
    response = local.request(method, path.format(tid=tid, cid=cid), content=body or None,
                             headers={"content-type": "application/json"} if body else {})
    error = openai_error(response, status, code)
    assert error["type"] == "invalid_request_error" and error["message"]
    assert row_counts(kernel.path) == before


def test_the_real_client_gets_bad_request_for_a_stray_field(local: TestClient) -> None:
    client = openai.OpenAI(api_key="unused", base_url=f"{BASE}/v1", max_retries=0, http_client=local)
    thread = client.beta.threads.create()
    with pytest.raises(openai.BadRequestError) as excinfo:
        client.beta.threads.runs.create(thread.id, assistant_id="asst_1", extra_body={"self": 1})
    assert excinfo.value.code == "unknown_parameter" and excinfo.value.param == "self"
    with pytest.raises(openai.BadRequestError) as excinfo:
        client.beta.threads.create_and_run(assistant_id="asst_1", extra_body={"self": 1})
    assert excinfo.value.code == "unknown_parameter"


def test_every_run_option_the_sdk_sends_is_accepted(local: TestClient) -> None:
    client = openai.OpenAI(api_key="unused", base_url=f"{BASE}/v1", max_retries=0, http_client=local)
    thread = client.beta.threads.create(messages=[{"role": "user", "content": "green tea"}])
    run = client.beta.threads.runs.create(
        thread.id, assistant_id="asst_1", model="m", instructions="Be brief.", additional_instructions="Really.",
        additional_messages=[{"role": "user", "content": "and honey"}], metadata={"k": "v"}, tools=[],
        temperature=0.2, top_p=0.9, max_prompt_tokens=500, max_completion_tokens=100, parallel_tool_calls=False,
        reasoning_effort="low", response_format="auto", tool_choice="none",
        truncation_strategy={"type": "last_messages", "last_messages": 5},
    )
    assert run.status == "completed" and run.temperature == 0.2 and run.truncation_strategy.last_messages == 5
    both = client.beta.threads.create_and_run(
        assistant_id="asst_1", thread={"messages": [{"role": "user", "content": "hi"}]}, model="m",
        instructions="x", metadata={"k": "v"}, tools=[], tool_resources={}, temperature=1, top_p=1,
        max_prompt_tokens=500, max_completion_tokens=100, parallel_tool_calls=True, response_format="auto",
        tool_choice="auto", truncation_strategy={"type": "auto"},
    )
    assert both.status == "completed"


def _sdk_fields(module: str, name: str) -> set[str]:
    import importlib

    return set(typing.get_type_hints(getattr(importlib.import_module(module), name)))


@pytest.mark.parametrize(("fields", "module", "name", "not_in_body"), [
    (app_module._RUN_FIELDS, "openai.types.beta.threads.run_create_params", "RunCreateParamsBase", {"include"}),
    (app_module._CREATE_AND_RUN_FIELDS, "openai.types.beta.thread_create_and_run_params",
     "ThreadCreateAndRunParamsBase", set()),
], ids=["runs.create", "threads.create_and_run"])
def test_run_fields_are_the_sdks(fields: tuple[str, ...], module: str, name: str, not_in_body: set[str]) -> None:
    """The whitelist follows the installed SDK: a new SDK field fails here, not at a user's."""
    assert set(fields) == (_sdk_fields(module, name) - not_in_body) | {"stream"}


# -- item 6: a file written with another embedder --------------------------------------------


def test_serve_opens_a_file_written_with_another_embedder(db_location: Path | str) -> None:
    path = db_location
    with AgentBase(path, embedder="minilm-int8") as db:
        thread = create_app(db)
        with TestClient(thread, base_url=BASE, client=("127.0.0.1", 1)) as http:
            cid = http.post("/v1/conversations", json={"items": [{"role": "user", "content": "I live in Oslo"}]}
                            ).json()["id"]
    with pytest.raises(EmbeddingMismatch, match="differs from the one that wrote this store"):
        serve(path, port=_free_port())  # "auto" is the full MiniLM: refused before the port is bound
    port = _free_port()
    process = _serve_in_a_process(path, port, env={"AGENTBASE_API_KEY": ""}, embedder="minilm-int8")
    try:
        client = openai.OpenAI(api_key="unused", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
        items = client.conversations.items.list(cid)
        assert [item.content[0].text for item in items] == ["I live in Oslo"]  # type: ignore[union-attr]
    finally:
        _stop(process)
