"""Exit codes (docs/cli.md) and error messages that name the command to type next, without tracebacks."""

from __future__ import annotations

import re

import pytest


def assert_clean(result) -> None:
    """No traceback, and no Python API advice such as "pass create=True"."""
    assert "Traceback" not in result.output
    assert not re.search(r"\b[a-z_]+=(True|False|None|\.\.\.)", result.output), result.output


def test_missing_database_is_exit_1_and_names_init(agentbase):
    result = agentbase("--db", "nope.db", "list")
    assert result.exit_code == 1
    assert "agentbase --db nope.db init" in result.stderr
    assert_clean(result)
    default = agentbase("get", "x")
    assert default.exit_code == 1 and "agentbase init" in default.stderr


@pytest.mark.usefixtures("initialised")
def test_unknown_ids_are_exit_1_with_the_listing_command(agentbase, ok):
    for args, hint in ((["get", "nope"], "agentbase list"), (["delete", "nope"], "agentbase list"),
                       (["history", "nope"], "agentbase list"),
                       (["update", "nope", "--text", "x"], "agentbase list"),
                       (["session", "show", "nope"], "agentbase session list"),
                       (["session", "commit", "nope"], "agentbase session create --session-id nope")):
        result = agentbase(*args)
        assert result.exit_code == 1, (args, result.output)
        assert hint in result.stderr, (args, result.stderr)
        assert_clean(result)


@pytest.mark.usefixtures("initialised")
def test_an_id_in_another_scope_suggests_dropping_the_scope(agentbase, ok):
    entry_id = ok("add", "Alice's note", "--user-id", "alice").strip()
    result = agentbase("get", entry_id, "--user-id", "bob")
    assert result.exit_code == 1
    assert "drop the --user-id" in result.stderr


@pytest.mark.usefixtures("initialised")
def test_bad_values_are_exit_2(agentbase):
    for args in (["add", "x", "--type", "bogus"], ["add", "x", "--confidence", "2"], ["find", "x", "--top-k", "0"],
                 ["add", "x", "--metadata", "not-a-pair"], ["add", "x", "--metadata", "{broken"],
                 ["list", "--since", "yesterday-ish"], ["frobnicate"], ["add", "   "]):
        result = agentbase(*args)
        assert result.exit_code == 2, (args, result.output)
        assert_clean(result)


@pytest.mark.usefixtures("initialised")
def test_a_kernel_usage_error_points_at_the_command_help(agentbase):
    result = agentbase("add", "   ")
    assert "agentbase add --help" in result.stderr


def test_a_file_written_by_another_embedder_names_the_option(agentbase, ok, tmp_path, monkeypatch, hash_embedder):
    from agentbase_kernel import Kernel

    with Kernel(tmp_path / "hashed.db", embedder=hash_embedder, ner=None) as k:
        k.add_memory("written with the hash embedder")
    monkeypatch.setenv("AGENTBASE_EMBEDDER", "minilm")
    result = agentbase("--db", "hashed.db", "add", "more")
    assert result.exit_code == 3
    assert "agentbase --embedder NAME add" in result.stderr
    assert_clean(result)
    # reads do not need the embedder, so they still work
    assert agentbase("--db", "hashed.db", "list").exit_code == 0


def test_version(agentbase):
    from importlib.metadata import version

    result = agentbase("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"agentbase {version('agentbase-memory')}"
