"""examples/llamaindex_chat.py runs offline and does what it prints (fast embedder; the full run is in the examples suite)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).parents[3] / "examples" / "llamaindex_chat.py"


def test_example_runs(tmp_path: Path, hash_embedder: Any, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("llamaindex_chat_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    module.main(tmp_path / "memory.db", embedder=hash_embedder)

    out = capsys.readouterr().out
    assert "ChatMemoryBuffer: 4 messages in session 'alice-trip'" in out
    assert "Memory: 1 active, 2 archived in session 'alice-health'" in out
    assert "allergic to peanuts" in out
    assert "reopened: first message was \"I'm planning a trip to Lisbon in May and I love seafood.\"" in out
