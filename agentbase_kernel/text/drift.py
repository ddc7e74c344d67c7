"""Entity drift, by rule: a text saying that a table, file, API or id is deprecated or renamed.

``find_drift("The events_v1 table was renamed to events_v2")`` gives
``[("events_v1", "renamed", "events_v2")]``. A skill naming ``events_v1`` then carries a drift warning.
Only code-like names count (backticked, or with ``_ . / -`` or a digit, or named with a kind word
such as "table", "endpoint", "column") so that "the weather is gone" marks nothing. No LLM.
"""

from __future__ import annotations

import re

from .targets import normalize_target

__all__ = ["find_drift"]

_KIND = (r"(?:table|view|column|field|index|file|folder|directory|module|package|library|class|function|method|"
         r"endpoint|api|route|service|queue|topic|bucket|flag|setting|variable|env var|script|command|schema|job)")
_TOKEN = r"(?:`[^`\n]{1,80}`|[A-Za-z_./~-][\w./:~-]*[\w/])"
_SUBJECT = rf"(?:the\s+)?(?:{_KIND}\s+)?(?P<x>{_TOKEN})(?P<xk>\s+{_KIND})?"
_BE = r"(?:is|was|has\s+been|have\s+been|are|were|got|gets|will\s+be)\s+(?:now\s+|officially\s+|being\s+)?"
_GONE = r"(?:deprecated|obsolete|removed|retired|dropped|discontinued|sunset|decommissioned|gone|dead|" \
        r"no\s+longer\s+(?:used|supported|maintained|available|exists?))"
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("renamed", re.compile(rf"{_SUBJECT}\s+{_BE}(?:renamed|moved|migrated)\s+(?:to|into|as)\s+(?:{_KIND}\s+)?"
                           rf"(?P<y>{_TOKEN})", re.IGNORECASE)),
    ("renamed", re.compile(rf"{_SUBJECT}\s+{_BE}replaced\s+(?:by|with)\s+(?:the\s+)?(?:{_KIND}\s+)?(?P<y>{_TOKEN})",
                           re.IGNORECASE)),
    ("renamed", re.compile(rf"{_SUBJECT}\s+(?:is|are)\s+now\s+(?:called|named)\s+(?P<y>{_TOKEN})", re.IGNORECASE)),
    ("renamed", re.compile(rf"\brenamed?\s+(?:the\s+)?(?:{_KIND}\s+)?(?P<x>{_TOKEN})(?P<xk>\s+{_KIND})?\s+to\s+"
                           rf"(?P<y>{_TOKEN})", re.IGNORECASE)),
    ("renamed", re.compile(rf"\buse\s+(?:the\s+)?(?:{_KIND}\s+)?(?P<y>{_TOKEN})\s+instead\s+of\s+(?:the\s+)?"
                           rf"(?:{_KIND}\s+)?(?P<x>{_TOKEN})(?P<xk>\s+{_KIND})?", re.IGNORECASE)),
    ("deprecated", re.compile(rf"{_SUBJECT}\s+{_BE}{_GONE}", re.IGNORECASE)),
    ("deprecated", re.compile(rf"\b(?:deprecated|dropped|retired|removed|decommissioned)\s+(?:the\s+)?"
                              rf"(?:{_KIND}\s+)?(?P<x>{_TOKEN})(?P<xk>\s+{_KIND})?", re.IGNORECASE)),
    ("deprecated", re.compile(rf"\b(?:do\s+not|don't|never)\s+use\s+(?:the\s+)?(?:{_KIND}\s+)?(?P<x>{_TOKEN})"
                              rf"(?P<xk>\s+{_KIND})?\s+(?:any\s?more|anymore)", re.IGNORECASE)),
)
_TRIGGER = re.compile(r"deprecat|obsolete|renamed?\b|removed|retired|dropped|replaced|instead\s+of|no\s+longer|"
                      r"discontinu|sunset|decommission|moved\s+(?:to|into)|migrated|any\s?more|\bgone\b|\bdead\b|"
                      r"now\s+(?:called|named)", re.IGNORECASE)
#: characters around a trigger word the rules look at (a name, a kind word, the verb phrase, a new name)
_REACH = 120
_CODE_LIKE = re.compile(r"[_./\-\d]|^`")
_KIND_BEFORE = re.compile(rf"{_KIND}\s+$", re.IGNORECASE)


def _code_like(token: str, kind_named: bool) -> bool:
    return bool(_CODE_LIKE.search(token)) or kind_named


def _clean(token: str) -> str:
    return token.strip("`").rstrip(".,;:")


def find_drift(text: str) -> list[tuple[str, str, str | None]]:
    """``(entity norm, "deprecated" | "renamed", new name or None)`` for each entity ``text`` marks,
    in order, one per entity."""
    if not text:
        return []
    out: dict[str, tuple[str, str, str | None]] = {}
    windows = _windows(text[:20_000])
    for kind, pattern in _RULES:
        for window in windows:
            for m in pattern.finditer(window):
                _mark(out, kind, window, m)
    return list(out.values())


def _windows(text: str) -> list[str]:
    """The stretches of ``text`` around its trigger words (the rules run there only: a long text
    without one costs one scan)."""
    spans: list[list[int]] = []
    for m in _TRIGGER.finditer(text):
        start, end = max(0, m.start() - _REACH), min(len(text), m.end() + _REACH)
        if spans and start <= spans[-1][1]:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    return [text[a:b] for a, b in spans]


def _mark(out: dict[str, tuple[str, str, str | None]], kind: str, text: str, m: re.Match[str]) -> None:
    """Record the entity one rule's match marks, if it looks like code."""
    token = m.group("x")
    kind_named = bool(m.group("xk")) or bool(_KIND_BEFORE.search(text[:m.start("x")]))
    if not _code_like(token, kind_named):
        return
    norm = normalize_target(_clean(token))
    if not norm or norm in out:
        return
    replacement = _clean(m.group("y")) if "y" in m.re.groupindex and m.group("y") else None
    if replacement is not None and normalize_target(replacement) == norm:
        return
    out[norm] = (norm, kind, replacement)
