"""The package surface: lazy names, the extra named when the SDK is missing, the scope rules, the command's errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

import agentbase_adapters.mcp as mcp_adapter
from agentbase_adapters.mcp import Tenancy, main
from agentbase_kernel import AgentBase, InvalidArgument, MissingDependency


def test_all_is_sorted_and_resolves():
    assert mcp_adapter.__all__ == sorted(mcp_adapter.__all__)
    for name in mcp_adapter.__all__:
        assert getattr(mcp_adapter, name) is not None


def test_importing_the_package_imports_no_sdk():
    code = "import sys, agentbase_adapters.mcp; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_sdk_names_the_extra(monkeypatch, tmp_path):
    from agentbase_adapters.mcp.server import create_server

    monkeypatch.setitem(sys.modules, "mcp.server.lowlevel", None)
    with pytest.raises(MissingDependency, match=r"pip install 'agentbase(-memory)?\[mcp\]'"):
        create_server(AgentBase(tmp_path / "x.db", embedder=None), Tenancy(user_id="a"))


@pytest.mark.parametrize(("kwargs", "message"), [
    pytest.param({}, "A single-tenant server needs a user_id or an agent_id", id="no-scope"),
    pytest.param({"multi": True, "user_id": "a"}, "A multi-tenant server takes its scope from each call", id="both"),
])
def test_tenancy_rules(kwargs, message):
    with pytest.raises(InvalidArgument, match=message):
        Tenancy(**kwargs)


def test_tenancy_scope():
    assert Tenancy(user_id="a", agent_id="b").split({"x": 1}) == ({"user_id": "a", "agent_id": "b"}, {"x": 1})
    assert Tenancy(multi=True).split({"user_id": "u", "x": 1}) == ({"user_id": "u"}, {"x": 1})
    schema = Tenancy(multi=True).schema({"q": {"type": "string"}}, ["q"])
    assert schema["required"] == ["user_id", "q"] and schema["additionalProperties"] is False


def test_command_reports_bad_options_on_stderr(capsys, tmp_path):
    assert main(["--db", str(tmp_path / "x.db"), "--multi-tenant", "--user-id", "a"]) == 2
    assert "A multi-tenant server takes its scope from each call" in capsys.readouterr().err
    assert main(["--db", str(tmp_path / "x.db"), "--transport", "http", "--api-key", "has space"]) == 2
    assert "spaces or non-ASCII" in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists()


def test_a_file_that_cannot_be_opened_is_a_tool_error_not_a_dead_server(tmp_path):
    from .conftest import McpClient, launch

    client = McpClient(launch(tmp_path / "no-such-folder" / "x.db", "--user-id", "a"))
    try:
        for _ in range(2):
            assert "no-such-folder does not exist - create it first" in client.fails("search_memories", {"query": "x"})
        from agentbase_adapters.mcp._tools import TOOLS

        assert {t.name for t in client.tools()} == set(TOOLS)
    finally:
        client.close()


@pytest.mark.parametrize(("env", "scope"), [
    pytest.param({"AGENTBASE_USER_ID": "carol", "AGENTBASE_AGENT_ID": "bot"}, {"user_id": "carol", "agent_id": "bot"},
                 id="from-env"),
    pytest.param({}, {"user_id": "default"}, id="default-user"),
])
def test_scope_from_the_environment(tmp_path, env, scope):
    from .conftest import McpClient, launch

    client = McpClient(launch(tmp_path / "x.db", env=env))
    try:
        assert client.ok("memory_stats")["scope"] == scope
    finally:
        client.close()
