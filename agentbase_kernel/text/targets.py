"""What an action targets: the entity keys a file path, table, URL or id is looked up by.

An agent about to edit ``./src/app/db.py`` asks for the memories linked to that file; a memory may
name it in full (``src/app/db.py``) or by its file name (``db.py``). ``entity_keys`` turns a name into
the normalised keys stored entities are matched with (``EntryStore.entity_matches``), each with a
weight: the full name counts 1, its last part (a path's file, a dotted name's last component) 0.5.
"""

from __future__ import annotations

import re

from .ner import RegexNer, normalize_entity

__all__ = ["entity_keys", "entity_label", "normalize_target"]

_TAIL_WEIGHT = 0.5
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+")
_REGEX = RegexNer()


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
