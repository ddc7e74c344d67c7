"""Hostile input through every public ``Kernel`` method: a result or an ``AgentBaseError``, nothing else.

Each example runs one call with drawn arguments on a real file that already holds data. A call
that raises must leave every table as it was (no partial write); ``verify()`` must stay ok.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentbase_kernel.errors import AgentBaseError, InvalidArgument

from ._inputs import (
    ALL_STRINGS,
    FTS5_SYNTAX,
    SETTINGS,
    SQL_INJECTION,
    TALLY,
    UNICODE,
    anything,
    hostile,
    int_like,
    row_counts,
)


@pytest.fixture
def seeded(kernel):
    kernel.add_memory("Alice likes green tea in Paris", user_id="alice", agent_id="a1", metadata={"k": "v"})
    kernel.add_memory("Bob plays chess (badly) on Mondays", user_id="bob", tags=["games"])
    kernel.add_messages("s-alice", [{"role": "user", "content": "I live in Berlin"},
                                    {"role": "assistant", "content": "Noted, Berlin."}])
    return kernel


def _call(kernel, fn, *args: Any, **kwargs: Any) -> tuple[Any, BaseException | None]:
    before = row_counts(kernel.path)
    try:
        return fn(*args, **kwargs), None
    except AgentBaseError as exc:
        assert row_counts(kernel.path) == before, f"{fn.__name__} raised {exc!r} after writing"
        return None, exc


def _ops(kernel) -> dict[str, Any]:
    k = kernel
    return {
        "add_memory": lambda d: k.add_memory(d(anything), user_id=d(anything), agent_id=d(anything), session_id=d(anything),
                                             entry_id=d(st.one_of(st.none(), anything)), metadata={d(hostile): d(anything)},
                                             tags=d(st.one_of(st.lists(anything, max_size=3), anything)), category=d(anything),
                                             role=d(anything), actor=d(anything), confidence=d(st.one_of(st.floats(), anything)),
                                             expires_at=d(st.one_of(st.none(), anything)), infer=d(st.booleans())),
        "add_memories": lambda d: k.add_memories(d(st.lists(st.fixed_dictionaries({"text": anything}, optional={
            "user_id": anything, "metadata": st.dictionaries(hostile, anything, max_size=2), "entry_id": anything}), max_size=4))),
        "find": lambda d: k.find(d(anything), top_k=d(int_like), user_id=d(st.one_of(st.none(), anything)),
                                 category=d(st.one_of(st.none(), anything)), role=d(st.one_of(st.none(), anything)),
                                 tags=d(st.one_of(st.none(), st.lists(anything, max_size=2))),
                                 metadata=d(st.one_of(st.none(), st.dictionaries(hostile, anything, max_size=2))),
                                 token_budget=d(st.one_of(st.none(), int_like))),
        "get": lambda d: k.get(d(anything), user_id=d(st.one_of(st.none(), anything))),
        "update": lambda d: k.update(d(st.one_of(st.sampled_from([e.id for e in k.list(limit=5)] or ["x"]), anything)),
                                     user_id=d(st.one_of(st.none(), anything)), text=d(st.one_of(st.none(), anything)),
                                     metadata=d(st.one_of(st.none(), st.dictionaries(hostile, anything, max_size=2), anything)),
                                     tags=d(st.one_of(st.none(), st.lists(anything, max_size=2))),
                                     category=d(st.one_of(st.none(), anything)),
                                     confidence=d(st.one_of(st.none(), st.floats(), anything))),
        "delete": lambda d: k.delete(d(anything), user_id=d(st.one_of(st.none(), anything))),
        "delete_all": lambda d: k.delete_all(user_id=d(anything), agent_id=d(st.one_of(st.none(), anything))),
        "list": lambda d: k.list(user_id=d(st.one_of(st.none(), anything)), category=d(st.one_of(st.none(), anything)),
                                 role=d(st.one_of(st.none(), anything)), tags=d(st.one_of(st.none(), st.lists(anything, max_size=2))),
                                 metadata=d(st.one_of(st.none(), st.dictionaries(hostile, anything, max_size=2))),
                                 limit=d(st.one_of(st.none(), int_like)), offset=d(int_like), order=d(anything)),
        "count": lambda d: k.count(user_id=d(st.one_of(st.none(), anything)), metadata=d(st.one_of(st.none(), st.dictionaries(hostile, anything, max_size=2)))),
        "history": lambda d: k.history(d(anything)),
        "create_session": lambda d: k.create_session(d(st.one_of(st.none(), anything)), user_id=d(st.one_of(st.none(), anything)),
                                                     metadata=d(st.one_of(st.none(), st.dictionaries(hostile, anything, max_size=2)))),
        "get_session": lambda d: k.get_session(d(anything), user_id=d(st.one_of(st.none(), anything))),
        "list_sessions": lambda d: k.list_sessions(user_id=d(st.one_of(st.none(), anything)), limit=d(st.one_of(st.none(), int_like)),
                                                   offset=d(int_like)),
        "add_message": lambda d: k.add_message(d(st.one_of(st.just("s-alice"), anything)), d(anything), d(anything),
                                               name=d(st.one_of(st.none(), anything)), message_id=d(st.one_of(st.none(), anything)),
                                               metadata=d(st.one_of(st.none(), st.dictionaries(hostile, anything, max_size=2))),
                                               payload=d(st.one_of(st.none(), anything)),
                                               position=d(st.one_of(st.none(), int_like))),
        "add_messages": lambda d: k.add_messages(d(st.one_of(st.just("s-alice"), anything)), d(st.one_of(
            st.lists(st.fixed_dictionaries({"role": anything, "content": anything}), max_size=3), anything))),
        "list_messages": lambda d: k.list_messages(d(st.one_of(st.just("s-alice"), anything)), status=d(st.one_of(st.none(), anything)),
                                                   limit=d(st.one_of(st.none(), int_like)), offset=d(int_like),
                                                   order=d(st.one_of(st.just("asc"), anything)),
                                                   after=d(st.one_of(st.none(), anything))),
        "get_message": lambda d: k.get_message(d(anything), d(anything)),
        "update_message": lambda d: k.update_message(d(st.one_of(st.just("s-alice"), anything)), d(anything),
                                                     metadata=d(st.one_of(st.none(), st.dictionaries(hostile, anything, max_size=2))),
                                                     status=d(st.one_of(st.just("active"), anything))),
        "delete_message": lambda d: k.delete_message(d(anything), d(anything)),
        "clear_session": lambda d: k.clear_session(d(anything)),
        "count_messages": lambda d: k.count_messages(d(anything), status=d(st.one_of(st.none(), anything))),
        "set_messages": lambda d: k.set_messages(d(anything), d(st.lists(st.fixed_dictionaries({"role": anything, "content": anything}), max_size=2))),
        "commit_session": lambda d: k.commit_session(d(st.one_of(st.just("s-alice"), anything))),
        "delete_session": lambda d: k.delete_session(d(anything)),
        "trace_session": lambda d: k.trace_session(user_id=d(st.one_of(st.none(), anything)), limit=d(int_like)),
        "entity_graph": lambda d: k.entity_graph(entity=d(st.one_of(st.none(), anything)), limit=d(int_like)),
        "diff_entries": lambda d: k.diff_entries(d(anything), d(anything)),
    }


OP_NAMES = sorted(_ops(None))


@pytest.mark.parametrize("op", OP_NAMES)
@SETTINGS
@given(data=st.data())
def test_kernel_entry_point_gives_result_or_our_error(seeded, op, data):
    fn = _ops(seeded)[op]
    TALLY["inputs_tried"] += 1
    _call(seeded, fn, data.draw)
    assert seeded.verify()["ok"]


@pytest.mark.parametrize("query", [*FTS5_SYNTAX, *SQL_INJECTION, *UNICODE])
def test_find_never_passes_raw_fts5_syntax(seeded, query):
    try:
        hits = seeded.find(query)
    except InvalidArgument as exc:  # no searchable character, or not valid Unicode
        assert "query is empty" in str(exc) or "lone surrogate" in str(exc)
        return
    assert all(h.entry.l2_full for h in hits)


@pytest.mark.parametrize("word", ["AND", "OR", "NOT", "NEAR"])
def test_fts5_operators_are_ordinary_words(kernel, word):
    added = kernel.add_memory(f"the word {word} appears here", user_id="u")
    kernel.add_memory("nothing to see", user_id="u")
    assert [h.id for h in kernel.find(word, user_id="u")][:1] == [added.id]


@pytest.mark.parametrize("text", [s for s in ALL_STRINGS if s.strip() and "\ud800" not in s
                                  and "\udfff" not in s and "\udbff" not in s])
def test_text_round_trips_verbatim(kernel, text):
    added = kernel.add_memory(text, user_id="u")
    assert kernel.get(added.id, user_id="u").l2_full == text


def test_failed_bulk_import_writes_nothing(kernel):
    kernel.add_memory("taken", entry_id="same-id")
    before = row_counts(kernel.path)
    with pytest.raises(InvalidArgument):
        kernel.add_memories([{"text": "first is fine"}, {"text": "second collides", "entry_id": "same-id"}])
    assert row_counts(kernel.path) == before


@pytest.mark.parametrize("kwargs", [{"category": ["list"]}, {"role": {"a": 1}}, {"user_id": "u", "category": {1}}])
def test_find_rejects_a_filter_value_that_is_not_a_string(seeded, kwargs):
    """Found by the fuzz test above: an unhashable filter value reached the FTS cache key."""
    with pytest.raises(InvalidArgument, match="filter takes a string"):
        seeded.find("anything at all", **kwargs)
