"""Shared fixtures: real SQLite files in tmp_path, a deterministic embedder, the real models.

Mem0 phones home and writes ~/.mem0 unless told otherwise, so the environment is set before
any test module can import it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-"))
os.environ.setdefault("OPENAI_API_KEY", "sk-test-offline")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
import pytest

from agentbase_kernel import AgentBase
from agentbase_kernel.text.embedders import Embedder
from agentbase_kernel.text.tokenize import words

# the Postgres server fixtures and AGENTBASE_TEST_BACKEND (see tests/postgres/plugin.py)
pytest_plugins = ["tests.postgres.plugin"]


class HashEmbedder(Embedder):
    """Deterministic stand-in for a model: each word hashed into 64 dims, L2-normalised.

    Texts that share words get similar vectors, which is all the fast unit tests need.
    """

    name = "test-hash-64"
    dim = 64

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in words(text):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
                out[i, h % self.dim] += 1.0 if h & 1 else -1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        return out


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """No test sees another's default database or config."""
    monkeypatch.setenv("AGENTBASE_PATH", str(tmp_path / "default.db"))
    for key in list(os.environ):
        if key.startswith("AGENTBASE_") and "__" in key:
            monkeypatch.delenv(key)


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def db_path(db_location):
    """The test's database: a file in tmp_path, or a fresh Postgres database's URL under AGENTBASE_TEST_BACKEND=postgres."""
    return db_location


@pytest.fixture
def db(db_path, hash_embedder):
    """An ``AgentBase`` on a real file with the hash embedder and regex NER (fast)."""
    base = AgentBase(db_path, embedder=hash_embedder, ner="regex")
    base.sync.initialize()
    yield base
    base.sync.close()


@pytest.fixture
def kernel(db):
    return db.sync


@pytest.fixture(scope="session")
def minilm():
    """The real all-MiniLM-L6-v2, loaded once from the wheel (never downloaded)."""
    from agentbase_kernel.text.embedders import get_embedder

    return get_embedder("minilm")


@pytest.fixture
def real_db(db_location, minilm):
    """An ``AgentBase`` with the real MiniLM and the real spaCy pipeline."""
    base = AgentBase(db_location, embedder=minilm, ner="auto")
    base.sync.initialize()
    yield base
    base.sync.close()
