"""Each defect a user reached through a public call, pinned.

Every call here used to raise a raw error (TypeError, RecursionError, AttributeError ...), lose a
write, or write something no JSON reader accepts; each now gets ``InvalidArgument`` /
``MissingDependency`` with a message that says what to pass, or works.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentbase_kernel import Config, InvalidArgument, Kernel, MissingDependency

_CONTROL = st.characters(min_codepoint=1, max_codepoint=31)
_ID = st.text(alphabet=st.one_of(_CONTROL, st.sampled_from("ab")), min_size=1, max_size=4)


@pytest.fixture
def k(db_location, hash_embedder):
    with Kernel(db_location, embedder=hash_embedder, ner="regex") as kernel:
        yield kernel


# -- item 7: the scope key is injective ------------------------------------------------------


def test_ids_holding_the_old_separator_are_different_scopes(k):
    first = k.add_memory("same text", user_id="alice\x1fx", agent_id="y")
    second = k.add_memory("same text", user_id="alice", agent_id="x\x1fy")
    assert second.event == "ADD"
    assert first.entry.id != second.entry.id
    assert [e.id for e in k.list(user_id="alice", agent_id="x\x1fy")] == [second.entry.id]


def test_none_and_empty_looking_scopes_stay_apart(k):
    a = k.add_memory("same text", user_id="u", agent_id=None)
    b = k.add_memory("same text", user_id="u", agent_id="\x01")
    assert a.entry.id != b.entry.id


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=st.tuples(_ID, _ID, _ID), b=st.tuples(_ID, _ID, _ID))
def test_scope_key_is_injective_over_ids_with_control_characters(k, a, b):
    """Writing the same text into two scopes gives one entry per distinct scope, never a shared one."""
    ra = k.add_memory("one text", user_id=a[0], agent_id=a[1], project_id=a[2])
    rb = k.add_memory("one text", user_id=b[0], agent_id=b[1], project_id=b[2])
    assert (ra.entry.id == rb.entry.id) == (a == b)
    assert ra.entry.scope.user_id == a[0] and rb.entry.scope.user_id == b[0]


def test_old_files_migrate_to_injective_keys_and_portable_json(tmp_path, hash_embedder):
    path = tmp_path / "old.db"
    with Kernel(path, embedder=hash_embedder, ner="regex") as kernel:
        kernel.add_memory("kept", user_id="u", metadata={"n": 1})
    conn = sqlite3.connect(path)
    # what a schema-4 file holds: "\x1f"-joined keys, and NaN written by the old JSON encoder
    conn.execute("UPDATE entries SET scope_key = 'u\x1f\x1f\x1f', metadata = '{\"n\":NaN}'")
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()
    with Kernel(path, embedder=hash_embedder, ner="regex") as kernel:
        (entry,) = kernel.list(user_id="u")
        assert entry.metadata == {"n": None}
        assert kernel.add_memory("kept", user_id="u").event == "NOOP"  # dedup found the migrated key
        assert kernel.list(user_id="u", metadata={"n": {"exists": True}})
        assert kernel.verify()["ok"]
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT scope_key FROM entries").fetchone()[0] == '["u",null,null,null]'
    conn.close()


# -- item 8: list / dict filter values over rows holding plain values -------------------------


@pytest.mark.parametrize("value", [["x"], {"a": 1}, [], {}], ids=["list", "dict", "empty-list", "empty-dict"])
def test_structured_filter_values_over_mixed_rows(k, value):
    k.add_memory("a", user_id="u", metadata={"k": "x"})
    k.add_memory("b", user_id="u", metadata={"k": value})
    k.add_memory("c", user_id="other", metadata={"k": "x"})
    assert [e.l2_full for e in k.list(user_id="u", metadata={"k": value})] == ["b"]
    assert [e.l2_full for e in k.list(metadata={"k": value})] == ["b"]
    assert k.count(metadata={"k": value}) == 1


# -- item 9: raw errors from bad types ------------------------------------------------------


def _deep(levels: int) -> dict:
    root: dict = {}
    node = root
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return root


@pytest.mark.parametrize("call, message", [
    (lambda k: k.add_memory("t", user_id="u", tags=0), "tags must be a list of strings"),
    (lambda k: k.list(user_id="u", tags=0), "tags must be a list of strings"),
    (lambda k: k.add_memory("t", user_id="u", metadata=_deep(3000)), "nests deeper than"),
    (lambda k: k.list(user_id="u", metadata=_deep(3000)), "nests deeper than"),
    (lambda k: k.find("q", user_id="u", metadata=_deep(3000)), "nests deeper than"),
    (lambda k: k.find("q", metadata={"k": {1}}), "A set is not JSON"),
    (lambda k: k.find("q", config=1), "config must be a RetrievalConfig"),
    (lambda k: k.update_messages("s", None, status="archived"), "message_ids must be a list"),
    (lambda k: k.delete_messages("s", None), "message_ids must be a list"),
    (lambda k: k.delete_messages("s", [None]), "message_ids must hold"),
    (lambda k: k.add_message("s", "user", "hi", payload={(1,): 2}), "payload keys must be strings"),
    (lambda k: k.add_messages("s", [{"role": "user", "content": "I live in Oslo", "name": 5}]),
     "message name must be a str"),
], ids=["add-tags-int", "list-tags-int", "add-deep-metadata", "list-deep-filter", "find-deep-filter",
        "find-set-filter", "find-config-int", "update-messages-none", "delete-messages-none",
        "delete-messages-none-id", "payload-tuple-key", "speaker-int"])
def test_bad_types_are_invalid_argument(k, call, message):
    with pytest.raises(InvalidArgument) as excinfo:
        call(k)
    assert message in str(excinfo.value)


def test_update_with_bad_tags_changes_nothing(k):
    entry = k.add_memory("keep me", user_id="u", tags=["a"]).entry
    with pytest.raises(InvalidArgument, match="tags must be a list of strings"):
        k.update(entry.id, tags=0)
    assert k.get(entry.id).tags == entry.tags


def test_circular_payload_is_refused_and_nothing_is_written(k):
    payload: dict = {}
    payload["self"] = payload
    with pytest.raises(InvalidArgument, match="reference to itself"):
        k.add_message("s", "user", "hi", payload=payload)
    assert k.count_messages("s") == 0


def test_a_real_retrieval_config_is_accepted(k):
    k.add_memory("Alice likes tea", user_id="u")
    assert k.find("tea", user_id="u", config=Config().retrieval).hits


def test_metadata_at_the_depth_limit_round_trips(k):
    entry = k.add_memory("deep but fine", user_id="u", metadata=_deep(60)).entry
    assert k.get(entry.id).metadata == _deep(60)


# -- item 10: a named NER model that is missing ---------------------------------------------


@pytest.mark.parametrize("name", ["xx_nonexistent", "en_core_web_xx"])
def test_a_named_ner_model_that_is_missing_raises(tmp_path, hash_embedder, name):
    with pytest.raises(MissingDependency, match=name):
        Kernel(tmp_path / "n.db", embedder=hash_embedder, ner=name).initialize()


# -- item 11: a file made without an embedder is healthy --------------------------------------


def test_a_file_written_without_an_embedder_verifies_ok_when_reopened_with_auto(db_location):
    path = db_location
    with Kernel(path, embedder="none", ner="regex") as kernel:
        kernel.add_memory("hello world", user_id="u")
        assert kernel.verify()["ok"]
    with Kernel(path, ner="regex") as kernel:  # embedder="auto"
        assert kernel.info()["embedder"] is None
        report = kernel.verify()
        assert report["ok"] and report["texts_without_vector"] == 0


def test_an_embedder_named_later_adopts_the_file_and_verify_asks_for_a_rebuild(db_location, hash_embedder):
    path = db_location
    with Kernel(path, embedder="none", ner="regex") as kernel:
        kernel.add_memory("hello world", user_id="u")
    with Kernel(path, embedder=hash_embedder, ner="regex") as kernel:
        # opening starts embedding the backlog in the background (Ingestor.resume); rebuild finishes it
        assert kernel.verify()["texts_without_vector"] <= 1
        assert kernel.rebuild()["ok"]
        assert kernel.verify()["texts_without_vector"] == 0


# -- item 12: NaN / Infinity ---------------------------------------------------------------------


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), [1.0, float("nan")]],
                         ids=["nan", "inf", "-inf", "nested"])
def test_non_finite_numbers_in_metadata_are_refused(k, value):
    with pytest.raises(InvalidArgument, match="not JSON"):
        k.add_memory("n", user_id="u", metadata={"x": value})
    assert k.count(user_id="u") == 0


@pytest.mark.sqlite_only("reads the JSON text in the SQLite file (PostgreSQL's jsonb refuses NaN itself)")
def test_metadata_in_the_file_is_standard_json(k):
    k.add_memory("n", user_id="u", metadata={"x": 1.5, "y": [None, True]})
    conn = sqlite3.connect(k.location)
    for (text,) in conn.execute("SELECT metadata FROM entries"):
        json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    conn.close()
