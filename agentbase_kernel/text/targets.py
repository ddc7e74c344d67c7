"""What an action targets: the code entities a text names, and the keys a name is looked up by.

``target_entities`` finds what the NER chain leaves to the code: relative paths (``src/app/db.py``),
snake_case and dotted identifiers (``analytics.events_v1``), backtick spans and ticket ids
(``PROJ-42``). Ingest links an entry to them in the entity table only - they are not tags and take
no part in ranking ``find`` (the retrieval defaults were measured without them).

An agent about to edit ``./src/app/db.py`` asks for the memories linked to that file; a memory may
name it in full (``src/app/db.py``) or by its file name (``db.py``). ``entity_keys`` turns a name into
the normalised keys stored entities are matched with (``EntryStore.entity_matches``), each with a
weight: the full name counts 1, its last part (a path's file, a dotted name's last component) 0.5.
"""

from __future__ import annotations

import re

from .ner import RegexNer, normalize_entity

__all__ = ["entity_keys", "entity_label", "normalize_target", "target_entities"]

_TAIL_WEIGHT = 0.5
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+")
_REGEX = RegexNer()
#: how much of a text is searched for targets (a pasted file is not read to its end)
MAX_CHARS = 20_000

_RELATIVE_PATH = re.compile(
    r"(?<![\w/.:@-])(?:\.{1,2}/)?(?:[\w@+-][\w.@+-]*/)+[\w@+-][\w.@+-]*\.[A-Za-z]\w{0,5}\b")
_IDENT = re.compile(
    r"`(?P<code>[^`\s][^`\n]{0,80}?)`"  # a backtick span
    r"|(?<![\w.@/-])(?:[A-Za-z_]\w*\.)*[A-Za-z][A-Za-z0-9]*_\w*[A-Za-z0-9](?:\.[A-Za-z_]\w*)*(?![\w@/-])"  # snake_case
    r"|\b[A-Z][A-Z0-9]+-\d+\b")  # a ticket id


def target_entities(text: str) -> list[tuple[str, str, str]]:
    """``(norm, label, text)`` of the relative paths (``PATH``) and identifiers (``IDENT``) in ``text``,
    in order, without duplicates (norms as ``normalize_target`` makes them)."""
    text = text[:MAX_CHARS]
    found: list[tuple[int, str, str]] = []
    taken: list[tuple[int, int]] = []
    for m in _RELATIVE_PATH.finditer(text):
        found.append((m.start(), "PATH", m.group()))
        taken.append(m.span())
    for m in _IDENT.finditer(text):
        start, end = m.span("code") if m.group("code") is not None else m.span()
        if not any(s < end and start < e for s, e in taken):
            found.append((start, "IDENT", text[start:end]))
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for _, label, name in sorted(found):
        norm = normalize_target(name)
        if norm and norm not in seen:
            seen.add(norm)
            out.append((norm, label, name.strip()))
    return out


def normalize_target(name: str) -> str:
    """One spelling per target: ``\\`` as ``/``, no leading ``./``, then ``normalize_entity``
    (casefolded, edge punctuation dropped) - the norm ingest stores for the same name."""
    text = name.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return normalize_entity(text) if text else ""


def entity_label(name: str) -> str:
    """``PATH``, ``URL`` ... when the extractor sees ``name`` as one such entity, else ``IDENT``."""
    spans = _REGEX.structured_spans(name.strip())
    if len(spans) == 1 and spans[0][1] - spans[0][0] == len(name.strip()):
        return spans[0][2].label
    return "IDENT"


def entity_keys(name: str) -> list[tuple[str, float]]:
    """``[(key, weight)]``: the full normalised name (1.0), and its file name or last dotted part (0.5)."""
    norm = normalize_target(name)
    if not norm:
        return []
    keys = [(norm, 1.0)]
    label = entity_label(name)
    if label in ("URL", "EMAIL"):
        return keys
    tail = ""
    if "/" in norm:
        tail = norm.rstrip("/").rsplit("/", 1)[-1]
    elif label != "PATH" and _DOTTED.fullmatch(norm):  # "analytics.events_v1", not "readme.md"
        tail = norm.rsplit(".", 1)[-1]
    if tail and tail != norm:
        keys.append((tail, _TAIL_WEIGHT))
    return keys
