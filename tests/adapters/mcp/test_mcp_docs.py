"""docs/mcp.md's tool table is the server's own ``tools/list``; the page says nothing the server contradicts."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

pytest.importorskip("mcp")

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "mcp.md"


def _generator():
    spec = importlib.util.spec_from_file_location("mcp_tools_table", ROOT / "tools" / "mcp_tools_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_tool_table_is_the_servers_tool_list():
    gen = _generator()
    tools = await gen.listed_tools()
    doc = DOC.read_text()
    assert gen.render(doc, gen.build_table(tools)) == doc, "run: python tools/mcp_tools_table.py"
    table = doc.split(gen.START)[1].split(gen.END)[0]
    assert re.findall(r"^\| `(\w+)` \|", table, re.M) == [t.name for t in tools]


async def test_every_served_tool_is_documented_and_none_is_called_unserved():
    tools = {t.name for t in await _generator().listed_tools()}
    doc = DOC.read_text()
    for name in tools:
        assert not re.search(rf"not served:?[^.]*`{name}`", doc, re.I), f"docs/mcp.md says {name} is not served"
    mentioned = set(re.findall(r"`([a-z]+_[a-z_]+)`", doc))
    tool_like = {m for m in mentioned if m.split("_")[0] in {"add", "get", "list", "search", "update", "delete",
                                                             "export", "memory", "entity"}}
    assert tool_like - tools <= {"memory_id"}  # an argument, not a tool
    assert tools - mentioned == set()
