"""A Markdown mirror of the database: plain files a person can read and edit (docs/markdown.md).

    DIR/
      .agentbase-mirror.json          what was exported: {path: {id, kind, sha256}} (the sync's base)
      user=alice/<id>.md              one file per live memory, one folder per scope (``_global``)
      user=alice/sessions/<id>.md     one file per session: its messages in order

A memory file is front matter (one ``key: value`` per line, each value JSON, which YAML reads too)
and the text::

    ---
    id: "0b5c..."
    type: "memory"
    scope: {"user_id": "alice"}
    category: "preference"
    tags: ["drink"]
    created: "2026-12-05T10:00:00.000000+00:00"
    updated: "2026-12-05T10:00:00.000000+00:00"
    trust: 1.0
    confidence: 1.0
    ---
    I like green tea

``sync`` compares each file and each database row with what was exported: a file changed alone
is written back through ingest (text, category, tags, confidence; ``source`` and the actor
``human_edited``, audited); a new file becomes a memory; a deleted file deletes its memory; a
change on both sides is a conflict - reported, nothing overwritten - and the files are then
rewritten as an export would write them. ``rebuild`` writes the files into a database through the
import path, keeping ids and times.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from . import arguments as check
from .errors import EntryNotFound, InvalidArgument
from .records import Entry, Message, Scope, Session
from .store.base import iso

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["HUMAN_EDITED", "MANIFEST", "export_markdown", "read_mirror", "rebuild_from_markdown", "sync_markdown"]

MANIFEST = ".agentbase-mirror.json"
HUMAN_EDITED = "human_edited"
_FIELDS = ("user_id", "agent_id", "project_id", "session_id")
_PREFIX = {"user_id": "user", "agent_id": "agent", "project_id": "project", "session_id": "session"}
_GLOBAL = "_global"
_EDITABLE = ("text", "category", "tags", "confidence")


# -- rendering ------------------------------------------------------------------------------------
def validate_text(text: str) -> str:
    """The text as the API accepts it (``InvalidArgument`` for an empty or invalid one)."""
    return str(check.memory_item(text)["text"])


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def scope_folder(scope: Scope) -> str:
    """``user=alice,agent=bot``: the folder of a scope's memories (``_global`` for none)."""
    parts = [f"{_PREFIX[f]}={quote(v, safe='')}" for f, v in scope.as_dict().items()]
    return ",".join(parts) or _GLOBAL


def folder_scope(folder: str) -> Scope:
    """The scope a folder name stands for (``scope_folder``'s inverse)."""
    if folder in (_GLOBAL, "", "."):
        return Scope()
    names = {v: k for k, v in _PREFIX.items()}
    ids: dict[str, str] = {}
    for part in folder.split(","):
        key, _, value = part.partition("=")
        if key not in names or not value:
            raise InvalidArgument(f"folder {folder!r} does not name a scope (user=..,agent=..,project=..,session=..)")
        ids[names[key]] = unquote(value)
    return check.scope_of(ids.get("user_id"), ids.get("agent_id"), ids.get("project_id"), ids.get("session_id"))


def _user_tags(entry: Entry) -> list[str]:
    return [t for t in entry.tags if not t.startswith("ner_")]  # entity tags are derived from the text


def render_entry(entry: Entry) -> str:
    lines = ["---", f"id: {_j(entry.id)}", f"type: {_j(entry.context_type.value)}",
             f"scope: {_j(entry.scope.as_dict())}", f"category: {_j(entry.category)}",
             f"tags: {_j(_user_tags(entry))}", f"created: {_j(iso(entry.created_at))}",
             f"updated: {_j(iso(entry.updated_at))}", f"trust: {_j(entry.trust)}",
             f"confidence: {_j(entry.confidence)}"]
    if entry.metadata:
        lines.append(f"metadata: {_j(entry.metadata)}")
    return "\n".join([*lines, "---", entry.l2_full]) + "\n"


def render_session(session: Session, messages: list[Message]) -> str:
    lines = ["---", f"id: {_j(session.id)}", "type: \"session\"", f"scope: {_j(session.scope.as_dict())}",
             f"created: {_j(iso(session.created_at))}", f"updated: {_j(iso(session.updated_at))}"]
    if session.metadata:
        lines.append(f"metadata: {_j(session.metadata)}")
    lines.append("---")
    for m in messages:
        meta = {"id": m.id, "seq": m.seq, "role": m.role, "name": m.name, "created": iso(m.created_at),
                "status": m.status, "entry_id": m.entry_id, "metadata": m.metadata or None}
        who = f"{m.role} ({m.name})" if m.name else m.role
        lines += ["", f"<!-- message {_j(meta)} -->", f"### {who} · {iso(m.created_at)}", "", m.content]
    return "\n".join(lines) + "\n"


# -- parsing --------------------------------------------------------------------------------------
def parse_file(text: str, where: str) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of a mirror file; a file without front matter is all body."""
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return {}, text[:-1] if text.endswith("\n") else text
    head, sep, body = text[4:].partition("\n---\n")
    if not sep:
        if text[4:].endswith("\n---") or text[4:] == "---":
            head, body = text[4:].rsplit("---", 1)[0], ""
        else:
            raise InvalidArgument(f"{where}: the front matter opened with '---' is never closed")
    front: dict[str, Any] = {}
    for n, line in enumerate(head.splitlines(), start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        if not colon or not key.strip():
            raise InvalidArgument(f"{where}:{n}: front matter lines are 'key: value', got {line!r:.80}")
        raw = value.strip()
        try:
            front[key.strip()] = json.loads(raw) if raw else None
        except ValueError:
            front[key.strip()] = raw  # a person wrote a bare word (YAML style)
    return front, body[:-1] if body.endswith("\n") else body


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _memory_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if "sessions" not in rel.parts[:-1] and not any(p.startswith(".") for p in rel.parts):
            yield path


def read_mirror(root: Path) -> dict[str, Any]:
    """The manifest of an exported mirror (``InvalidArgument`` when ``root`` is none)."""
    path = root / MANIFEST
    if not path.is_file():
        raise InvalidArgument(f"{root} is not an agentbase Markdown mirror (no {MANIFEST}) - run "
                              "`agentbase markdown export DIR` first", param="directory")
    try:
        manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InvalidArgument(f"{path} is not valid JSON: {exc}") from exc
    if manifest.get("format") != "agentbase-markdown" or not isinstance(manifest.get("files"), dict):
        raise InvalidArgument(f"{path} is not an agentbase Markdown mirror manifest")
    return manifest


# -- export ---------------------------------------------------------------------------------------
def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8", newline="\n")
    os.replace(partial, path)


def _rendered(kernel: Kernel, scope: Scope) -> dict[str, tuple[str, str, str]]:
    """``{relative path: (id, kind, text)}`` of what an export of ``scope`` writes."""
    out: dict[str, tuple[str, str, str]] = {}
    for entry in kernel.list(user_id=scope.user_id, agent_id=scope.agent_id, project_id=scope.project_id,
                             session_id=scope.session_id, limit=None):
        out[f"{scope_folder(entry.scope)}/{quote(entry.id, safe='')}.md"] = (entry.id, "memory", render_entry(entry))
    for session in kernel.sessions.list(user_id=scope.user_id, agent_id=scope.agent_id, project_id=scope.project_id,
                                        limit=None):
        if scope.session_id is not None and session.id != scope.session_id:
            continue
        messages = kernel.sessions.list_messages(session.id)
        out[f"{scope_folder(session.scope)}/sessions/{quote(session.id, safe='')}.md"] = (
            session.id, "session", render_session(session, messages))
    return out


def _dirty(root: Path, manifest: dict[str, Any]) -> list[str]:
    """Files of the mirror that differ from what was exported, new ones, and deleted ones."""
    known = manifest["files"]
    changed = [p for p, row in known.items()
               if not (root / p).is_file() or _sha((root / p).read_text(encoding="utf-8")) != row["sha256"]]
    new = [str(p.relative_to(root)) for p in _memory_files(root) if str(p.relative_to(root)) not in known]
    return sorted(changed + new)


def _save(root: Path, scope: Scope, files: dict[str, tuple[str, str, str]], old: dict[str, Any],
          keep: dict[str, dict[str, Any]]) -> None:
    """Write ``files``, remove what the previous export wrote and this one does not, save the manifest
    (``keep``: manifest rows left as they were - files in conflict)."""
    for rel, (_, _, text) in files.items():
        path = root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            _write(path, text)
    for rel in old:
        if rel not in files and rel not in keep and (root / rel).is_file():
            (root / rel).unlink()
    manifest = {"format": "agentbase-markdown", "version": 1, "scope": scope.as_dict(),
                "files": {**{rel: {"id": i, "kind": k, "sha256": _sha(t)} for rel, (i, k, t) in files.items()},
                          **keep}}
    _write(root / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def export_markdown(kernel: Kernel, directory: str | os.PathLike[str], scope: Scope, *,
                    force: bool = False) -> dict[str, Any]:
    """Write the mirror of ``scope`` into ``directory``; ``{"memories", "sessions", "directory"}``.

    A directory that is already a mirror with edits not synced back is refused (``InvalidArgument``)
    unless ``force``: an export never overwrites a person's work silently.
    """
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise InvalidArgument(f"{root} is not a directory", param="directory")
    old: dict[str, Any] = {}
    if (root / MANIFEST).is_file():
        manifest = read_mirror(root)
        dirty = _dirty(root, manifest)
        if dirty and not force:
            raise InvalidArgument(f"{root} has {len(dirty)} edited, new or deleted file(s) not synced yet "
                                  f"({', '.join(dirty[:3])}{' ...' if len(dirty) > 3 else ''}) - run "
                                  "`agentbase markdown sync DIR` first, or export with --force", param="directory")
        old = manifest["files"]
    files = _rendered(kernel, scope)
    _save(root, scope, files, old, {})
    kinds = [k for _, k, _ in files.values()]
    return {"directory": str(root), "memories": kinds.count("memory"), "sessions": kinds.count("session")}


# -- sync -----------------------------------------------------------------------------------------
def _edit_of(front: dict[str, Any], body: str, entry: Entry) -> dict[str, Any]:
    """The editable fields a file changes, checked as the API checks them."""
    edits: dict[str, Any] = {}
    if body != entry.l2_full:
        edits["text"] = validate_text(body)
    if front.get("category") != entry.category:
        category = front.get("category")
        if category is not None and not isinstance(category, str):
            raise InvalidArgument(f"category must be a str or null, got {category!r}")
        edits["category"] = category
    tags = front.get("tags") or []
    if tags != _user_tags(entry):
        edits["tags"] = check.tags(tags)
    if "confidence" in front and front["confidence"] != entry.confidence:
        edits["confidence"] = check.confidence(front["confidence"])
    return edits


def sync_markdown(kernel: Kernel, directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Bring a person's edits of the mirror in ``directory`` back into the database, then rewrite
    the files as an export would (see the module docstring).

    Returns ``{"added", "updated", "deleted": [ids], "conflicts": [{id, path, reason}],
    "ignored": [{path, fields}]}``. Every file is read and checked before anything is written: a bad
    file raises ``InvalidArgument`` naming it and nothing changes.
    """
    root = Path(directory)
    manifest = read_mirror(root)
    scope = check.scope_of(*(manifest.get("scope", {}).get(f) for f in _FIELDS))
    known: dict[str, dict[str, Any]] = manifest["files"]
    by_id = {row["id"]: rel for rel, row in known.items() if row["kind"] == "memory"}
    files: dict[str, tuple[dict[str, Any], str, str]] = {}  # rel -> (front, body, raw)
    for path in _memory_files(root):
        rel = str(path.relative_to(root).as_posix())
        raw = path.read_text(encoding="utf-8")
        front, body = parse_file(raw, rel)
        files[rel] = (front, body, raw)
    report: dict[str, Any] = {"added": [], "updated": [], "deleted": [], "conflicts": [], "ignored": []}
    plan: list[tuple[str, str, Any]] = []  # (op, id or rel, payload)
    keep: dict[str, dict[str, Any]] = {}
    seen_ids: set[str] = set()
    for rel, (front, body, raw) in files.items():
        fid = front.get("id") if isinstance(front.get("id"), str) else None
        base_rel = by_id.get(fid) if fid else None
        if base_rel is None:  # a new file
            where = rel.rsplit("/", 1)[0] if "/" in rel else ""
            into = front.get("scope") if isinstance(front.get("scope"), dict) else None
            target = check.scope_of(*(into.get(f) for f in _FIELDS)) if into is not None else folder_scope(where)
            if not all(getattr(target, f) == v for f, v in scope.as_dict().items()):
                raise InvalidArgument(f"{rel}: scope {target.as_dict()} is outside the mirror's {scope.as_dict()}")
            context_type = front.get("type") or "memory"
            check.memory_item(validate_text(body), **target.as_dict(), category=front.get("category"),
                              tags=front.get("tags") or (), context_type=context_type,
                              confidence=front.get("confidence", 1.0))
            plan.append(("add", rel, (target, body, front)))
            continue
        seen_ids.add(fid)  # type: ignore[arg-type]
        base = known[base_rel]
        entry = _get(kernel, fid)  # type: ignore[arg-type]
        file_changed = _sha(raw) != base["sha256"] or rel != base_rel
        db_changed = entry is None or _sha(render_entry(entry)) != base["sha256"]
        if not file_changed:
            continue
        if db_changed:
            report["conflicts"].append({"id": fid, "path": rel, "reason": "deleted in the database" if entry is None
                                        else "changed in the database and in the file"})
            keep[rel] = base
            continue
        assert entry is not None
        fixed = {k: front.get(k) for k in ("id", "type", "scope", "created", "updated", "trust", "metadata")
                 if k in front and front.get(k) != _front_value(entry, k)}
        if fixed:
            report["ignored"].append({"path": rel, "fields": sorted(fixed)})
        edits = _edit_of(front, body, entry)
        if edits:
            plan.append(("update", fid, (entry, edits)))  # type: ignore[arg-type]
    for fid, rel in by_id.items():
        if fid in seen_ids:
            continue
        entry = _get(kernel, fid)
        if entry is None:
            continue  # gone on both sides
        if _sha(render_entry(entry)) != known[rel]["sha256"]:
            report["conflicts"].append({"id": fid, "path": rel, "reason": "file deleted, memory changed in the database"})
            continue
        plan.append(("delete", fid, entry))
    editor = kernel.view(source=HUMAN_EDITED)
    with kernel.transaction():
        for op, key, payload in plan:
            if op == "add":
                target, body, front = payload
                result = editor.add_memory(body, **target.as_dict(), category=front.get("category"),
                                           tags=front.get("tags") or (), context_type=front.get("type") or "memory",
                                           confidence=front.get("confidence", 1.0), actor=HUMAN_EDITED, role=None)
                report["added"].append(result.id)
            elif op == "update":
                entry, edits = payload
                _apply(editor, entry, edits)
                report["updated"].append(key)
            else:
                editor.delete(key, actor=HUMAN_EDITED)
                report["deleted"].append(key)
    rendered = {r: v for r, v in _rendered(kernel, scope).items() if r not in keep}
    _save(root, scope, rendered, known, keep)
    for rel in files:  # the new files a person named are now <id>.md, written by the export above
        if rel not in rendered and rel not in keep and (root / rel).is_file():
            (root / rel).unlink()
    return report


def _front_value(entry: Entry, key: str) -> Any:
    return {"id": entry.id, "type": entry.context_type.value, "scope": entry.scope.as_dict(),
            "created": iso(entry.created_at), "updated": iso(entry.updated_at), "trust": entry.trust,
            "metadata": entry.metadata or None}[key]


def _get(kernel: Kernel, entry_id: str) -> Entry | None:
    try:
        return kernel.get(entry_id)  # the public read: the kernel's agent sees what it may read
    except EntryNotFound:
        return None


def _apply(editor: Kernel, entry: Entry, edits: dict[str, Any]) -> None:
    """One file's edits, through ingest as ``update`` writes them, stamped ``human_edited``."""
    store = editor._ready()
    changes: dict[str, Any] = {"source": HUMAN_EDITED}
    if "category" in edits:
        changes["category"] = edits["category"]
    if "confidence" in edits:
        changes["confidence"] = edits["confidence"]
    if editor.agent is not None:
        editor._check_entry("write", entry, "markdown sync")
    with store.transaction():
        current = store.get_entry(entry.id, entry.scope)
        editor.ingestor.update(current, entry.scope, changes, text=edits.get("text"), tags=edits.get("tags"),
                               actor=HUMAN_EDITED)


# -- rebuild --------------------------------------------------------------------------------------
def rebuild_from_markdown(kernel: Kernel, directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Write every memory and session file of ``directory`` into ``kernel``'s database through the
    import path (ids, scopes and times kept; an entry already there is skipped or updated as an
    import does). Returns the import summary."""
    root = Path(directory)
    if not root.is_dir():
        raise InvalidArgument(f"{root} is not a directory", param="directory")
    records: list[dict[str, Any]] = [{"type": "header", "format": "agentbase-export", "format_version": 1,
                                      "source": "markdown", "embedder": None, "filters": {}}]
    sessions: list[dict[str, Any]] = []
    for path in _memory_files(root):
        rel = path.relative_to(root).as_posix()
        front, body = parse_file(path.read_text(encoding="utf-8"), rel)
        into = front.get("scope") if isinstance(front.get("scope"), dict) else None
        target = check.scope_of(*(into.get(f) for f in _FIELDS)) if into is not None else \
            folder_scope(rel.rsplit("/", 1)[0] if "/" in rel else "")
        record: dict[str, Any] = {"type": "memory", "text": body, **target.as_dict()}
        for key, field in (("id", "id"), ("type", "context_type"), ("category", "category"), ("tags", "tags"),
                           ("created", "created_at"), ("updated", "updated_at"), ("trust", "trust"),
                           ("confidence", "confidence"), ("metadata", "metadata")):
            if front.get(key) is not None:
                record[field] = front[key]
        records.append(record)
    for path in sorted(root.rglob("sessions/*.md")):
        rel = path.relative_to(root).as_posix()
        sessions.extend(_session_records(path.read_text(encoding="utf-8"), rel))
    known = {r["id"] for r in records if r.get("id")}
    for rec in sessions:  # a turn whose memory has no file (superseded, archived) keeps its message only
        if rec["type"] == "message" and rec.get("entry_id") not in known:
            rec["entry_id"] = None
    sessions = [r for r in sessions if r["type"] != "session_entry" or r["entry_id"] in known]
    return kernel.import_(records + sessions)


def _session_records(text: str, where: str) -> list[dict[str, Any]]:
    front, body = parse_file(text, where)
    if not isinstance(front.get("id"), str):
        raise InvalidArgument(f"{where}: a session file needs an id in its front matter")
    owner: dict[str, Any] = front["scope"] if isinstance(front.get("scope"), dict) else {}
    out: list[dict[str, Any]] = [{"type": "session", "id": front["id"], "created_at": front.get("created"),
                                  "updated_at": front.get("updated"), "metadata": front.get("metadata") or {},
                                  **{f: owner.get(f) for f in ("user_id", "agent_id", "project_id")}}]
    blocks = body.split("\n<!-- message ")[1:]
    for n, block in enumerate(blocks, start=1):
        head, _, rest = block.partition(" -->\n")
        try:
            meta = json.loads(head)
        except ValueError as exc:
            raise InvalidArgument(f"{where}: message {n} has a broken marker: {exc}") from exc
        content = rest.split("\n", 2)[2] if rest.count("\n") >= 2 else ""
        if n < len(blocks) and content.endswith("\n"):
            content = content[:-1]
        out.append({"type": "message", "id": meta["id"], "session_id": front["id"], "seq": meta["seq"],
                    "role": meta["role"], "name": meta.get("name"), "content": content,
                    "created_at": meta["created"], "status": meta.get("status") or "active",
                    "entry_id": meta.get("entry_id"), "metadata": meta.get("metadata") or {}})
        if meta.get("entry_id"):
            out.append({"type": "session_entry", "session_id": front["id"], "entry_id": meta["entry_id"]})
    return out
