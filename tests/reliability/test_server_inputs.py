"""Hostile requests to the OpenAI-wire server, generated: never a 5xx, never a write on a refusal.

Each example picks an endpoint, an id (real, hostile or with control characters), a body (JSON
with hostile values, non-str where str goes, huge numbers, deep nesting, or raw bytes), a content
type and a Host. The server must answer 2xx or a 4xx in OpenAI's error body; a 4xx leaves the
file's rows as they were; the file verifies afterwards. Counts are bounded by ``SETTINGS``
(``AGENTBASE_RELIABILITY_EXAMPLES``, 10 by default; ``make stress`` raises it).
"""

from __future__ import annotations

import json
import math
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from agentbase_adapters.openai import create_app

from ._inputs import (
    BAD_HOSTS,
    GOOD_HOSTS,
    HUGE_NUMBERS,
    JSON_CONTENT_TYPES,
    NOT_JSON_CONTENT_TYPES,
    RAW_BODIES,
    SETTINGS,
    TALLY,
    deep_json,
    hostile,
    id_with_control,
    row_counts,
)

PORT = 8000
ENDPOINTS = [
    ("POST", "/v1/threads"), ("POST", "/v1/threads/runs"), ("GET", "/v1/threads/{id}"), ("POST", "/v1/threads/{id}"),
    ("DELETE", "/v1/threads/{id}"), ("GET", "/v1/threads/{id}/messages"), ("POST", "/v1/threads/{id}/messages"),
    ("POST", "/v1/threads/{id}/messages/{id}"), ("POST", "/v1/threads/{id}/runs"), ("GET", "/v1/threads/{id}/runs"),
    ("POST", "/v1/threads/{id}/runs/{id}"), ("POST", "/v1/threads/{id}/runs/{id}/cancel"),
    ("POST", "/v1/conversations"), ("POST", "/v1/conversations/{id}"), ("GET", "/v1/conversations/{id}/items"),
    ("POST", "/v1/conversations/{id}/items"), ("DELETE", "/v1/conversations/{id}/items/{id}"),
]
FIELDS = ["messages", "metadata", "role", "content", "items", "assistant_id", "thread", "tools", "stream",
          "temperature", "max_prompt_tokens", "additional_messages", "instructions", "model", "self", "options",
          "top_k", "__class__", "kwargs", "type", "user_id"]


def _no_surrogates(s: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in s)


text = st.one_of(hostile.filter(_no_surrogates), id_with_control)
scalar = st.one_of(text, st.integers(min_value=-(10**30), max_value=10**30), st.booleans(), st.none(),
                   st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(HUGE_NUMBERS))
json_value = st.recursive(scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.one_of(st.sampled_from(FIELDS), text), inner, max_size=3)),
    max_leaves=8)
message = st.fixed_dictionaries({"role": st.one_of(st.sampled_from(["user", "assistant"]), json_value),
                                 "content": json_value})
plausible = st.fixed_dictionaries({}, optional={
    "metadata": st.one_of(st.dictionaries(st.one_of(st.just("user_id"), text), st.one_of(text, json_value),
                                          max_size=3), json_value),
    "messages": st.one_of(st.lists(message, max_size=2), json_value),
    "items": st.one_of(st.lists(message.map(lambda m: {"type": "message", **m}), max_size=2), json_value),
    "role": st.one_of(st.just("user"), json_value), "content": json_value,
    "assistant_id": st.one_of(st.just("asst_1"), json_value), "thread": st.one_of(st.fixed_dictionaries(
        {"messages": st.lists(message, max_size=1)}), json_value),
    "self": json_value, "options": json_value, "top_k": json_value, "temperature": json_value, "tools": json_value,
})


def _encode(value: Any) -> bytes:
    """JSON as a careless client writes it: NaN/Infinity tokens and 400-digit ints included."""
    return json.dumps(value, allow_nan=True, default=str).encode("utf-8", "surrogatepass")


body_bytes = st.one_of(
    plausible.map(_encode), json_value.map(_encode), deep_json,
    st.builds(lambda field, inner: b'{"%s": %s}' % (field.encode(), inner), st.sampled_from(FIELDS), deep_json),
    st.integers(0, len(RAW_BODIES) - 1).map(RAW_BODIES.__getitem__), st.just(b""),
)


@pytest.fixture
def server(db: Any) -> Iterator[TestClient]:
    app = create_app(db, responder=lambda messages, context: "noted", body_limit=256 * 1024)
    with TestClient(app, base_url=f"http://127.0.0.1:{PORT}", client=("127.0.0.1", 50000),
                    raise_server_exceptions=False) as http:
        yield http


def _openai_error(response: Any) -> dict[str, Any]:
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert isinstance(error["message"], str) and error["message"]
    return error


@SETTINGS
@given(data=st.data())
def test_hostile_requests_are_never_5xx_and_refusals_write_nothing(server: TestClient, kernel: Any,
                                                                  data: st.DataObject) -> None:
    d = data.draw
    thread = server.post("/v1/threads", json={"metadata": {"user_id": "alice"}}).json()["id"]
    conversation = server.post("/v1/conversations", json={}).json()["id"]
    method, template = d(st.sampled_from(ENDPOINTS))
    ident = d(st.one_of(st.just(thread if "threads" in template else conversation), text))
    path = template.replace("{id}", urllib.parse.quote(ident, safe=""))
    body = d(body_bytes) if method == "POST" else b""
    content_type = d(st.one_of(st.sampled_from(JSON_CONTENT_TYPES), st.sampled_from(NOT_JSON_CONTENT_TYPES)))
    host = d(st.one_of(st.sampled_from(GOOD_HOSTS), st.sampled_from(BAD_HOSTS))).format(port=PORT)
    before = row_counts(kernel.path)
    TALLY["inputs_tried"] += 1
    response = server.request(method, path, content=body or None,
                              headers={"host": host, **({"content-type": content_type} if body else {})})
    assert response.status_code < 500, (method, path, body[:200], response.text)
    if response.status_code >= 400:
        error = _openai_error(response)
        if response.status_code in (413, 415, 421):
            assert error["code"] in ("body_too_large", "unsupported_media_type", "wrong_host")
        if method != "DELETE":  # a DELETE that ran is a 200; a refused one wrote nothing either
            assert row_counts(kernel.path) == before, (method, path, body[:200], response.text)
    if host in {bad.format(port=PORT) for bad in BAD_HOSTS}:
        assert response.status_code == 421, (host, response.text)
    report = kernel.verify()
    assert report["ok"], report


@pytest.mark.parametrize("number", [n for n in HUGE_NUMBERS if not (isinstance(n, float) and math.isnan(n))],
                         ids=repr)
def test_huge_numbers_in_every_numeric_run_field_are_4xx(server: TestClient, kernel: Any, number: Any) -> None:
    thread = server.post("/v1/threads", json={"messages": [{"role": "user", "content": "hi"}]}).json()["id"]
    for field in ("temperature", "top_p", "max_prompt_tokens", "max_completion_tokens"):
        response = server.post(f"/v1/threads/{thread}/runs", content=_encode({"assistant_id": "a", field: number}),
                               headers={"content-type": "application/json"})
        TALLY["inputs_tried"] += 1
        assert response.status_code < 500, response.text
        if isinstance(number, float) and not math.isfinite(number):
            assert response.status_code == 400
