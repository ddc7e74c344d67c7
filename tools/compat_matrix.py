"""Assemble compat_matrix.md from the per-adapter tables in docs/compat/ (run: python tools/compat_matrix.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = ["minimal", "mem0", "langchain", "langgraph", "llamaindex", "openai", "hermes", "claude", "deepagents",
         "crewai", "pydantic_ai"]
HEADER = """# Compatibility matrix

Each adapter's methods against the real framework interface (mem0ai 2.2.1, langchain-core 1.8.3 /
langchain-classic 1.0.8, langgraph 1.2.24, llama-index-core 0.14.25, openai 3.57.0, hermes-agent 0.19.0,
claude-agent-sdk 0.2.189, deepagents 0.7.32, crewai 1.15.30, pydantic-ai-harness 0.62.0): **supported**,
**differs** (how), or **missing**, with the test that proves it. Generated from `docs/compat/*.md`
by `python tools/compat_matrix.py`; `tests/test_compat_matrix.py` fails when it is out of date.

"""


def build() -> str:
    parts = [HEADER]
    names = ORDER + sorted(p.stem for p in (ROOT / "docs" / "compat").glob("*.md") if p.stem not in ORDER)
    for name in names:
        path = ROOT / "docs" / "compat" / f"{name}.md"
        if path.exists():
            text = path.read_text().strip()
            # demote each file's headings one level under the matrix title
            lines = [("#" + line) if line.startswith("#") else line for line in text.splitlines()]
            parts.append("\n".join(lines) + "\n\n")
    return "".join(parts).rstrip() + "\n"


if __name__ == "__main__":
    (ROOT / "compat_matrix.md").write_text(build())
    print("wrote compat_matrix.md")
