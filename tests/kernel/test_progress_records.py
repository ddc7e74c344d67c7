"""Bulk calls report progress in records, and the embedding after an import as a phase of its own."""

from __future__ import annotations

from pathlib import Path

from agentbase_kernel import Kernel
from tests.conftest import HashEmbedder


def _dump(tmp_path: Path, n: int, *, vectors: bool) -> Path:
    with Kernel(tmp_path / "src.db", embedder=HashEmbedder(), ner="regex") as k:
        k.add_memories([{"text": f"memory number {i} about topic {i % 7}", "user_id": "u"} for i in range(n)])
        with open(tmp_path / "dump.jsonl", "w", encoding="utf-8") as out:
            k.export(out, vectors=vectors)
    return tmp_path / "dump.jsonl"


def test_import_counts_records_not_bytes(tmp_path):
    dump = _dump(tmp_path, 300, vectors=True)
    lines = sum(1 for line in dump.read_text().splitlines() if line.strip())
    calls: list[tuple[int, int]] = []
    with Kernel(tmp_path / "dst.db", embedder=HashEmbedder(), ner="regex") as k:
        summary = k.import_(dump, progress=lambda done, total: calls.append((done, total)))
    assert len(calls) >= 5  # steps along the way, not one jump to 100%
    assert all(total == lines for _, total in calls[:-1])  # the file's records, counted up front
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert calls[-1] == (summary["records"], summary["records"])
    assert max(d for d, _ in calls) <= lines


def test_the_embedding_is_its_own_phase(tmp_path):
    dump = _dump(tmp_path, 150, vectors=False)  # no vectors in the file: every text is embedded here
    records: list[int] = []
    embedded: list[tuple[int, int]] = []
    with Kernel(tmp_path / "dst.db", embedder=HashEmbedder(), ner="regex") as k:
        summary = k.import_(dump, progress=lambda d, t: records.append(d),
                            embed_progress=lambda d, t: embedded.append((d, t)))
    assert summary["reembedded"] > 0
    assert embedded[-1] == (summary["reembedded"], summary["reembedded"])
    assert len(embedded) >= 2 and records  # batch by batch, after the records


def test_an_import_with_usable_vectors_has_no_embedding_phase(tmp_path):
    dump = _dump(tmp_path, 20, vectors=True)
    embedded: list[tuple[int, int]] = []
    with Kernel(tmp_path / "dst.db", embedder=HashEmbedder(), ner="regex") as k:
        k.import_(dump, embed_progress=lambda d, t: embedded.append((d, t)))
    assert embedded == []


def test_embedding_missing_texts_reports_each_batch(tmp_path):
    """What ``rebuild`` and the import's embedding phase report: texts done of the texts missing."""
    with Kernel(tmp_path / "k.db", embedder=HashEmbedder(), ner="regex") as k:
        items = [(f"hash-{i:04d}", f"a text to embed number {i}") for i in range(150)]
        calls: list[tuple[int, int]] = []
        assert k.ingestor.embed_missing(items, batch_size=32, progress=lambda d, t: calls.append((d, t))) == 150
    assert calls == [(min(n, 150), 150) for n in range(32, 150 + 32, 32)]


def test_rebuild_passes_its_progress_on(tmp_path):
    dump = _dump(tmp_path, 40, vectors=False)
    with Kernel(tmp_path / "dst.db", embedder=None, ner="regex") as k:  # imported without an embedder
        k.import_(dump)
    calls: list[tuple[int, int]] = []
    with Kernel(tmp_path / "dst.db", embedder=HashEmbedder(), ner="regex") as k:
        # the background embedder resumes the backlog on open and may take some of it first
        report = k.rebuild(progress=lambda d, t: calls.append((d, t)))
    assert report["texts_without_vector"] == 0
    assert not calls or calls[-1][0] == calls[-1][1]
