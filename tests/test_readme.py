"""Every code block of README.md runs as written: each in a fresh folder and process, offline, real models.

Python blocks run with the venv's python (a CrewAI block with .venv-crewai's: crewai's pins keep it out of
[all]); shell blocks made of ``agentbase`` commands run with bash. The
OpenAI server block is started in the background (on a free port instead of 8000, the only change) and the
client block that follows it talks to it. Shell blocks that cannot run here are listed in ``NOT_RUN`` with
the reason, so a new block is never skipped silently.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BIN = Path(sys.executable).parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)

# first line of a shell block -> why it is not run here
NOT_RUN = {
    "make demo": "sets up .venv and runs the demo: tests/test_examples.py runs examples/demo.py",
    "pip install agentbase-memory": "installs from the package index (not published yet)",
    "pip install .": "tests/test_install.py builds the wheel, installs it into a bare venv and runs the quick start",
    "make bench": "benchmarks take minutes to hours (benchmarks/, tests/test_benchmarks.py)",
    "python -m agentbase_adapters.hermes install": "needs hermes-agent, which has its own venv: "
    "tests/adapters/hermes/test_provider.py::test_the_install_command_writes_and_activates_the_plugin runs it",
}


def blocks() -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in FENCE.findall(README.read_text(encoding="utf-8"))]


def is_server(body: str) -> bool:
    return "agentbase serve-" in body


def python_blocks() -> list[tuple[int, str]]:
    found = [(i, body) for i, (lang, body) in enumerate(blocks()) if lang == "python"]
    return [(i, body) for i, body in found if not is_client(body)]


def is_client(body: str) -> bool:
    return "base_url=\"http://127.0.0.1:8000" in body


def shell_blocks() -> list[tuple[int, str]]:
    return [(i, body) for i, (lang, body) in enumerate(blocks()) if lang == "bash"]


def commands(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def is_cli(body: str) -> bool:
    return all(re.match(r"^(\w+=\$\()?agentbase ", line) for line in commands(body))


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBASE_")}
    return {**clean, "PATH": f"{BIN}{os.pathsep}{clean.get('PATH', '')}", "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "MEM0_TELEMETRY": "False", "MEM0_DIR": str(tmp_path / "mem0"),
            "CREWAI_DISABLE_TELEMETRY": "true", "OTEL_SDK_DISABLED": "true", "CREWAI_STORAGE_DIR": str(tmp_path),
            "PYTHONWARNINGS": "ignore::DeprecationWarning"}


def test_the_readme_has_the_blocks_we_expect():
    assert len(python_blocks()) >= 6  # Minimal, AgentBase, Mem0, LangChain, LangGraph, LlamaIndex (+ the OpenAI client)
    assert sum(is_client(body) for lang, body in blocks() if lang == "python") == 1
    for _, body in shell_blocks():
        assert is_cli(body) or any(body.startswith(first) for first in NOT_RUN), body


def _python(body: str) -> str:
    if "from crewai" not in body:
        return sys.executable
    python = os.environ.get("AGENTBASE_CREWAI_PYTHON") or str(README.parent / ".venv-crewai" / "bin" / "python")
    if not Path(python).exists():
        pytest.skip("needs .venv-crewai (make test builds it and sets AGENTBASE_CREWAI_PYTHON)")
    return python


@pytest.mark.parametrize("index,body", python_blocks(), ids=lambda v: f"block{v}" if isinstance(v, int) else "")
def test_python_block_runs(index, body, tmp_path, env):
    (tmp_path / "block.py").write_text(body, encoding="utf-8")
    proc = subprocess.run([_python(body), "block.py"], check=False, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"README block {index}:\n{body}\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), "a README block should show what it did"


@pytest.mark.parametrize("index,body", [(i, b) for i, b in shell_blocks() if is_cli(b) and not is_server(b)],
                         ids=lambda v: f"block{v}" if isinstance(v, int) else "")
def test_shell_block_runs(index, body, tmp_path, env):
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", body], check=False, cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, f"README block {index}:\n{body}\n{proc.stderr[-3000:]}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_openai_server_and_client_blocks_run_together(tmp_path, env):
    server = next(body for _, body in shell_blocks() if is_server(body))
    client = next(body for lang, body in blocks() if lang == "python" and is_client(body))
    port = _free_port()
    lines = commands(server.replace("--port 8000", f"--port {port}"))
    for line in lines[:-1]:
        subprocess.run(shlex.split(line), cwd=tmp_path, env=env, check=True, capture_output=True, timeout=600)
    proc = subprocess.Popen(shlex.split(lines[-1]), cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start listening"
                time.sleep(0.5)
        (tmp_path / "client.py").write_text(client.replace(":8000/", f":{port}/"), encoding="utf-8")
        run = subprocess.run([sys.executable, "client.py"], check=False, cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        assert "Kyoto station" in run.stdout
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def test_json_blocks_parse_and_name_real_commands():
    import json

    from click.testing import CliRunner

    from agentbase_cli.app import cli

    found = [json.loads(body) for lang, body in blocks() if lang == "json"]
    assert found
    for config in found:
        for server in config.get("mcpServers", {}).values():
            assert server["command"] == "agentbase"
            # the arguments parse as an agentbase command line (--help: without starting the server)
            result = CliRunner().invoke(cli, [*server["args"], "--help"], prog_name="agentbase")
            assert result.exit_code == 0 and "agentbase mcp" in result.stdout
