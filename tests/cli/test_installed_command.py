"""The installed ``agentbase`` entry point, run as a user runs it: the seed's documented sequence, in order,
in one fresh folder, with the real MiniLM and spaCy models; and reads that load no model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

AGENTBASE = shutil.which("agentbase", path=str(Path(sys.executable).parent))


@pytest.fixture
def shell(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBASE_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([AGENTBASE, *args], check=False, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        return proc

    return run


def test_the_entry_point_is_installed():
    assert AGENTBASE, "pip install -e . installs the agentbase command next to python"


def test_version_matches_the_package_metadata(shell):
    from importlib.metadata import version

    import agentbase_cli
    import agentbase_kernel

    assert shell("--version").stdout.strip() == f"agentbase {version('agentbase-memory')}"
    assert agentbase_cli.__version__ == agentbase_kernel.__version__ == version("agentbase-memory")


def test_the_seed_sequence_runs_as_documented(shell, tmp_path):
    shell("init", "--data-dir", "./data")
    assert (tmp_path / "data" / "agentbase.db").is_file()
    entry_id = shell("add", "User prefers dark mode", "--type", "memory", "--tags", "preference,dark-mode").stdout.strip()
    found = shell("find", "user preferences", "--top-k", "5").stdout.splitlines()
    assert found[0].split("\t")[1:] == [entry_id, "User prefers dark mode"]
    shown = shell("get", entry_id).stdout
    assert "User prefers dark mode" in shown and "preference, dark-mode" in shown
    session_id = shell("session", "create", "--agent-id", "my-agent").stdout.strip()
    message_id = shell("session", "add-message", session_id, "--role", "user", "--content", "Hello").stdout.strip()
    assert message_id
    summary = shell("session", "commit", session_id).stdout
    assert "Hello" in summary
    info = json.loads(shell("info", "--models", "--json").stdout)
    assert info["embedder"] == "all-MiniLM-L6-v2" and info["ner_stage"].startswith("spacy:")
    assert info["entries"] == 3  # the memory, the "Hello" turn and the session summary


def test_reads_load_neither_the_embedder_nor_spacy(tmp_path):
    """info / verify / get / list / history / stats / session show run without importing any model runtime."""
    from agentbase_kernel import Kernel

    with Kernel(tmp_path / "m.db", embedder=None, ner=None) as k:
        entry_id = k.add_memory("a memory").id
        k.add_message("s1", "user", "hello")
    code = f"""
import sys
from agentbase_cli import main
db = {str(tmp_path / 'm.db')!r}
for args in (["info"], ["verify"], ["get", {entry_id!r}], ["list"], ["history", {entry_id!r}], ["stats"],
             ["session", "show", "s1"], ["session", "list"], ["delete", {entry_id!r}]):
    assert main(["--db", db, *args]) == 0, args
print(sorted(m for m in ("spacy", "onnxruntime", "torch", "sentence_transformers", "tokenizers") if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300,
                         env={**os.environ, "AGENTBASE_EMBEDDER": "auto"})
    assert out.stdout.strip().splitlines()[-1] == "[]"
