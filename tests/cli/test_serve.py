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


def _serving(monkeypatch, agentbase, *args: str) -> dict:
    """Run ``serve-openai ARGS`` with uvicorn swapped for a client that asks the app two things."""
    import uvicorn
    from starlette.testclient import TestClient

    seen: dict = {}

    def run(app, host, port):
        http = TestClient(app, base_url="http://127.0.0.1:8000", client=("127.0.0.1", 5000),
                          headers={"Authorization": "Bearer sk-alice-0001"})
        made = http.post("/v1/threads", json={}).json()
        seen["made"] = made["id"]
        seen["foreign"] = http.get("/v1/threads/bob-chat").status_code

    monkeypatch.setattr(uvicorn, "run", run)
    result = agentbase("serve-openai", *args)
    assert result.exit_code == 0, result.output
    return seen


@pytest.mark.parametrize("args", [("--user-id", "alice"), ("--keys", "keys.json")], ids=["user-id", "keys"])
def test_a_scoped_server_reaches_its_scope_only(ok, agentbase, monkeypatch, tmp_path, args):
    import json

    (tmp_path / "keys.json").write_text(json.dumps({"sk-alice-0001": {"user_id": "alice"}}))
    ok("session", "create", "--session-id", "bob-chat", "--user-id", "bob")
    seen = _serving(monkeypatch, agentbase, *args)
    assert seen["foreign"] == 404
    made = json.loads(ok("session", "show", seen["made"], "--json"))
    assert '"user_id": "alice"' in json.dumps(made)


def test_a_key_table_refuses_a_second_scope(agentbase, tmp_path):
    (tmp_path / "keys.json").write_text('{"sk-alice-0001": {}}')
    result = agentbase("serve-openai", "--keys", "keys.json")
    assert result.exit_code == 2 and "at least one of user_id" in result.stderr
    (tmp_path / "keys.json").write_text('{"sk-alice-0001": {"user_id": "alice"}}')
    result = agentbase("serve-openai", "--keys", "keys.json", "--user-id", "bob")
    assert result.exit_code == 2 and "not both" in result.stderr
