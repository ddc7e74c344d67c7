"""A user's install: ``pip install "agentbase-memory[embed]"`` brings no torch and embeds offline."""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import importlib.util, sys
from agentbase_kernel import Kernel
with Kernel(sys.argv[1], ner="regex") as k:
    k.add_memory("Alice moved to Denver last month", user_id="alice")
    hits = k.find("where does Alice live now?", user_id="alice").hits
    print(k.info()["embedder"], hits[0].matched_by)
print("torch" if importlib.util.find_spec("torch") else "no torch")
print("sentence_transformers" if importlib.util.find_spec("sentence_transformers") else "no sentence_transformers")
"""


def test_the_embed_extra_installs_without_torch_and_embeds_offline(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{ROOT}[embed]"],
        capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-2000:]
    offline = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "AGENTBASE_CACHE": str(tmp_path / "c"),
               "PYTHONPATH": ""}
    run = subprocess.run([str(python), "-c", SCRIPT, str(tmp_path / "m.db")], capture_output=True, text=True,
                         timeout=300, env=offline, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    embedder_line, torch_line, st_line = run.stdout.strip().splitlines()[-3:]
    assert embedder_line.startswith("all-MiniLM-L6-v2") and "vector" in embedder_line
    assert torch_line == "no torch"
    assert st_line == "no sentence_transformers"
    assert not list((tmp_path / "c").glob("*.onnx"))  # nothing exported: the model came from the package
