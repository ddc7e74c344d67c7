"""compat_matrix.md is the assembly of docs/compat/*.md; it must not drift."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_compat_matrix_is_up_to_date():
    spec = importlib.util.spec_from_file_location("compat_matrix", ROOT / "tools" / "compat_matrix.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "compat_matrix.md").read_text() == module.build(), "run: python tools/compat_matrix.py"


def test_every_adapter_has_a_section():
    text = (ROOT / "compat_matrix.md").read_text().lower()
    for name in ("mem0", "minimal", "langchain", "langgraph", "llamaindex", "openai", "hermes", "claude agent sdk"):
        assert name in text
