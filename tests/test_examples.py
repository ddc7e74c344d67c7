"""Every script in examples/ runs to completion, offline, with the real models."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


# examples of harnesses whose pins clash with [all] run in the harness's own virtualenv (see the Makefile)
_OWN_VENV = {"hermes_": ("AGENTBASE_HERMES_PYTHON", ".venv-hermes"), "crewai_": ("AGENTBASE_CREWAI_PYTHON", ".venv-crewai")}


def _python(script: Path) -> str:
    """Hermes' and CrewAI's examples run in their own virtualenvs, the rest here."""
    venv = next((v for prefix, v in _OWN_VENV.items() if script.name.startswith(prefix)), None)
    if venv is None:
        return sys.executable
    variable, directory = venv
    python = os.environ.get(variable) or str(ROOT / directory / "bin" / "python")
    if not Path(python).exists():
        pytest.skip(f"needs {directory} (make test builds it and sets {variable})")
    return python


def test_there_are_examples():
    assert {p.name for p in EXAMPLES} >= {"demo.py", "minimal.py", "mem0_swap.py", "langchain_chain.py",
                                          "langgraph_store.py", "llamaindex_chat.py", "openai_threads.py",
                                          "hermes_memory.py", "claude_agent.py", "deepagents_memories.py",
                                          "crewai_memory.py", "pydantic_ai_memory.py"}


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(script, tmp_path):
    env = {**os.environ, "AGENTBASE_PATH": str(tmp_path / "example.db"), "HF_HUB_OFFLINE": "1",
           "MEM0_TELEMETRY": "False", "MEM0_DIR": str(tmp_path / "mem0")}
    proc = subprocess.run([_python(script), str(script)], check=False, capture_output=True, text=True, timeout=600, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip(), "an example should show what it did"


@pytest.fixture(scope="module")
def demo_output(tmp_path_factory) -> str:
    tmp_path = tmp_path_factory.mktemp("demo")
    env = {**os.environ, "AGENTBASE_PATH": str(tmp_path / "demo.db"), "HF_HUB_OFFLINE": "1",
           "MEM0_TELEMETRY": "False", "MEM0_DIR": str(tmp_path / "mem0")}
    demo = next(p for p in EXAMPLES if p.name == "demo.py")
    return subprocess.run([sys.executable, str(demo)], capture_output=True, text=True, timeout=600, env=env,
                          cwd=tmp_path, check=True).stdout


def test_demo_shows_every_adapters_rows_labelled_by_writer(demo_output):
    rows = demo_output.split("labelled with the adapter that wrote it")[1].split("\n==")[0]
    for adapter, text in (("Minimal", "window seats"), ("Mem0", "sci-fi"), ("LangChain", "trip to Japan"),
                          ("LangGraph", "vegetarian"), ("LlamaIndex", "passport"), ("OpenAI", "Kyoto station")):
        assert any(line.strip().startswith(f"[{adapter}") and text in line for line in rows.splitlines()), (adapter, rows)
    assert "adapters without a row: none" in rows


def test_every_demo_section_shows_what_it_did(demo_output):
    sections = demo_output.split("\n== ")[1:]
    assert len(sections) >= 9
    for block in sections:
        header, _, body = block.partition("\n")
        assert body.strip(), f"section {header.strip(' =')!r} prints nothing under its header"


def test_the_demos_session_summary_counts_in_good_english(demo_output):
    assert "session summary: 1 turn by user." in demo_output
    assert " 1 turns" not in demo_output
