"""A server started without its extra: checked before anything is printed, exit 3, the extra named.

Each module an extra brings is taken away in turn (``sys.modules[name] = None`` is how Python spells "not
installed" to ``import`` and ``find_spec`` alike).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentbase_adapters._require import EXTRA_MODULES
from agentbase_kernel import Kernel

CASES = [(extra, module) for extra, modules in EXTRA_MODULES.items() for module in modules]
COMMANDS = {"web": ["web"], "mcp": ["mcp"], "openai": ["serve-openai"]}


@pytest.fixture
def db_file(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    Kernel(path, embedder=None, ner=None).initialize().close()
    return path


@pytest.fixture(autouse=True)
def _no_server_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that starts although its extra is missing fails the test instead of serving forever."""

    def started(*_: object, **__: object) -> None:
        raise AssertionError("the server started")

    for name in ("uvicorn", "anyio"):
        module = pytest.importorskip(name)
        monkeypatch.setattr(module, "run", started)


def _without(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)


@pytest.mark.parametrize(("extra", "module"), CASES, ids=[f"{e}-without-{m}" for e, m in CASES])
def test_the_agentbase_command(extra, module, db_file, runner, monkeypatch):
    from agentbase_cli.app import cli

    _without(monkeypatch, module)
    result = runner.invoke(cli, ["--db", str(db_file), *COMMANDS[extra]])
    assert result.exit_code == 3, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ")  # the error is the first thing printed: no banner before it
    assert f"pip install 'agentbase-memory[{extra}]'" in result.stderr
    assert f"the '{extra}' extra is not installed (no module '{module}')" in result.stderr


@pytest.mark.parametrize("module", EXTRA_MODULES["mcp"])
def test_agentbase_mcp(module, db_file, monkeypatch, capsys):
    from agentbase_adapters.mcp import main

    _without(monkeypatch, module)
    assert main(["--db", str(db_file)]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("agentbase-mcp: the 'mcp' extra is not installed")
    assert "pip install 'agentbase-memory[mcp]'" in err


@pytest.mark.parametrize("module", EXTRA_MODULES["web"])
def test_agentbase_web(module, db_file, monkeypatch, capsys):
    from agentbase_adapters.web import main

    _without(monkeypatch, module)
    assert main([str(db_file), "8080"]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("agentbase-web: the 'web' extra is not installed")  # no "dashboard on http://" banner
    assert "pip install 'agentbase-memory[web]'" in err


@pytest.mark.parametrize(("extra", "module"), CASES, ids=[f"{e}-without-{m}" for e, m in CASES])
def test_the_python_serve_functions_check_first(extra, module, tmp_path, monkeypatch):
    """``serve()`` refuses before it opens (or creates) the file."""
    import importlib

    from agentbase_kernel import MissingDependency

    package = {"web": "agentbase_adapters.web", "mcp": "agentbase_adapters.mcp.cli",
               "openai": "agentbase_adapters.openai.app"}[extra]
    serve = importlib.import_module(package).serve  # imported while the extra is there, as a running app has it
    _without(monkeypatch, module)
    with pytest.raises(MissingDependency, match=rf"pip install 'agentbase-memory\[{extra}\]'"):
        serve(tmp_path / "new.db")
    assert not (tmp_path / "new.db").exists()
