"""Fixtures for the Mem0 and Minimal adapters: the real mem0 driven offline, and ours, behind one harness.

The contract suite is written once against ``Harness`` and runs four times:
real ``mem0.Memory`` / ``mem0.AsyncMemory`` and our ``Mem0Adapter`` / ``AsyncMem0Adapter``.
"""

from __future__ import annotations

import inspect
import json
import os
import tempfile
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

# mem0 writes its config dir and phones home at import unless told otherwise.
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-"))
os.environ.setdefault("OPENAI_API_KEY", "sk-test")

from agentbase_adapters.mem0 import AsyncMem0Adapter, Mem0Adapter
from agentbase_kernel import AgentBase


class MiniLMForMem0:
    """The real MiniLM with mem0's embedder interface (``embed`` / ``embed_batch`` + ``memory_action``)."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: list[str], memory_action: str | None = None) -> list[list[float]]:
        return [np.asarray(v, dtype=np.float32).astype(float).tolist() for v in self._embedder.embed_batch(list(texts))]


class FakeLLM:
    """Stands in for mem0's LLM: replies with the configured facts (or a procedural summary)."""

    def __init__(self, facts: list[str]) -> None:
        self.facts = facts
        self.calls = 0

    def generate_response(self, messages: list[dict[str, Any]], response_format: Any = None, **kwargs: Any) -> str:
        self.calls += 1
        self.messages = messages
        if response_format is None:
            return "1. Open the editor\n2. Run the tests"
        return json.dumps({"memory": [{"text": fact, "attributed_to": "user"} for fact in self.facts]})


class Harness:
    """Calls the same method on either implementation and awaits it when it is async."""

    def __init__(self, target: Any, impl: str, mode: str) -> None:
        self.target = target
        self.impl = impl
        self.mode = mode

    def __getattr__(self, name: str) -> Callable[..., Any]:
        attr = getattr(self.target, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            if name == "add" and self.impl != "mem0":
                # mem0's add returns with the vector stored; ours stores it in the background
                # (FTS-searchable at once): compare the two in the same, settled state
                flushed = self.target.flush()
                assert (await flushed) if inspect.isawaitable(flushed) else flushed
            return result

        return call

    def give_llm_facts(self, facts: list[str]) -> None:
        """mem0 needs an LLM for infer=True; ours never calls one."""
        if self.impl == "mem0":
            self.target.llm = FakeLLM(facts)


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread() -> None:
    """MiniLM on one intra-op thread: on a shared 2-core box torch's spinning threads made each
    embedding ~20x slower (50 single embeds: 23.5 s with 2 threads, 1.0 s with 1)."""
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def mem0_offline() -> Any:
    """The real mem0 package (imported after MEM0_TELEMETRY=False and MEM0_DIR are set)."""
    import mem0

    return mem0


@pytest.fixture
def mem0_without_spacy(mem0_offline: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """mem0 as installed without its ``nlp`` extra, for one test.

    mem0 would try to download en_core_web_sm; marking the load as failed gives its documented
    fallback (no lemmas, no entity boost), keeps tests fast, and is undone after the test so a
    benchmark in the same process can still hand mem0 a spaCy pipeline.
    """
    from mem0.utils import spacy_models

    monkeypatch.setattr(spacy_models, "_load_failed_full", True)
    monkeypatch.setattr(spacy_models, "_load_failed_lemma", True)
    return mem0_offline


def make_real_mem0(mem0: Any, minilm: Any, *, mode: str, tmp_path: Any) -> Any:
    from qdrant_client import QdrantClient

    # AsyncMemory.reset() closes the client it was given and rebuilds one from the config, so
    # the async variant gets a local path instead of a shared in-memory client.
    store = (
        {"client": QdrantClient(":memory:")} if mode == "sync" else {"path": str(tmp_path / "qdrant"), "on_disk": False}
    )
    config = {
        "vector_store": {"provider": "qdrant", "config": {**store, "collection_name": "mem0", "embedding_model_dims": 384}},
        "llm": {"provider": "openai", "config": {"api_key": "sk-test"}},
        "embedder": {"provider": "openai", "config": {"api_key": "sk-test", "embedding_dims": 384}},
        "history_db_path": ":memory:",
    }
    cls = mem0.Memory if mode == "sync" else mem0.AsyncMemory
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # local Qdrant warns that payload indexes do nothing
        memory = cls.from_config(config)
    memory.embedding_model = MiniLMForMem0(minilm)
    return memory


@pytest.fixture(
    params=[("mem0", "sync"), ("mem0", "async"), ("agentbase", "sync"), ("agentbase", "async")],
    ids=["mem0-sync", "mem0-async", "agentbase-sync", "agentbase-async"],
)
def memory(request: pytest.FixtureRequest, tmp_path: Any, minilm: Any) -> Iterator[Harness]:
    """An EMPTY memory, real mem0 or ours, sync or async, both with the real MiniLM."""
    impl, mode = request.param
    if impl == "mem0":
        target = make_real_mem0(request.getfixturevalue("mem0_without_spacy"), minilm, mode=mode, tmp_path=tmp_path)
        yield Harness(target, impl, mode)
        target.close()
        return
    db = AgentBase(request.getfixturevalue("db_location"), embedder=minilm, ner="regex")
    target = Mem0Adapter(db) if mode == "sync" else AsyncMem0Adapter(db)
    yield Harness(target, impl, mode)
    db.sync.close()


@pytest.fixture
def fake_llm() -> type[FakeLLM]:
    """The fake LLM class, for tests that enable the optional LLM hook."""
    return FakeLLM


@pytest.fixture
def m0(db: AgentBase) -> Mem0Adapter:
    """Our sync adapter over the fast hash-embedder ``db``."""
    return Mem0Adapter(db)


@pytest.fixture
def am0(db: AgentBase) -> AsyncMem0Adapter:
    """Our async adapter over the fast hash-embedder ``db``."""
    return AsyncMem0Adapter(db)
