"""Hostile input through every adapter's public calls: a result, our error, or the framework's own.

Each adapter is driven through the calls its framework documents, with strings drawn from
``_inputs.hostile`` (FTS5 syntax, SQL injection, NUL, lone surrogates, RTL, emoji, blanks) and
values of the wrong type. What may come out:

* every adapter: a result or an ``AgentBaseError`` (``InvalidArgument`` is a ``ValueError``,
  ``NotFoundError`` a ``KeyError``), never a raw ``sqlite3``/``UnicodeEncodeError``/``TypeError``;
* LangGraph also: ``ValueError`` (``InvalidNamespaceError``), which ``InMemoryStore`` raises;
* LangChain's memory also: ``TypeError`` for an ``owner_id`` that is not a non-empty str (documented);
* LlamaIndex: an ``idx`` that is not an int is a ``TypeError`` in ``SimpleChatStore`` too, so only ints
  are drawn there;
* the OpenAI server: a 4xx with OpenAI's error body, never a 5xx.

A call that fails must leave the file's tables as they were, and ``verify()`` must stay ok.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentbase_kernel.errors import AgentBaseError

from ._inputs import ALL_STRINGS, HUGE_NUMBERS, SETTINGS, TALLY, anything, hostile, int_like, row_counts

maybe = lambda s: st.one_of(st.none(), s)  # noqa: E731


def _check(kernel, call: Callable[[], Any], allowed: tuple[type[BaseException], ...] = (), ignore: tuple[str, ...] = ()) -> Any:
    TALLY["inputs_tried"] += 1
    before = row_counts(kernel.path)
    try:
        result = call()
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return result
    except (AgentBaseError, *allowed):
        after = row_counts(kernel.path)
        assert {k: v for k, v in after.items() if k not in ignore} == {k: v for k, v in before.items() if k not in ignore}, \
            "a failed call wrote to the file"
        return None


# -- Mem0 and Minimal ----------------------------------------------------------------------------


# unix times, ISO strings and datetimes, including ones past what a datetime holds
times = st.one_of(st.sampled_from(HUGE_NUMBERS), st.floats(), st.integers(), st.datetimes(), st.dates(), anything,
                  st.sampled_from(["2024-05-01", "0001-01-01", "9999-12-31T23:59:59", "+inf", datetime.max, date.min]))


def _mem0_ops(m, ids: list[str]) -> dict[str, Callable[[Any], Any]]:
    some_id = lambda d: d(st.one_of(st.sampled_from(ids), anything))  # noqa: E731
    return {
        "add": lambda d: m.add(d(st.one_of(anything, st.lists(st.fixed_dictionaries(
            {"role": st.one_of(st.sampled_from(["user", "assistant", "tool", "system"]), anything), "content": anything}), max_size=3))),
            user_id=d(maybe(anything)), agent_id=d(maybe(anything)), run_id=d(maybe(anything)),
            metadata=d(maybe(st.dictionaries(hostile, anything, max_size=2))), infer=d(st.booleans()),
            timestamp=d(maybe(times)), expiration_date=d(maybe(times)), memory_type=d(maybe(st.one_of(st.just("procedural_memory"), anything))),
            prompt=d(maybe(anything))),
        "search": lambda d: m.search(d(anything), user_id=d(st.one_of(st.just("alice"), anything)), top_k=d(maybe(int_like)),
                                     filters=d(maybe(st.one_of(st.dictionaries(hostile, anything, max_size=2), st.dictionaries(
                                         hostile, st.dictionaries(st.one_of(hostile, st.sampled_from(["gt", "in", "$bogus", "contains"])), anything, max_size=1), max_size=1)))),
                                     threshold=d(maybe(st.one_of(st.floats(), anything))), reference_date=d(maybe(times)),
                                     show_expired=d(st.one_of(st.booleans(), anything)), explain=d(st.booleans())),
        "get_all": lambda d: m.get_all(filters=d(maybe(st.one_of(st.dictionaries(hostile, anything, max_size=2),
                                                                  st.just({"user_id": "alice", "OR": [{"k": {"$weird": 1}}]})))),
                                       top_k=d(maybe(int_like)), user_id=d(maybe(anything))),
        "get": lambda d: m.get(some_id(d)),
        "update": lambda d: m.update(some_id(d), d(maybe(anything)), metadata=d(maybe(st.dictionaries(hostile, anything, max_size=2)))),
        "delete": lambda d: m.delete(some_id(d)),
        "delete_all": lambda d: m.delete_all(user_id=d(maybe(anything)), agent_id=d(maybe(anything)), run_id=d(maybe(anything))),
        "history": lambda d: m.history(some_id(d)),
    }


@pytest.fixture
def mem0(db):
    from agentbase_adapters.mem0 import Mem0Adapter

    m = Mem0Adapter(db)
    ids = [r["id"] for r in m.add("Alice likes green tea", user_id="alice", infer=False)["results"]]
    return m, ids


@pytest.mark.parametrize("op", sorted(_mem0_ops(None, [])))
@SETTINGS
@given(data=st.data())
def test_mem0(mem0, kernel, op, data):
    m, ids = mem0
    _check(kernel, lambda: _mem0_ops(m, ids)[op](data.draw))
    report = kernel.verify()
    assert report["ok"], report


@pytest.mark.parametrize("op", sorted(_mem0_ops(None, [])))
@SETTINGS
@given(data=st.data())
def test_mem0_async(db, kernel, op, data):
    from agentbase_adapters.mem0 import AsyncMem0Adapter

    m = AsyncMem0Adapter(db)
    ids = [r["id"] for r in asyncio.run(m.add("Alice likes green tea", user_id="alice", infer=False))["results"]]
    _check(kernel, lambda: _mem0_ops(m, ids)[op](data.draw))
    report = kernel.verify()
    assert report["ok"], report


@pytest.mark.parametrize("op", ["remember", "recall", "forget"])
@SETTINGS
@given(data=st.data())
def test_minimal(db, kernel, op, data):
    from agentbase_adapters.minimal import MinimalAdapter

    mem = MinimalAdapter(db)
    d = data.draw
    calls = {
        "remember": lambda: mem.remember(d(anything), who=d(maybe(anything)), tags=d(st.one_of(st.lists(anything, max_size=2), anything)),
                                         **d(st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in ("who", "tags")), anything, max_size=2))),
        "recall": lambda: mem.recall(d(anything), who=d(maybe(anything)), top_k=d(int_like)),
        "forget": lambda: mem.forget(d(maybe(anything)), who=d(maybe(anything))),
    }
    _check(kernel, calls[op])
    report = kernel.verify()
    assert report["ok"], report


# -- LangChain ------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["history", "memory"])
@SETTINGS
@given(data=st.data())
def test_langchain(db, kernel, op, data):
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory, LangChainMemoryAdapter

    d = data.draw
    if op == "history":
        h = _check(kernel, lambda: AgentBaseChatMessageHistory(d(anything), db=db, user_id=d(maybe(anything))))
        if h is not None:
            messages = [HumanMessage(d(hostile)), AIMessage(d(hostile)), ToolMessage(d(hostile), tool_call_id=d(hostile))]
            _check(kernel, lambda: h.add_messages(messages))
            _check(kernel, lambda: [m.content for m in h.messages])
            _check(kernel, h.clear)
    else:
        # owner_id must be a non-empty str: the adapter documents a TypeError for anything else
        memory = _check(kernel, lambda: LangChainMemoryAdapter(db, owner_id=d(st.one_of(st.just("alice"), hostile)),
                                                               session_id=d(maybe(hostile)), top_k=d(st.integers(1, 50))),
                        allowed=(TypeError,))
        if memory is not None:
            inputs, outputs = {"input": d(hostile)}, {"output": d(hostile)}
            _check(kernel, lambda: memory.save_context(inputs, outputs))
            _check(kernel, lambda: memory.load_memory_variables({"input": d(hostile)}))
    report = kernel.verify()
    assert report["ok"], report


# -- LangGraph ------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["put", "get", "search", "delete", "list_namespaces"])
@SETTINGS
@given(data=st.data())
def test_langgraph(db, kernel, op, data):
    from agentbase_adapters.langgraph import AgentBaseStore

    store = AgentBaseStore(db)
    store.put(("memories", "alice"), "tea", {"text": "Alice likes green tea"})
    d = data.draw
    ns = lambda: d(st.one_of(st.tuples(st.just("memories"), hostile), st.lists(hostile, min_size=1, max_size=3).map(tuple)))  # noqa: E731
    calls = {
        "put": lambda: store.put(ns(), d(hostile), d(st.dictionaries(hostile, anything.filter(lambda v: not isinstance(v, object) or
                                                                                                   isinstance(v, (str, int, float, list, dict, type(None)))), max_size=3)),
                                 index=d(st.one_of(st.none(), st.just(False), st.lists(hostile, max_size=2)))),
        "get": lambda: store.get(ns(), d(hostile)),
        "search": lambda: store.search(ns(), query=d(maybe(hostile)), filter=d(maybe(st.dictionaries(hostile, st.one_of(
            anything, st.dictionaries(st.sampled_from(["$eq", "$ne", "$gt", "$lt", "$bogus"]), anything, max_size=1)), max_size=2))),
            limit=d(st.integers(0, 10**6)), offset=d(st.integers(0, 10**6))),
        "delete": lambda: store.delete(ns(), d(hostile)),
        "list_namespaces": lambda: store.list_namespaces(prefix=d(maybe(st.lists(hostile, max_size=2).map(tuple))),
                                                         max_depth=d(maybe(st.integers(0, 5))), limit=d(st.integers(0, 1000))),
    }
    _check(kernel, calls[op], allowed=(ValueError,))
    report = kernel.verify()
    assert report["ok"], report


# -- LlamaIndex -----------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", ["AgentBaseChatStore", "AgentBaseAsyncChatStore"])
@SETTINGS
@given(data=st.data())
def test_llamaindex(db, kernel, cls, data):
    from llama_index.core.base.llms.types import ChatMessage

    import agentbase_adapters.llamaindex as li

    d = data.draw
    store = getattr(li, cls)(db, user_id=d(st.one_of(st.none(), st.just("alice"), hostile)))
    key = d(st.one_of(st.just("chat-1"), anything))
    message = ChatMessage(role=d(st.sampled_from(["user", "assistant", "tool", "system"])), content=d(hostile))
    if cls == "AgentBaseChatStore":
        calls = [lambda: store.add_message(key, message, idx=d(maybe(int_like))), lambda: store.get_messages(key),
                 lambda: store.delete_message(key, d(st.integers(-(10**20), 10**20))), lambda: store.set_messages(key, [message]),
                 lambda: store.delete_messages(key), lambda: store.get_keys()]
    else:
        calls = [lambda: store.add_message(key, message), lambda: store.get_messages(key, limit=d(maybe(int_like)), offset=d(maybe(int_like))),
                 lambda: store.delete_message(key, d(st.integers(-(10**20), 10**20))), lambda: store.delete_oldest_messages(key, d(int_like)),
                 lambda: store.count_messages(key), lambda: store.delete_messages(key)]
    for call in calls:
        _check(kernel, call)
    report = kernel.verify()
    assert report["ok"], report


# -- OpenAI: the in-process adapter and the ASGI server ----------------------------------------------


@SETTINGS
@given(data=st.data())
def test_openai_adapter(db, kernel, data):
    from agentbase_adapters.openai import OpenAIAssistantAdapter

    oa = OpenAIAssistantAdapter(db)
    d = data.draw
    thread = oa.create_thread(metadata={"user_id": "alice"})
    tid = d(st.one_of(st.just(thread["id"]), anything))
    for call in [
        lambda: oa.create_thread(metadata=d(maybe(st.dictionaries(hostile, anything, max_size=3))),
                                 messages=d(maybe(st.lists(st.fixed_dictionaries({"role": anything, "content": anything}), max_size=2)))),
        lambda: oa.create_message(tid, role=d(st.one_of(st.just("user"), anything)), content=d(anything),
                                  metadata=d(maybe(st.dictionaries(hostile, anything, max_size=2)))),
        lambda: oa.list_messages(tid, limit=d(maybe(int_like)), order=d(maybe(anything)), after=d(maybe(anything))),
        lambda: oa.retrieve_message(tid, d(anything)),
        lambda: oa.retrieve_context(tid, query=d(anything), top_k=d(int_like)),
        lambda: oa.modify_thread(tid, metadata=d(maybe(st.dictionaries(hostile, anything, max_size=2)))),
        lambda: oa.create_conversation(items=d(maybe(st.lists(st.fixed_dictionaries(
            {"type": st.just("message"), "role": anything, "content": anything}), max_size=2)))),
        lambda: oa.delete_thread(d(anything)),
    ]:
        _check(kernel, call)
    report = kernel.verify()
    assert report["ok"], report


@pytest.fixture
def server(db):
    from starlette.testclient import TestClient

    from agentbase_adapters.openai import create_app

    with TestClient(create_app(db), base_url="http://agentbase.test", client=("127.0.0.1", 50000),
                    raise_server_exceptions=False) as http:
        yield http


def _ok_or_openai_error(response) -> None:
    TALLY["inputs_tried"] += 1
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert set(response.json()["error"]) >= {"message", "type"}


def _url_safe(s: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in s)


@SETTINGS
@given(data=st.data())
def test_openai_server(server, kernel, data):
    d = data.draw
    text = lambda: d(hostile.filter(_url_safe))  # noqa: E731 - JSON cannot carry a lone surrogate as UTF-8
    json_value = st.one_of(hostile.filter(_url_safe), st.integers(), st.none(), st.lists(st.integers(), max_size=2),
                           st.booleans(), st.floats(allow_nan=False, allow_infinity=False))
    thread = server.post("/v1/threads", json={"metadata": {"user_id": "alice"}}).json()
    tid = d(st.one_of(st.just(thread["id"]), hostile.filter(_url_safe)))
    quoted = urllib.parse.quote(tid, safe="")
    before = row_counts(kernel.path)
    for method, url, body in [
        ("POST", "/v1/threads", {"metadata": d(st.one_of(st.dictionaries(hostile.filter(_url_safe), json_value, max_size=3), json_value)),
                                 "messages": d(st.one_of(st.lists(st.fixed_dictionaries({"role": json_value, "content": json_value}), max_size=2), json_value))}),
        ("POST", f"/v1/threads/{quoted}/messages", {"role": d(st.one_of(st.just("user"), json_value)), "content": d(json_value)}),
        ("GET", f"/v1/threads/{quoted}/messages?limit={urllib.parse.quote(str(d(int_like)))}&order={urllib.parse.quote(text())}"
                f"&after={urllib.parse.quote(text())}", None),
        ("GET", f"/v1/threads/{quoted}", None),
        ("POST", f"/v1/threads/{quoted}", {"metadata": d(json_value)}),
        ("GET", f"/v1/threads/{quoted}/messages/{urllib.parse.quote(text(), safe='')}", None),
        ("POST", "/v1/conversations", {"items": d(st.one_of(st.lists(st.fixed_dictionaries(
            {"type": st.just("message"), "role": json_value, "content": json_value}), max_size=2),
            st.lists(json_value, max_size=2), json_value))}),
        ("DELETE", f"/v1/threads/{quoted}", None),
    ]:
        _ok_or_openai_error(server.request(method, url, json=body))
    assert row_counts(kernel.path)["entries"] >= 0 and before is not None
    report = kernel.verify()
    assert report["ok"], report


@pytest.mark.parametrize("raw", [b"{", b"[]", b"null", b'"x"', b"\xff\xfe", b'{"metadata": "\\ud800"}'],
                         ids=["truncated", "array", "null", "string", "not-utf8", "escaped-surrogate"])
def test_openai_server_rejects_malformed_bodies_with_400(server, raw):
    response = server.post("/v1/threads", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize("s", [s for s in ALL_STRINGS if _url_safe(s)])
def test_openai_server_thread_ids_are_never_5xx(server, s):
    _ok_or_openai_error(server.get(f"/v1/threads/{urllib.parse.quote(s, safe='')}/messages"))


# -- adapter bugs found by the tests above (reported to the adapters' owners) ------------------------


@pytest.mark.parametrize("tags", [5, object()], ids=["int", "object"])
def test_minimal_remember_rejects_bad_tags_with_our_error(db, tags):
    from agentbase_adapters.minimal import MinimalAdapter

    with pytest.raises(AgentBaseError):
        MinimalAdapter(db).remember("text", who="alice", tags=tags)


def test_minimal_remember_takes_tags_none_as_no_tags(db):
    from agentbase_adapters.minimal import MinimalAdapter

    entry_id = MinimalAdapter(db).remember("text", who="alice", tags=None)
    assert [t for t in db.sync.get(entry_id).tags if not t.startswith("ner_")] == []


@pytest.mark.parametrize("idx", ["1", 1.5], ids=["str", "float"])
def test_llamaindex_scoped_add_message_with_bad_idx_writes_nothing(db, kernel, idx):
    from llama_index.core.base.llms.types import ChatMessage

    from agentbase_adapters.llamaindex import AgentBaseChatStore

    store = AgentBaseChatStore(db, user_id="alice")
    before = row_counts(kernel.path)
    with pytest.raises(AgentBaseError):
        store.add_message("chat-1", ChatMessage(role="user", content="hi"), idx=idx)
    assert row_counts(kernel.path) == before


async def test_llamaindex_delete_oldest_messages_rejects_none(db):
    from agentbase_adapters.llamaindex import AgentBaseAsyncChatStore

    with pytest.raises(AgentBaseError):
        await AgentBaseAsyncChatStore(db).delete_oldest_messages("chat-1", None)


@pytest.mark.parametrize("items", [[0], ["text"], [None]], ids=["int", "str", "null"])
def test_openai_server_rejects_non_object_items_with_400(server, items):
    response = server.post("/v1/conversations", json={"items": items})
    assert response.status_code == 400, response.text


@pytest.mark.parametrize("cls", ["AgentBaseChatStore", "AgentBaseAsyncChatStore"])
async def test_llamaindex_scoped_add_message_with_invalid_content_writes_nothing(db, kernel, cls):
    from llama_index.core.base.llms.types import ChatMessage

    import agentbase_adapters.llamaindex as li

    store = getattr(li, cls)(db, user_id="alice")
    before = row_counts(kernel.path)
    with pytest.raises(AgentBaseError):
        result = store.add_message("chat-9", ChatMessage(role="user", content="lone \ud800 surrogate"))
        if asyncio.iscoroutine(result):
            await result
    assert row_counts(kernel.path) == before
