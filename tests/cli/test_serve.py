"""serve-openai refuses what it cannot serve safely, before binding a port (the README test runs the server itself)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.usefixtures("initialised")


def test_listening_beyond_loopback_without_a_key_is_refused(agentbase):
    result = agentbase("serve-openai", "--host", "0.0.0.0", "--port", "8999")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "key" in result.stderr.lower()


def test_a_responder_that_cannot_be_loaded_is_a_usage_error(agentbase):
    for spec in ("no_colon_here", "no_such_module_xyz:fn", "json:no_such_function", "json:__doc__"):
        result = agentbase("serve-openai", "--responder", spec)
        assert result.exit_code == 2, (spec, result.output)
        assert "--responder" in result.stderr


def test_serving_a_missing_file_names_init(agentbase):
    result = agentbase("--db", "missing.db", "serve-openai")
    assert result.exit_code == 1
    assert "agentbase --db missing.db init" in result.stderr
