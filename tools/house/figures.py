"""The code figures of docs/house.md for one tree: store/ lines per part, Store members per role,
the longest functions.

    python tools/house/figures.py TREE        # TREE: a checkout (a `git worktree add --detach REV`)

Repeated code is the ``duplicates`` tool's: ``duplicates --repo TREE/agentbase_kernel --most 200``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def _code(path: Path) -> list[str]:
    return [s for s in (line.strip() for line in path.read_text().splitlines()) if s and not s.startswith("#")]


def store_lines(root: Path) -> None:
    store = root / "agentbase_kernel" / "store"
    parts: dict[str, list[int]] = {}
    for path in sorted(store.rglob("*.py")):
        rel = path.relative_to(store)
        part = f"store/{rel.parts[0]}/" if len(rel.parts) > 1 else "store/*.py"
        files, lines, code = parts.setdefault(part, [0, 0, 0])
        parts[part] = [files + 1, lines + len(path.read_text().splitlines()), code + len(_code(path))]
    for part, (files, lines, code) in parts.items():
        print(f"{part:18s} files {files:3d}  lines {lines:5d}  code {code:5d}")
    if (store / "sqlite").is_dir() and (store / "postgres").is_dir():
        sqlite = [line for p in (store / "sqlite").rglob("*.py") for line in _code(p)]
        postgres = {line.replace("%s", "?") for p in (store / "postgres").rglob("*.py") for line in _code(p)}
        print(f"sqlite code lines also in postgres (%s read as ?): {sum(line in postgres for line in sqlite)} "
              f"of {len(sqlite)}")


def protocol_members(root: Path) -> None:
    tree = ast.parse((root / "agentbase_kernel" / "store" / "protocol.py").read_text())
    own: dict[str, set[str]] = {}
    bases: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(getattr(b, "id", "") == "Protocol" for b in node.bases):
            own[node.name] = {m.name for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))} | {
                m.target.id for m in node.body if isinstance(m, ast.AnnAssign) and isinstance(m.target, ast.Name)}
            bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name) and b.id != "Protocol"]

    def members(name: str) -> set[str]:
        return own[name].union(*(members(b) for b in bases[name] if b in own))

    for name in own:
        print(f"{name:18s} own {len(own[name]):3d}  with inherited {len(members(name)):3d}")


def longest_functions(root: Path, n: int = 10) -> None:
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST, path: Path, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([d.lineno for d in child.decorator_list] + [child.lineno])
                found.append((int(child.end_lineno or child.lineno) - start + 1,
                              f"{path.relative_to(root)}:{child.lineno} {prefix}{child.name}"))
                walk(child, path, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, path, f"{prefix}{child.name}.")

    for path in sorted((root / "agentbase_kernel").rglob("*.py")):
        walk(ast.parse(path.read_text()), path, "")
    for lines, name in sorted(found, reverse=True)[:n]:
        print(f"{lines:5d}  {name}")


if __name__ == "__main__":
    where = Path(sys.argv[1]).resolve()
    for title, show in (("store/ lines", store_lines), ("Store protocol members", protocol_members),
                        ("longest functions", longest_functions)):
        print(f"== {title}")
        show(where)
