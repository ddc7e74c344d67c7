"""Hostile values through each adapter's public methods, judged against the real framework on the same call.

Each example draws one set of arguments (wrong types, ``None``, NaN/inf, huge ints, NUL and lone
surrogates, deep nesting, the other framework's message class) and makes the same call on the real
class (``InMemoryChatMessageHistory``, ``ConversationBufferMemory``, ``SimpleChatStore``,
``InMemoryStore``) and on ours. Ours may:

* succeed (the frameworks accept much of this and fail later, on read);
* raise our ``AgentBaseError`` - a ``TypeError`` (``WrongType``) wherever the framework raises a
  ``TypeError`` for the same call, a ``ValueError`` wherever it raises a ``ValueError``;
* raise exactly the exception the framework raises for the same call, from the framework's own
  code (pydantic's ``ValidationError`` for ``HumanMessage(content=5)``, LangGraph's namespace
  checks in ``BaseStore.get``) - never from ours, and never an ``AttributeError``/``IndexError``;
* raise LangGraph's ``InvalidNamespaceError`` from ``validate_op_namespace``, the check LangGraph
  asks every store to run on the ops it executes.

A refused call writes nothing, and what was written always reads back. The count of examples is
``_inputs.EXAMPLES`` (``benchmarks/stress.py`` raises it); ``TALLY`` records inputs tried and
raw exceptions (which must stay 0).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentbase_kernel import AgentBaseError

from ._inputs import DEEP, HUGE_NUMBERS, NON_STR, SETTINGS, TALLY, anything, hostile, int_like, row_counts

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

OURS = ("agentbase_kernel", "agentbase_adapters")
# what no public method may let out, whoever raised it
NEVER = (AttributeError, IndexError, RecursionError, OverflowError, UnicodeError, AssertionError)

junk = st.one_of(anything, st.sampled_from([*HUGE_NUMBERS, *NON_STR, *DEEP[:2], {"a": {"b": [None]}}, [[], {}], "a\x00b"]))
maybe = lambda s: st.one_of(st.none(), s)  # noqa: E731


def _outcome(call: Callable[[], Any]) -> BaseException | None:
    try:
        result = call()
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    except Exception as exc:
        return exc
    return None


def _raised_in_our_code(exc: BaseException) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and any(part in Path(frames[-1].filename).parts for part in OURS)


def judge(kernel: Any, real: Callable[[], Any], ours: Callable[[], Any]) -> BaseException | None:
    """Make the call on both; fail unless ours ended as the module docstring says."""
    TALLY["inputs_tried"] += 1
    TALLY["adapter_inputs_tried"] += 1
    TALLY["adapter_raw_exceptions"] += 0  # present in the tally even when nothing failed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _outcome(real)
    before = row_counts(kernel.path)
    mine = _outcome(ours)
    if mine is None:
        return None
    ok = _acceptable(theirs, mine)
    if not ok:
        TALLY["adapter_raw_exceptions"] += 1
    assert ok, (f"ours raised {type(mine).__name__}: {mine!s:.200} where the framework raised "
                f"{type(theirs).__name__ if theirs else 'nothing'}: {theirs!s:.200}\n"
                + "".join(traceback.format_exception(mine)[-6:]))
    assert row_counts(kernel.path) == before, "a refused call wrote to the file"
    return mine


def _framework_refusals() -> tuple[type[BaseException], ...]:
    # the check LangGraph asks every store to run on the ops it executes (validate_op_namespace);
    # InMemoryStore itself skips it for ops passed straight to batch
    from langgraph.store.base import InvalidNamespaceError

    return (InvalidNamespaceError,)


def _acceptable(theirs: BaseException | None, mine: BaseException) -> bool:
    if isinstance(mine, _framework_refusals()):
        return not _raised_in_our_code(mine)
    if isinstance(mine, AgentBaseError):
        if isinstance(theirs, TypeError) and not isinstance(theirs, ValueError):
            return isinstance(mine, TypeError)
        if isinstance(theirs, ValueError) and not isinstance(theirs, TypeError):
            return isinstance(mine, (ValueError, KeyError))  # a missing row is our NotFoundError (a KeyError)
        return True
    return (theirs is not None and type(mine) is type(theirs) and not isinstance(mine, NEVER)
            and not _raised_in_our_code(mine))


# -- LangChain: chat-message history and chat memory -------------------------------------------------


def _lc_messages():
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from llama_index.core.base.llms.types import ChatMessage

    return st.one_of(
        st.builds(HumanMessage, hostile), st.builds(AIMessage, hostile),
        st.builds(lambda t: ToolMessage(t, tool_call_id="c1"), hostile),
        st.just(ChatMessage(role="user", content="a llama message")), st.just({"role": "user", "content": "a dict"}),
    )


LC_HISTORY_OPS = ["add_message", "add_messages", "add_user_message", "add_ai_message", "aadd_messages"]


@pytest.mark.parametrize("op", LC_HISTORY_OPS)
@SETTINGS
@given(data=st.data())
def test_langchain_history(db, kernel, op, data):
    from langchain_core.chat_history import InMemoryChatMessageHistory
    from langchain_core.messages import BaseMessage

    from agentbase_adapters.langchain import AgentBaseChatMessageHistory

    ours = AgentBaseChatMessageHistory("chat-1", db=db, user_id="alice")
    message = st.one_of(_lc_messages(), junk)
    arg = data.draw(message if op in ("add_message", "add_user_message", "add_ai_message")
                    else st.one_of(junk, st.lists(message, max_size=3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = InMemoryChatMessageHistory()
    judge(kernel, lambda: getattr(real, op)(arg), lambda: getattr(ours, op)(arg))
    assert all(isinstance(m, BaseMessage) for m in ours.messages)


@pytest.mark.parametrize("op", ["save_context", "load_memory_variables"])
@SETTINGS
@given(data=st.data())
def test_langchain_memory(db, kernel, op, data):
    from langchain_classic.memory import ConversationBufferMemory

    from agentbase_adapters.langchain import LangChainMemoryAdapter

    d = data.draw
    ours = LangChainMemoryAdapter(db, owner_id="alice", session_id="chat-1")
    inputs = d(st.one_of(junk, st.fixed_dictionaries({"input": junk}), st.dictionaries(hostile, junk, max_size=3)))
    outputs = d(st.one_of(junk, st.fixed_dictionaries({"output": junk}), st.dictionaries(hostile, junk, max_size=3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = ConversationBufferMemory()
    if op == "save_context":
        judge(kernel, lambda: real.save_context(inputs, outputs), lambda: ours.save_context(inputs, outputs))
    else:
        judge(kernel, lambda: real.load_memory_variables(inputs), lambda: ours.load_memory_variables(inputs))
    ours.load_memory_variables({"input": "what do I like?"})


# -- LlamaIndex: BaseChatStore (SimpleChatStore) and the async store ----------------------------------


def _li_message():
    from langchain_core.messages import HumanMessage
    from llama_index.core.base.llms.types import ChatMessage

    return st.one_of(st.builds(lambda r, t: ChatMessage(role=r, content=t), st.sampled_from(["user", "assistant", "tool", "system"]), hostile),
                     st.just(HumanMessage("a langchain message")), junk)


LI_OPS = ["set_messages", "get_messages", "add_message", "delete_messages", "delete_message", "delete_last_message", "get_keys"]


@pytest.mark.parametrize("op", LI_OPS)
@SETTINGS
@given(data=st.data())
def test_llamaindex_chat_store(db, kernel, op, data):
    from llama_index.core.storage.chat_store import SimpleChatStore

    from agentbase_adapters.llamaindex import AgentBaseChatStore

    d = data.draw
    ours = AgentBaseChatStore(db, user_id="alice")
    key = d(st.one_of(st.just("chat-1"), junk))
    args: tuple[Any, ...] = {
        "set_messages": lambda: (key, d(st.one_of(junk, st.lists(_li_message(), max_size=3)))),
        "get_messages": lambda: (key,),
        "add_message": lambda: (key, d(_li_message()), d(st.one_of(st.none(), int_like, junk))),
        "delete_messages": lambda: (key,),
        "delete_message": lambda: (key, d(st.one_of(int_like, junk))),
        "delete_last_message": lambda: (key,),
        "get_keys": lambda: (),
    }[op]()
    real = SimpleChatStore()
    real.set_messages("chat-1", ours.get_messages("chat-1"))  # the same state before the call
    judge(kernel, lambda: getattr(real, op)(*args), lambda: getattr(ours, op)(*args))
    ours.get_messages("chat-1")


LI_ASYNC_OPS = ["get_messages", "count_messages", "add_message", "add_messages", "set_messages", "delete_message",
                "delete_messages", "delete_oldest_messages", "archive_oldest_messages"]


@pytest.mark.parametrize("op", LI_ASYNC_OPS)
@SETTINGS
@given(data=st.data())
def test_llamaindex_async_chat_store(db, kernel, op, data):
    # SQLAlchemyChatStore fails on junk in ways of its own (sqlalchemy's StatementError), so only
    # the first rule holds here: a result or our error, never a raw one
    from agentbase_adapters.llamaindex import AgentBaseAsyncChatStore

    d = data.draw
    ours = AgentBaseAsyncChatStore(db, user_id="alice")
    key = d(st.one_of(st.just("chat-1"), junk))
    kwargs: dict[str, Any] = {
        "get_messages": lambda: {"key": key, "status": d(maybe(st.one_of(st.just("archived"), junk))),
                                 "limit": d(maybe(int_like)), "offset": d(maybe(int_like))},
        "count_messages": lambda: {"key": key, "status": d(maybe(st.one_of(st.just("active"), junk)))},
        "add_message": lambda: {"key": key, "message": d(_li_message())},
        "add_messages": lambda: {"key": key, "messages": d(st.one_of(junk, st.lists(_li_message(), max_size=3)))},
        "set_messages": lambda: {"key": key, "messages": d(st.one_of(junk, st.lists(_li_message(), max_size=3)))},
        "delete_message": lambda: {"key": key, "idx": d(st.one_of(int_like, junk))},
        "delete_messages": lambda: {"key": key, "status": d(maybe(st.one_of(st.just("archived"), junk)))},
        "delete_oldest_messages": lambda: {"key": key, "n": d(st.one_of(int_like, junk))},
        "archive_oldest_messages": lambda: {"key": key, "n": d(st.one_of(int_like, junk))},
    }[op]()
    judge(kernel, lambda: None, lambda: getattr(ours, op)(**kwargs))
    asyncio.run(ours.get_messages("chat-1", status=None))


# -- LangGraph: BaseStore (InMemoryStore) ------------------------------------------------------------


LG_OPS = ["put", "get", "search", "delete", "list_namespaces", "batch"]


@pytest.mark.parametrize("op", LG_OPS)
@SETTINGS
@given(data=st.data())
def test_langgraph_store(db, kernel, op, data):
    from langgraph.store.base import GetOp, PutOp, SearchOp
    from langgraph.store.memory import InMemoryStore

    from agentbase_adapters.langgraph import AgentBaseStore

    d = data.draw
    ours = AgentBaseStore(db)
    real = InMemoryStore()
    for store in (ours, real):
        store.put(("memories", "alice"), "tea", {"text": "Alice likes green tea"})
    namespace = st.one_of(st.just(("memories", "alice")), st.lists(hostile, min_size=1, max_size=3).map(tuple), junk)
    value = st.one_of(st.dictionaries(hostile, junk, max_size=3), junk)
    key = st.one_of(st.just("tea"), junk)
    count = lambda usual: st.one_of(st.just(usual), int_like)  # noqa: E731
    flt = maybe(st.one_of(junk, st.dictionaries(hostile, st.one_of(
        junk, st.dictionaries(st.sampled_from(["$eq", "$ne", "$gt", "$lt", "$in", "$bogus"]), junk, max_size=1)), max_size=2)))
    ops = st.one_of(junk, st.lists(st.one_of(junk, st.builds(GetOp, namespace, junk), st.builds(PutOp, namespace, junk, value),
                                             st.builds(SearchOp, namespace, junk, junk)), max_size=3))
    if op == "put":
        a = (d(namespace), d(key), d(value), d(st.one_of(st.none(), st.just(False), st.lists(hostile, max_size=2), junk)))
        call: Callable[[Any], Any] = lambda s: s.put(a[0], a[1], a[2], index=a[3])  # noqa: E731
    elif op in ("get", "delete"):
        a = (d(namespace), d(key))
        call = lambda s: getattr(s, op)(*a)  # noqa: E731
    elif op == "search":
        a = (d(namespace), d(maybe(junk)), d(flt), d(count(10)), d(count(0)))
        call = lambda s: s.search(a[0], query=a[1], filter=a[2], limit=a[3], offset=a[4])  # noqa: E731
    elif op == "list_namespaces":
        a = (d(maybe(namespace)), d(maybe(namespace)), d(maybe(int_like)), d(count(100)), d(count(0)))
        call = lambda s: s.list_namespaces(prefix=a[0], suffix=a[1], max_depth=a[2], limit=a[3], offset=a[4])  # noqa: E731
    else:
        batch = d(ops)
        call = lambda s: s.batch(batch)  # noqa: E731
    judge(kernel, lambda: call(real), lambda: call(ours))
    assert ours.get(("memories", "alice"), "tea") is not None or op in ("put", "delete", "batch")
    ours.search(("memories",))


def test_langgraph_put_with_a_ttl_past_any_date_is_refused(db, kernel):
    from agentbase_adapters.langgraph import AgentBaseStore

    for ttl in [float("inf"), float("nan"), 1e300, -5, 0, "10", True]:
        judge(kernel, lambda: None, lambda ttl=ttl: AgentBaseStore(db).put(("memories", "alice"), "k", {"t": "x"}, ttl=ttl))


# -- the exact calls the adversarial run reported --------------------------------------------------


def test_history_add_message_with_a_str_is_wrong_type_not_attribute_error(db, kernel):
    from agentbase_adapters.langchain import AgentBaseChatMessageHistory
    from agentbase_kernel import WrongType

    history = AgentBaseChatMessageHistory("chat-1", db=db, user_id="alice")
    with pytest.raises(WrongType) as caught:
        history.add_message("str")  # type: ignore[arg-type]
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
    assert history.messages == []


def test_chat_store_set_messages_none_is_wrong_type(db, kernel):
    from agentbase_adapters.llamaindex import AgentBaseChatStore
    from agentbase_kernel import WrongType

    before = row_counts(kernel.path)
    with pytest.raises(WrongType):
        AgentBaseChatStore(db, user_id="alice").set_messages("k", None)  # type: ignore[arg-type]
    assert row_counts(kernel.path) == before


@pytest.mark.parametrize("actor", [5, 1.5, ["x"], {"a": 1}, object()], ids=["int", "float", "list", "dict", "object"])
def test_add_memory_with_a_non_str_actor_and_infer_is_our_error(kernel, actor):
    before = row_counts(kernel.path)
    with pytest.raises(AgentBaseError):
        kernel.add_memory("Alice likes tea", user_id="alice", actor=actor, infer=True)
    assert row_counts(kernel.path) == before


@pytest.mark.slow
def test_the_same_properties_with_many_examples(tmp_path):
    """The larger run (``benchmarks.stress`` runs it too, with the rest of tests/reliability)."""
    env = {**os.environ, "AGENTBASE_RELIABILITY_EXAMPLES": "150"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-m", "not slow"],
                          cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
