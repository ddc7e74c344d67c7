"""Run one script of file operations on any deepagents backend, and on ``StateBackend`` inside a graph.

Outcomes are plain data (dataclasses as dicts), with timestamps replaced by a marker, so the results
of two backends compare with ``==``. Glob's newest-first order still depends on the write times,
which both backends see in the same sequence.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from deepagents.backends import StateBackend
from deepagents.middleware.filesystem import FilesystemState
from langgraph.graph import END, START, StateGraph

Op = tuple[Any, ...]


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, dict):
        return {k: ("<ts>" if k in ("created_at", "modified_at") and v else _plain(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def apply(backend: Any, op: Op) -> Any:
    name, *args = op
    if name == "grep":
        pattern, path, glob, max_count = args
        return _plain(backend.grep(pattern, path, glob, max_count=max_count))
    if name == "upload":
        return _plain(backend.upload_files(args[0]))
    if name == "download":
        return _plain(backend.download_files(args[0]))
    return _plain(getattr(backend, name)(*args))


def run(backend: Any, script: list[Op]) -> list[Any]:
    return [apply(backend, op) for op in script]


def run_in_state(script: list[Op]) -> list[Any]:
    """The script on deepagents' ``StateBackend``, in one graph node (state writes are read back fresh)."""
    results: list[Any] = []

    def node(state: FilesystemState) -> dict[str, Any]:
        results.extend(run(StateBackend(), script))
        return {}

    graph = StateGraph(FilesystemState)
    graph.add_node("ops", node)
    graph.add_edge(START, "ops")
    graph.add_edge("ops", END)
    graph.compile().invoke({"messages": []})
    return results


PATHS = ["/notes.md", "/todo.txt", "/projects/alpha/plan.md", "/projects/alpha/log.txt", "/projects/beta.md",
         "/.hidden/cfg.yml", "/img/logo.png", "/deep/a/b/c.py"]
TEXTS = ["TODO: call Alice\nbuy milk\n", "alpha beta\nTODO later\nTODO again", "", "   \n", "single line",
         "x\r\ny\r\nTODO crlf", "100% done_now", "unicode: café TODO ✓\n", "line\n" * 30]
PATTERNS = ["TODO", "", "alpha", "100%", "_now", "café", "line", "missing", "\n", "TODO again"]
GLOBS = [None, "*.md", "**/*.md", "/*.md", "*.{md,txt}", "projects/**", "*.yml", "../x", "[a-c]*.py"]
DIRS = [None, "/", "/projects", "/projects/", "/projects/alpha", "/notes.md", "/nope", "projects"]


def random_script(seed: int, steps: int) -> list[Op]:
    rng = random.Random(seed)
    script: list[Op] = []
    for _ in range(steps):
        kind = rng.choice(["write", "write", "edit", "read", "ls", "grep", "grep", "glob", "delete", "upload",
                           "download"])
        path = rng.choice(PATHS)
        if kind == "write":
            script.append(("write", path, rng.choice(TEXTS)))
        elif kind == "edit":
            script.append(("edit", path, rng.choice(["TODO", "milk", "line\n", "", "zzz"]), "DONE",
                           rng.random() < 0.5))
        elif kind == "read":
            script.append(("read", path, rng.choice([0, 1, 2, -3, 50]), rng.choice([1, 2, 2000, 0, -1])))
        elif kind == "ls":
            script.append(("ls", rng.choice(["/", "/projects", "/projects/", "/nope", "/deep/a"])))
        elif kind == "grep":
            script.append(("grep", rng.choice(PATTERNS), rng.choice(DIRS), rng.choice(GLOBS),
                           rng.choice([None, None, 1, 3])))
        elif kind == "glob":
            script.append(("glob", rng.choice(GLOBS[1:]), rng.choice(DIRS)))
        elif kind == "delete":
            script.append(("delete", rng.choice([*PATHS, "/projects", "/projects/", "/nope"])))
        elif kind == "upload":
            script.append(("upload", [(path, rng.choice([b"plain text TODO\n", b"\x89PNG\r\n\x1a\n\x00\xff",
                                                         "ünï TODO".encode()]))]))
        else:
            script.append(("download", [path, rng.choice(PATHS)]))
    return script
