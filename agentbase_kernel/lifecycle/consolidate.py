"""Consolidation: fold a scope's older, low-importance memories into one summary entry.

The sources are the scope's live entries (exact scope, as for capacity) created before the cutoff
with ``importance <= max_importance`` - never an earlier summary. The summary is written through
ingest like any memory (category ``consolidation``, role ``system``), linked to each source
(``consolidates``), and the sources are archived with the summary's id as the reason: still in
``get`` / ``history`` / ``list(archived=True)``, restorable. Running it again finds no sources,
so it makes no second summary.

The rule-based summariser uses ingest's own pieces: its sentence splitter, its NER and its
keyword terms. It keeps, greedily, the sentence that adds the most entities (x2) and keywords not
yet covered, skips near-repeats, stops at a length budget, and prints what it kept oldest first,
each line dated. A caller's ``summarizer(text) -> str`` replaces it (given the dated lines).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from ..errors import InvalidArgument
from ..records import AddResult, Entry, Scope
from ..store.protocol import EntryStore, RetentionStore
from ..text import tokenize
from ..text.ner import RegexNer
from ..text.tiers import _sentences

__all__ = ["CATEGORY", "Consolidation", "ConsolidationStore", "Write", "consolidate", "rule_summary"]

#: how the summary is written: ingest's ``add_many`` (one item in, its ``AddResult`` out)
Write = Callable[[list[dict[str, Any]]], list[AddResult]]


class ConsolidationStore(RetentionStore, EntryStore, Protocol):
    """What consolidation reads and changes: a scope's live entries, links, archival."""

CATEGORY = "consolidation"
SUMMARY_CHARS = 1500
_REPEAT = 0.8  # keyword overlap (Jaccard) at which a sentence repeats one already kept


@dataclass
class Consolidation:
    """What one ``consolidate`` call did: the summary written (``None``: nothing to fold) and the
    ids it archived."""

    summary: Entry | None
    sources: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.summary is not None


def select_sources(entries: Sequence[Entry], *, cutoff: datetime, max_importance: float) -> list[Entry]:
    return [e for e in entries
            if e.category != CATEGORY and e.importance <= max_importance
            and (e.created_at is None or e.created_at < cutoff)]


def _lines(entries: Sequence[Entry]) -> list[tuple[str, str]]:
    """``(date, sentence)`` of every source, oldest first."""
    out = []
    for e in sorted(entries, key=lambda e: (e.created_at is None, e.created_at)):
        day = e.created_at.date().isoformat() if e.created_at else ""
        out += [(day, s) for s in _sentences(e.l2_full)]
    return out


def rule_summary(entries: Sequence[Entry], ner: Any = None, *, max_chars: int = SUMMARY_CHARS) -> str:
    """The rule-based summary of ``entries`` (module docstring)."""
    lines = _lines(entries)
    if not lines:
        return ""
    texts = [s for _, s in lines]
    if ner is not None and hasattr(ner, "extract_batch"):
        ents = ner.extract_batch(texts)
    else:
        regex = RegexNer()
        ents = [regex.extract(t) for t in texts]
    units = [({e.norm for e in es}, set(tokenize.query_terms(t))) for t, es in zip(texts, ents)]
    covered_ents: set[str] = set()
    covered_words: set[str] = set()
    kept: list[int] = []
    seen_text: set[str] = set()
    size = 0
    while True:
        best, best_gain = -1, 0.0
        for i, (names, words) in enumerate(units):
            if i in kept:
                continue
            key = " ".join(texts[i].casefold().split())
            if key in seen_text or any(_jaccard(words, units[j][1]) >= _REPEAT for j in kept):
                continue
            gain = 2 * len(names - covered_ents) + len(words - covered_words)
            if gain > best_gain:
                best, best_gain = i, gain
        if best < 0 or size + len(texts[best]) > max_chars and kept:
            break
        kept.append(best)
        seen_text.add(" ".join(texts[best].casefold().split()))
        covered_ents |= units[best][0]
        covered_words |= units[best][1]
        size += len(texts[best]) + 14
    days = sorted({d for d, _ in lines if d})
    period = f" ({days[0]} to {days[-1]})" if len(days) > 1 else f" ({days[0]})" if days else ""
    head = f"Summary of {len(entries)} earlier memories{period}:"
    body = [f"- [{lines[i][0]}] {lines[i][1]}" if lines[i][0] else f"- {lines[i][1]}" for i in sorted(kept)]
    return "\n".join([head, *body])


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def consolidate(store: ConsolidationStore, scope: Scope, *, write: Write, ner: Any, cutoff: datetime,
                max_importance: float, min_items: int, summarizer: Callable[[str], str] | None,
                actor: str | None) -> Consolidation:
    """Select, summarise, write (through ``write``), link and archive (module docstring). The summary
    is built outside the write lock; the write re-reads the scope and starts over if a source
    changed meanwhile."""
    for _ in range(3):
        sources = select_sources(store.scope_entries(scope), cutoff=cutoff, max_importance=max_importance)
        if len(sources) < min_items:
            return Consolidation(None)
        text = rule_summary(sources, ner)
        if summarizer is not None:
            answer = summarizer("\n".join(f"[{d}] {s}" if d else s for d, s in _lines(sources)))
            if not isinstance(answer, str):
                raise InvalidArgument(f"summarizer must return a str, got {type(answer).__name__}")
            text = answer.strip() or text
        ids = [e.id for e in sources]
        with store.transaction():
            live = {e.id for e in select_sources(store.scope_entries(scope), cutoff=cutoff,
                                                 max_importance=max_importance)}
            if not set(ids) <= live:
                continue  # another writer archived or changed a source: select again
            dates = [e.created_at for e in sources if e.created_at]
            metadata: dict[str, Any] = {"consolidated": len(ids)}
            if dates:
                metadata["period"] = [min(dates).isoformat(), max(dates).isoformat()]
            result = write([{
                "text": text, **scope.as_dict(), "role": "system", "actor": actor, "category": CATEGORY,
                "metadata": metadata, "context_type": "memory", "tags": [], "confidence": 1.0}])[0]
            summary = result.entry
            for source in ids:
                store.link_entries(summary.id, source, "consolidates")
            store.archive_entries(ids, reason=f"consolidated into {summary.id}", actor=actor)
        return Consolidation(store.get_entry(summary.id), ids)
    return Consolidation(None)
