"""The files a tool call is about, read from its input: what memories are targeted by and stored under.

Claude Code's own tools name files in ``file_path`` (Read, Write, Edit, MultiEdit), ``notebook_path``
(NotebookEdit) and ``path`` (Glob, Grep, LS); MCP tools follow the same habit (``*_path``, ``paths``).
A path under the session's working directory is kept relative to it, so the same file has the same
name whichever absolute checkout it is opened from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["tool_entities"]

_LIST_KEYS = ("paths", "file_paths")
_MAX_ENTITIES = 16


def _is_path_key(key: str) -> bool:
    return key in ("path", "file_path", "notebook_path") or key.endswith("_path")


def _name(path: str, cwd: str | None) -> str | None:
    path = path.strip()
    if not path or "\n" in path or len(path) > 1024:
        return None
    if cwd and os.path.isabs(path):
        try:
            relative = os.path.relpath(path, cwd)
        except ValueError:  # another drive on Windows
            return os.path.normpath(path)
        if not relative.startswith(".."):
            return relative
    return os.path.normpath(path)


def tool_entities(tool_input: Any, cwd: str | None = None) -> list[str]:
    """The file names in ``tool_input`` (a tool call's arguments), in order, without duplicates."""
    if not isinstance(tool_input, Mapping):
        return []
    found: list[str] = []
    for key, value in tool_input.items():
        if not isinstance(key, str):
            continue
        values = value if key in _LIST_KEYS and isinstance(value, list) else [value] if _is_path_key(key) else []
        for item in values:
            name = _name(item, cwd) if isinstance(item, str) else None
            if name and name != "." and name not in found:
                found.append(name)
    return found[:_MAX_ENTITIES]
