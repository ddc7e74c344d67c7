"""deepagents adapter: a backend (``BackendProtocol``) whose files are agentbase memories.

    from deepagents import create_deep_agent
    from deepagents.backends import CompositeBackend, StateBackend
    from agentbase_adapters.deepagents import AgentBaseBackend

    backend = CompositeBackend(default=StateBackend(),
                               routes={"/memories/": AgentBaseBackend("memory.db", user_id="alice")})
    agent = create_deep_agent(model=..., backend=backend)

Every file operation of the current protocol (``ls``, ``read``, ``write``, ``edit``, ``delete``,
``grep``, ``glob``, ``upload_files``, ``download_files``; their ``a``-twins run them in a worker
thread, as the protocol's defaults do) answers as deepagents' own ``StateBackend`` answers: the
file data, the error strings, the read windows, the edit rules, the grep and glob matching and
ordering all come from deepagents' own helpers (``deepagents.backends.utils``).

Each file is one kernel entry (``agentbase_adapters._files``): a path maps to a stable entry id
(so each write is an update in the entry's history), the text is the file (text files; binary
uploads are kept base64 in metadata), the scope is the backend's (``user_id=`` ... or a
``scope=lambda runtime: {...}`` read per call, like ``StoreBackend``'s namespace factory). The Mem0
swap, the MCP server and the dashboard find an agent's memory files in that scope. A literal
``grep`` asks the store for the files holding the pattern (``Kernel.list(text_contains=)``), so a
route of 10k files is not read to find the few that match.

A store that is down never raises into the agent: every call goes through a circuit breaker and
a failure comes back as the operation's ``error`` (deepagents' tool convention), so the model sees
"memory store unavailable" and the turn goes on.

Install with ``pip install 'agentbase-memory[deepagents]'``.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from agentbase_adapters._require import require

require("deepagents.backends.protocol", extra="deepagents")

from deepagents.backends.protocol import (  # noqa: E402
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileData,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GlobResult,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from deepagents.backends.utils import (  # noqa: E402
    InvalidGlobPatternError,
    _get_backend_read_file_type,
    _glob_search_files,
    create_file_data,
    file_data_to_string,
    grep_matches_from_files,
    perform_string_replacement,
    slice_read_response,
    update_file_data,
)
from langgraph.runtime import get_runtime  # noqa: E402

from agentbase_adapters._failopen import CALLER_ERRORS, FailOpen, StoreUnavailable  # noqa: E402
from agentbase_adapters._files import MemoryFiles  # noqa: E402
from agentbase_adapters._harness import open_store  # noqa: E402
from agentbase_kernel import AgentBase, Entry, Kernel  # noqa: E402

__all__ = ["AgentBaseBackend", "ScopeFactory"]

ScopeFactory = Callable[[Any], Mapping[str, str]]
"""The LangGraph ``Runtime`` (``None`` outside a graph) -> kernel scope keywords, e.g.
``lambda rt: {"user_id": rt.context.user_id}``."""

_STORE = "deepagents"
_R = TypeVar("_R")


def _file_data(entry: Entry) -> FileData:
    meta = entry.metadata
    data = FileData(content=MemoryFiles.content(entry), encoding=str(meta.get("da_encoding", "utf-8")))
    if isinstance(meta.get("da_created_at"), str):
        data["created_at"] = meta["da_created_at"]
    if isinstance(meta.get("da_modified_at"), str):
        data["modified_at"] = meta["da_modified_at"]
    return data


_OPTIONAL_STR = (str, type(None))
_OPTIONAL_INT = (int, type(None))


def _wrong(**checks: tuple[Any, type | tuple[type, ...]]) -> str | None:
    """deepagents' error text for the first argument of the wrong type, or ``None``: a caller's mistake is
    the operation's ``error`` (the harness's convention), never a store failure the breaker counts."""
    for name, (value, kind) in checks.items():
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            kinds = kind if isinstance(kind, tuple) else (kind,)
            wanted = " or ".join("None" if k is type(None) else k.__name__ for k in kinds)
            return f"Error: {name} must be {wanted}, not {type(value).__name__}"
    return None


def _root(path: str | None) -> str:
    """The path prefix of every file a grep or glob under ``path`` can see (deepagents' own matcher
    then applies the exact rule: the file itself, or a directory's files)."""
    root = path or "/"
    return "/" + root.strip("/") if root.strip("/") else "/"


def _size(data: FileData) -> int:
    return len(file_data_to_string(data).encode("utf-8"))


class AgentBaseBackend(BackendProtocol):
    """deepagents files in an agentbase database, in one scope.

    Args:
        db: An open ``AgentBase`` (left open by ``close()``), a path or PostgreSQL URL this backend
            opens, or ``None`` for ``$AGENTBASE_PATH`` / ./agentbase.db.
        user_id, agent_id, project_id: The kernel scope every file is kept in.
        scope: Instead of fixed ids, a callable given the LangGraph ``Runtime`` of the current call
            (``None`` outside a graph) that returns the scope keywords.
        guard: The circuit breaker every store call goes through (default: 5 failures -> 30 s pause ->
            one trial); ``guard.stats`` counts what was sent and held back.
        defer_embedding: Writes return once stored and FTS-searchable; vectors follow in the background.
        **options: ``AgentBase`` options when ``db`` is a path.
    """

    def __init__(self, db: AgentBase | str | os.PathLike[str] | None = None, *, user_id: str | None = None,
                 agent_id: str | None = None, project_id: str | None = None, scope: ScopeFactory | None = None,
                 guard: FailOpen | None = None, defer_embedding: bool | None = True, **options: Any) -> None:
        fixed = {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id), ("project_id", project_id))
                 if v is not None}
        if scope is not None and fixed:
            raise TypeError("pass either scope= or user_id/agent_id/project_id, not both")
        self.db, self._owns_db = open_store(db, source=_STORE, options=options)
        self.files = MemoryFiles(self.db, store=_STORE, defer_embedding=defer_embedding)
        self._fixed = fixed
        self._factory = scope
        self._owns_guard = guard is None
        self.guard = guard if guard is not None else FailOpen(name=_STORE)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.db!r}, scope={self._factory or self._fixed!r})"

    @property
    def _kernel(self) -> Kernel:
        return self.db.sync

    def _scope(self) -> dict[str, Any]:
        if self._factory is None:
            return dict(self._fixed)
        try:
            runtime = get_runtime()
        except (RuntimeError, KeyError):
            runtime = None
        return dict(self._factory(runtime))

    def _call(self, fn: Callable[..., _R], *args: Any, failed: Callable[[str], _R]) -> _R:
        """``fn(*args)`` through the breaker; a store failure or a refused argument becomes ``failed(message)``."""
        try:
            return self.guard.call(fn, *args)
        except StoreUnavailable as exc:
            return failed(f"Error: memory store unavailable ({exc}); the file operation was not done")
        except CALLER_ERRORS as exc:
            return failed(f"Error: {exc}")

    # -- reading -------------------------------------------------------------------------------
    def _entries(self, scope: dict[str, Any], prefix: str, contains: str | None = None) -> dict[str, FileData]:
        """Path -> file data of every file whose path starts with ``prefix`` (creation order, as state
        keeps its dict); with ``contains``, only those holding it (the store decides)."""
        return {e.metadata["file_path"]: _file_data(e)
                for e in self.files.listed(scope, prefix=prefix, contains=contains)}

    def ls(self, path: str) -> LsResult:
        """The files and directories directly in ``path`` (directories end with ``/``)."""
        if (error := _wrong(path=(path, str))) is not None:
            return LsResult(error=error)
        return self._call(self._ls, self._scope(), path, failed=lambda m: LsResult(error=m))

    def _ls(self, scope: dict[str, Any], path: str) -> LsResult:
        prefix = path if path.endswith("/") else path + "/"
        infos: list[FileInfo] = []
        subdirs: set[str] = set()
        for key, data in self._entries(scope, prefix).items():
            relative = key[len(prefix):]
            if "/" in relative:
                subdirs.add(prefix + relative.split("/")[0] + "/")
                continue
            infos.append({"path": key, "is_dir": False, "size": _size(data), "modified_at": data.get("modified_at", "")})
        infos.extend(FileInfo(path=d, is_dir=True, size=0, modified_at="") for d in sorted(subdirs))
        infos.sort(key=lambda x: x.get("path", ""))
        return LsResult(entries=infos)

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        """The requested line window of a file (raw; deepagents adds line numbers)."""
        if (error := _wrong(file_path=(file_path, str), offset=(offset, int), limit=(limit, int))) is not None:
            return ReadResult(error=error)
        return self._call(self._read, self._scope(), file_path, offset, limit, failed=lambda m: ReadResult(error=m))

    def _read(self, scope: dict[str, Any], file_path: str, offset: int, limit: int) -> ReadResult:
        entry = self.files.get(file_path, scope)
        if entry is None:
            return ReadResult(error=f"File '{file_path}' not found")
        data = _file_data(entry)
        if _get_backend_read_file_type(file_path) != "text":
            return ReadResult(file_data=data)
        return slice_read_response(data, offset, limit)

    def grep(self, pattern: str, path: str | None = None, glob: str | None = None, *,
             max_count: int | None = None) -> GrepResult:
        """Lines holding the literal ``pattern``, in files under ``path`` whose name matches ``glob``."""
        if (error := _wrong(pattern=(pattern, str), path=(path, _OPTIONAL_STR), glob=(glob, _OPTIONAL_STR),
                              max_count=(max_count, _OPTIONAL_INT))) is not None:
            return GrepResult(error=error)
        return self._call(self._grep, self._scope(), pattern, path, glob, max_count, failed=lambda m: GrepResult(error=m))

    def _grep(self, scope: dict[str, Any], pattern: str, path: str | None, glob: str | None,
              max_count: int | None) -> GrepResult:
        # the store narrows to files under the path holding the pattern; deepagents' own matcher decides
        files = self._entries(scope, _root(path), contains=pattern or None)
        return grep_matches_from_files(files, pattern, path if path is not None else "/", glob, max_count=max_count)

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        """Files whose path matches ``pattern`` under ``path`` (newest first), as deepagents matches globs."""
        if (error := _wrong(pattern=(pattern, str), path=(path, _OPTIONAL_STR))) is not None:
            return GlobResult(error=error)
        return self._call(self._glob, self._scope(), pattern, path, failed=lambda m: GlobResult(error=m))

    def _glob(self, scope: dict[str, Any], pattern: str, path: str | None) -> GlobResult:
        files = self._entries(scope, _root(path))
        try:
            result = _glob_search_files(files, pattern, path)
        except InvalidGlobPatternError as exc:
            return GlobResult(error=str(exc))
        if result == "No files found":
            return GlobResult(matches=[])
        infos: list[FileInfo] = []
        for found in result.split("\n"):
            data = files.get(found)
            infos.append({"path": found, "is_dir": False, "size": _size(data) if data else 0,
                          "modified_at": data.get("modified_at", "") if data else ""})
        return GlobResult(matches=infos)

    # -- writing -------------------------------------------------------------------------------
    def _put(self, path: str, data: FileData, existing: Entry | None, scope: dict[str, Any]) -> None:
        meta = {"da_encoding": data["encoding"], "da_created_at": data.get("created_at"),
                "da_modified_at": data.get("modified_at")}
        text = None
        if data["encoding"] == "base64":
            size = len(base64.b64decode(data["content"]))
            text = f"{path} (binary file, {size} bytes)"
        self.files.write(path, data["content"], scope, metadata=meta, existing=existing, text=text)

    def write(self, file_path: str, content: str) -> WriteResult:
        """Create or overwrite a text file."""
        if (error := _wrong(file_path=(file_path, str), content=(content, str))) is not None:
            return WriteResult(error=error)
        return self._call(self._write, self._scope(), file_path, content, failed=lambda m: WriteResult(error=m))

    def _write(self, scope: dict[str, Any], file_path: str, content: str) -> WriteResult:
        with self._kernel.transaction():
            existing = self.files.get(file_path, scope)
            data = update_file_data(_file_data(existing), content) if existing is not None else create_file_data(content)
            data["encoding"] = "utf-8"
            self._put(file_path, data, existing, scope)
        return WriteResult(path=file_path)

    def edit(self, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> EditResult:
        """Replace ``old_string`` (unique unless ``replace_all``) by ``new_string``."""
        if (error := _wrong(file_path=(file_path, str), old_string=(old_string, str), new_string=(new_string, str),
                              replace_all=(replace_all, bool))) is not None:
            return EditResult(error=error)
        return self._call(self._edit, self._scope(), file_path, old_string, new_string, replace_all,
                          failed=lambda m: EditResult(error=m))

    def _edit(self, scope: dict[str, Any], file_path: str, old_string: str, new_string: str,
              replace_all: bool) -> EditResult:
        with self._kernel.transaction():
            existing = self.files.get(file_path, scope)
            if existing is None:
                return EditResult(error=f"Error: File '{file_path}' not found")
            data = _file_data(existing)
            if data.get("encoding") == "base64":
                return EditResult(error="Error: Cannot edit binary files with text replacements.")
            result = perform_string_replacement(file_data_to_string(data), old_string, new_string, replace_all)
            if isinstance(result, str):
                return EditResult(error=result)
            content, occurrences = result
            self._put(file_path, update_file_data(data, content), existing, scope)
        return EditResult(path=file_path, occurrences=int(occurrences))

    def delete(self, file_path: str) -> DeleteResult:
        """Delete a file, or a directory and everything under it."""
        if (error := _wrong(file_path=(file_path, str))) is not None:
            return DeleteResult(error=error)
        return self._call(self._delete, self._scope(), file_path, failed=lambda m: DeleteResult(error=m))

    def _delete(self, scope: dict[str, Any], file_path: str) -> DeleteResult:
        base = file_path.rstrip("/")
        with self._kernel.transaction():
            doomed = [e for e in self.files.listed(scope, prefix=base)
                      if e.metadata["file_path"] == base or e.metadata["file_path"].startswith(base + "/")]
            if not doomed:
                return DeleteResult(error=f"Error: File '{file_path}' not found")
            for entry in doomed:
                self.files.delete(entry)
        return DeleteResult(path=file_path)

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        """Store each ``(path, bytes)``: UTF-8 as text, anything else base64 (not indexed as text); a pair
        that is not ``(str, bytes)`` gets ``"invalid_path"``."""
        def ok(pair: Any) -> bool:
            return isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) and isinstance(pair[1], bytes)

        valid = [pair for pair in files if ok(pair)]
        stored = iter(self._call(self._upload, self._scope(), valid,
                                 failed=lambda m: [FileUploadResponse(path=p, error=m) for p, _ in valid])
                      if valid else [])
        return [next(stored) if ok(pair) else FileUploadResponse(path=str(pair[0] if isinstance(pair, tuple) and pair
                                                                           else pair), error="invalid_path")
                for pair in files]

    def _upload(self, scope: dict[str, Any], files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        with self._kernel.transaction():
            for path, content in files:
                try:
                    text, encoding = content.decode("utf-8"), "utf-8"
                except UnicodeDecodeError:
                    text, encoding = base64.b64encode(content).decode("ascii"), "base64"
                existing = self.files.get(path, scope)
                created = _file_data(existing).get("created_at") if existing is not None else None
                self._put(path, create_file_data(text, created_at=created, encoding=encoding), existing, scope)
        return [FileUploadResponse(path=path, error=None) for path, _ in files]

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        """Each file's bytes, or ``error="file_not_found"`` (``"invalid_path"`` for a path that is not a str)."""
        valid = [path for path in paths if isinstance(path, str)]
        found = iter(self._call(self._download, self._scope(), valid,
                                failed=lambda m: [FileDownloadResponse(path=p, content=None, error=m) for p in valid])
                     if valid else [])
        return [next(found) if isinstance(path, str) else
                FileDownloadResponse(path=str(path), content=None, error="invalid_path") for path in paths]

    def _download(self, scope: dict[str, Any], paths: list[str]) -> list[FileDownloadResponse]:
        out: list[FileDownloadResponse] = []
        for path in paths:
            entry = self.files.get(path, scope)
            if entry is None:
                out.append(FileDownloadResponse(path=path, content=None, error="file_not_found"))
                continue
            data = _file_data(entry)
            text = file_data_to_string(data)
            raw = base64.standard_b64decode(text) if data.get("encoding") == "base64" else text.encode("utf-8")
            out.append(FileDownloadResponse(path=path, content=raw, error=None))
        return out

    # -- lifecycle -----------------------------------------------------------------------------
    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every file written so far is vector-searchable too (it is FTS-searchable at once)."""
        return self._kernel.wait_embedded(timeout)

    def close(self) -> None:
        """Wait for pending vectors; close the database if this backend opened it. Safe twice."""
        if self._owns_guard:
            self.guard.close()
        if self._owns_db:
            self._kernel.close()
        elif not self._kernel.closed:
            self._kernel.wait_embedded()
