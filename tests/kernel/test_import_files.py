"""Hostile import files: values the API refuses, JSON nested past any limit, files cut short.

* every imported record goes through the API's own checks (``agentbase_kernel.arguments``): what
  ``add_memory`` / ``add_messages`` refuse, an import refuses too, with the same words, naming the
  line, before anything is written;
* JSON nested deeper than Python can read is a clean ``InvalidArgument``, never ``RecursionError``;
* an export ends with a trailer (record counts and a SHA-256 of the lines before it); a file without
  it, or not matching it, is refused unless ``allow_truncated=True``; a format-1 file (written before
  trailers) imports with a warning.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest

from agentbase_kernel import IncompleteExport, InvalidArgument, Kernel

HEADER = {"type": "header", "format": "agentbase-export", "format_version": 2, "embedder": None}
NOW = "2026-01-02T03:04:05.000000+00:00"


def _entry(**fields: Any) -> dict[str, Any]:
    text = fields.pop("text", "Alice likes green tea")
    return {"type": "entry", "id": "e-1", "context_type": "memory", "l0_abstract": text, "l1_overview": text,
            "l2_full": text, "content_hash": "h-1", "search_text": text, "created_at": NOW, "updated_at": NOW,
            "user_id": "alice", **fields}


def _session(**fields: Any) -> dict[str, Any]:
    return {"type": "session", "id": "s-1", "user_id": "alice", "created_at": NOW, "updated_at": NOW, **fields}


def _message(**fields: Any) -> dict[str, Any]:
    return {"type": "message", "id": "m-1", "session_id": "s-1", "seq": 1, "role": "user", "content": "hi",
            "created_at": NOW, **fields}


def _trace(**fields: Any) -> dict[str, Any]:
    return {"type": "trace", "id": "t-1", "query": "tea", "created_at": NOW, "scope": {"user_id": "alice"},
            "steps": [{"name": "fts", "ms": 1.0, "candidates": 3, "params": {}}], **fields}


# (records after the header, what the message must say) - each a value the API refuses
REFUSED = {
    "tags-of-objects": ([_entry(tags=[{"a": 1}])], "entry.tags must be a list of strings"),
    "importance-infinity": ([_entry(importance=math.inf)], "entry.importance must be a number in [0, 1]"),
    "importance-above-one": ([_entry(importance=7)], "entry.importance must be a number in [0, 1]"),
    "trust-negative": ([_entry(trust=-0.5)], "entry.trust must be a number in [0, 1]"),
    "confidence-nan": ([_entry(confidence=math.nan)], "entry.confidence must be a number in [0, 1]"),
    "nul-in-entry-id": ([_entry(id="e\x00vil")], "entry.entry_id must be a non-empty string without NUL"),
    "nul-in-user-id": ([_entry(user_id="al\x00ice")], "entry.user_id must be a non-empty string without NUL"),
    "empty-user-id": ([_entry(user_id="")], "entry.user_id must be a non-empty string"),
    "id-too-long": ([_entry(id="x" * 513)], "at most 512 characters"),
    "metadata-nan": ([_entry(metadata={"k": math.nan})], "entry.metadata holds nan"),
    "metadata-too-deep": ([_entry(metadata={"k": json.loads("[" * 100 + "]" * 100)})], "nests deeper than 64"),
    "bogus-context-type": ([_entry(context_type="spaceship")], "context_type must be one of"),
    "lone-surrogate-text": ([_entry(text="tea \ud800")], "not valid Unicode"),
    "blank-text": ([_entry(text="   ")], "entry.text is empty"),
    "time-overflows": ([_entry(created_at="9999-12-31T23:00:00-05:00")], "entry.created_at is not an ISO 8601"),
    "history-event-nul-id": ([_entry(history=[{"id": "h\x00", "event": "ADD", "created_at": NOW}])],
                             "history event id must be a non-empty string without NUL"),
    "entity-empty-norm": ([_entry(entities=[["", "PERSON"]])], "entity norm must be a non-empty str"),
    "session-nul-id": ([_session(id="s\x00")], "session.id must be a non-empty string without NUL"),
    "session-metadata-key": ([_session(metadata={"k": [math.inf]})], "session.metadata holds inf"),
    "message-empty-role": ([_session(), _message(role="")], "message.message role must be a non-empty str"),
    "message-bad-status": ([_session(), _message(status="deleted")], "status must be 'active' or 'archived'"),
    "message-negative-seq": ([_session(), _message(seq=-3)], "message.seq must be >= 0"),
    "message-payload-nan": ([_session(), _message(payload={"x": math.nan})], "payload holds nan"),
    "memory-tags": ([{"type": "memory", "text": "x", "tags": "not-a-list"}], "memory.tags must be a list of strings"),
    "memory-actor-int": ([{"type": "memory", "text": "x", "actor": 5}], "memory.actor must be a str or None"),
    "chat-message-role": ([{"type": "chat_message", "session_id": "s", "role": "", "content": "x"}],
                          "message role must be a non-empty str"),
    "link-empty-relation": ([{"type": "entry_link", "src": "a", "dst": "b", "relation": "", "created_at": NOW}],
                            "entry_link.relation must be a non-empty str"),
    "trace-step-ms-text": ([_trace(steps=[{"name": "fts", "ms": "slow", "candidates": 1}])],
                           "trace.step ms must be a finite number"),
    "trace-scope-foreign-key": ([_trace(scope={"user_id": "a", "evil": "b"})], "trace.scope must be an object"),
    "trace-total-inf": ([_trace(total_ms=math.inf)], "trace.total_ms must be a finite number"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_the_api_refuses_an_import_refuses(kernel: Kernel, case: str) -> None:
    records, message = REFUSED[case]
    with pytest.raises(InvalidArgument, match=rf"record {len(records) + 1}: .*{_escaped(message)}"):
        kernel.import_([HEADER, *records])
    assert kernel.stats()["entries"] == 0 and kernel.list_sessions() == []
    with pytest.raises(InvalidArgument, match=_escaped(message)):  # the dry run checks as much
        kernel.import_([HEADER, *records], dry_run=True)


def _escaped(text: str) -> str:
    import re

    return re.escape(text)


def test_the_api_and_the_import_refuse_with_the_same_words(kernel: Kernel) -> None:
    with pytest.raises(InvalidArgument) as api:
        kernel.add_memory("Alice likes green tea", user_id="alice", tags=[{"a": 1}])
    with pytest.raises(InvalidArgument) as imported:
        kernel.import_([HEADER, _entry(tags=[{"a": 1}])])
    assert str(api.value) in str(imported.value)
    with pytest.raises(InvalidArgument) as api:
        kernel.add_memory("x", user_id="alice", importance=math.inf)
    with pytest.raises(InvalidArgument) as imported:
        kernel.import_([HEADER, _entry(importance=math.inf)])
    assert str(api.value) in str(imported.value)


@pytest.mark.parametrize("literal", ["Infinity", "-Infinity", "NaN"])
def test_json_constants_that_are_not_json_are_refused(kernel: Kernel, literal: str) -> None:
    line = json.dumps(_entry(importance=0.5)).replace('"importance": 0.5', f'"importance": {literal}')
    with pytest.raises(InvalidArgument, match=f"line 2: not valid JSON .*{literal} is not JSON"):
        kernel.import_(io.StringIO(json.dumps(HEADER) + "\n" + line + "\n"))


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize("bracket", ["[", '{"k":'])
def test_deeply_nested_json_is_a_clean_error(kernel: Kernel, depth: int, bracket: str) -> None:
    close = "]" if bracket == "[" else "}"
    deep = bracket * depth + "1" + close * depth
    line = json.dumps(_entry()).replace('"user_id": "alice"', f'"user_id": "alice", "metadata": {{"k": {deep}}}')
    with pytest.raises(InvalidArgument, match="line 2: (JSON nested too deeply|entry.metadata nests deeper than 64)"):
        kernel.import_(io.StringIO(json.dumps(HEADER) + "\n" + line + "\n"))
    assert kernel.stats()["entries"] == 0


# -- the trailer --------------------------------------------------------------------------------


@pytest.fixture
def exported(kernel: Kernel, tmp_path: Path) -> Path:
    kernel.add_memory("Alice likes green tea", user_id="alice")
    kernel.add_memory("Bob drinks espresso", user_id="bob")
    kernel.create_session("s-alice", user_id="alice")
    kernel.add_messages("s-alice", [{"role": "user", "content": "I am moving to Lisbon"}])
    path = tmp_path / "all.jsonl"
    kernel.export(path)
    return path


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _fresh(kernel: Kernel, tmp_path: Path, name: str) -> Kernel:
    return Kernel(tmp_path / f"{name}.db", embedder=kernel.embedder, ner="regex")


def test_an_export_ends_with_counts_and_a_digest(exported: Path) -> None:
    lines = _lines(exported)
    trailer = json.loads(lines[-1])
    counted: dict[str, int] = {}
    for line in lines[1:-1]:
        kind = json.loads(line)["type"]
        counted[kind] = counted.get(kind, 0) + 1
    assert trailer["records"] == counted and counted["entry"] >= 3 and counted["message"] == 1
    assert trailer["sha256"] == hashlib.sha256("".join(x + "\n" for x in lines[:-1]).encode()).hexdigest()
    assert json.loads(lines[0])["format_version"] == 2


def test_a_file_cut_at_a_line_boundary_is_refused(kernel: Kernel, exported: Path, tmp_path: Path) -> None:
    """Cut after the entries: all of them, none of the sessions - it must not pass as a success."""
    lines = _lines(exported)
    last_entry = max(i for i, line in enumerate(lines) if json.loads(line)["type"] == "entry")
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[: last_entry + 1]) + "\n", encoding="utf-8")
    with _fresh(kernel, tmp_path, "cut") as target:
        with pytest.raises(IncompleteExport, match="ends without its trailer line: it was cut short"):
            target.import_(cut)
        assert target.stats()["entries"] == 0
        with pytest.raises(IncompleteExport):
            target.import_(cut, dry_run=True)
        summary = target.import_(cut, allow_truncated=True)
        assert summary["by_type"]["entry"]["inserted"] >= 3 and "session" not in summary["by_type"]
        assert any("cut short" in w for w in summary["warnings"])


@pytest.mark.parametrize("damage", ["line-dropped", "line-edited", "record-after-trailer", "trailer-lies"])
def test_a_file_that_does_not_match_its_trailer_is_refused(kernel: Kernel, exported: Path, tmp_path: Path,
                                                          damage: str) -> None:
    lines = _lines(exported)
    entry_at = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "entry")
    if damage == "line-dropped":
        lines.pop(entry_at)
    elif damage == "line-edited":
        lines[entry_at] = lines[entry_at].replace("Alice likes green tea", "Alice likes black tea")
    elif damage == "record-after-trailer":
        lines.append(lines[entry_at])
    else:
        trailer = json.loads(lines[-1])
        trailer["records"]["entry"] += 1
        lines[-1] = json.dumps(trailer)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = InvalidArgument if damage == "record-after-trailer" else IncompleteExport
    with _fresh(kernel, tmp_path, damage) as target:
        with pytest.raises(expected, match="(does|do) not match|after the trailer"):
            target.import_(broken)
        assert target.stats()["entries"] == 0


def test_crlf_line_endings_still_match(kernel: Kernel, exported: Path, tmp_path: Path) -> None:
    copy = tmp_path / "crlf.jsonl"
    copy.write_bytes(exported.read_bytes().replace(b"\n", b"\r\n"))
    with _fresh(kernel, tmp_path, "crlf") as target:
        assert target.import_(copy)["warnings"] == []


def test_a_format_1_file_imports_with_a_warning(kernel: Kernel, exported: Path, tmp_path: Path) -> None:
    """Exports written before the trailer existed cannot be checked: imported, and the summary says so."""
    lines = _lines(exported)[:-1]
    lines[0] = lines[0].replace('"format_version":2', '"format_version":1')
    old = tmp_path / "v1.jsonl"
    old.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with _fresh(kernel, tmp_path, "v1") as target:
        summary = target.import_(old)
        assert summary["by_type"]["entry"]["inserted"] >= 3
        assert summary["warnings"] == ["this file is format 1 (written before exports ended with a trailer): whether "
                                       "it is complete cannot be checked"]


def test_a_stream_carries_its_trailer_too(kernel: Kernel, exported: Path, tmp_path: Path) -> None:
    buf = io.StringIO()
    kernel.export(buf, user_id="alice")
    cut = io.StringIO("".join(buf.getvalue().splitlines(keepends=True)[:-1]))
    with _fresh(kernel, tmp_path, "stream") as target:
        with pytest.raises(IncompleteExport):
            target.import_(cut)
        buf.seek(0)
        assert target.import_(buf)["warnings"] == []
