"""Entity drift, by rule: which sentences mark an entity deprecated or renamed (text/drift.py)."""

from __future__ import annotations

import pytest

from agentbase_kernel.text.drift import find_drift
from agentbase_kernel.text.targets import entity_keys, target_entities


@pytest.mark.parametrize(("text", "marks"), [
    pytest.param("The events_v1 table was renamed to events_v2.", [("events_v1", "renamed", "events_v2")],
                 id="renamed"),
    pytest.param("billing_v1 was replaced by billing_v2", [("billing_v1", "renamed", "billing_v2")], id="replaced"),
    pytest.param("get_user is now called fetch_user", [("get_user", "renamed", "fetch_user")], id="now-called"),
    pytest.param("Use /api/v2/users instead of /api/v1/users", [("/api/v1/users", "renamed", "/api/v2/users")],
                 id="instead-of"),
    pytest.param("src/old/db.py was moved to src/db/pool.py", [("src/old/db.py", "renamed", "src/db/pool.py")],
                 id="moved-path"),
    pytest.param("The users table is deprecated", [("users", "deprecated", None)], id="kind-word"),
    pytest.param("We dropped the legacy_orders table last week", [("legacy_orders", "deprecated", None)],
                 id="dropped"),
    pytest.param("Do not use `old_client` anymore", [("old_client", "deprecated", None)], id="backticks"),
    pytest.param("The /v1/search endpoint is no longer supported.", [("/v1/search", "deprecated", None)],
                 id="no-longer"),
    pytest.param("The weather is gone", [], id="not-code"),
    pytest.param("I removed the cat from the sofa", [], id="plain-object"),
    pytest.param("My phone is dead and the price was dropped", [], id="plain-words"),
    pytest.param("", [], id="empty"),
])
def test_drift_rules(text, marks):
    assert find_drift(text) == marks


def test_a_long_text_without_a_trigger_word_is_one_scan():
    assert find_drift("plain words about events_v1 " * 5000) == []


@pytest.mark.parametrize(("text", "found"), [
    ("Edit src/app/db.py before the events_v1 job", [("src/app/db.py", "PATH"), ("events_v1", "IDENT")]),
    ("Call `getUserById`, see PROJ-123", [("getuserbyid", "IDENT"), ("proj-123", "IDENT")]),
    ("see ./config/settings.yaml", [("config/settings.yaml", "PATH")]),
    ("Meet Ann at 3/4 past 24/7 and/or later", []),
])
def test_code_targets(text, found):
    assert [(norm, label) for norm, label, _ in target_entities(text)] == found


def test_entity_keys_weigh_the_file_name_and_the_last_dotted_part_half():
    assert entity_keys("./src/app/db.py") == [("src/app/db.py", 1.0), ("db.py", 0.5)]
    assert entity_keys("analytics.events_v1") == [("analytics.events_v1", 1.0), ("events_v1", 0.5)]
    assert entity_keys("README.md") == [("readme.md", 1.0)]
    assert entity_keys("https://x.org/a/b") == [("https://x.org/a/b", 1.0)]
