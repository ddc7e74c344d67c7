"""Entity-targeted recall: the memories and skills linked to the files, tables, URLs or ids an
action is about to touch - what to know before a tool call, without a query to phrase.

Each entry linked to one of the names (by ingest's entities, or by a finished turn's
``touched_entities``) scores the sum, over the names asked for, of its best key's weight (the full
name 1, a path's file name or a dotted name's last part 0.5: ``text/targets.py``), divided by the
number of names. Ties: skills first, then the newest. The best hits that fit ``budget_tokens`` are kept.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

from ..records import ContextType, FindResult, Hit, Trace, TraceStep
from ..store.base import EntryFilter
from ..store.protocol import EntryStore
from ..text import tokenize
from ..text.targets import entity_keys

__all__ = ["retrieve_by_entities"]

#: how many linked entries are read before ranking, per hit asked for
_POOL_PER_HIT = 20


def retrieve_by_entities(store: EntryStore, names: Sequence[str], flt: EntryFilter, *, top_k: int,
                         budget_tokens: int | None) -> FindResult:
    """The entries of ``flt`` linked to ``names``, best first, within ``budget_tokens`` (at least one hit)."""
    started = time.perf_counter()
    keys = {name: entity_keys(name) for name in names}
    wanted = [key for pairs in keys.values() for key, _ in pairs]
    matches = store.entity_matches(wanted, flt, limit=max(top_k * _POOL_PER_HIT, 200))
    entries = store.get_entries(matches)
    scored: list[tuple[float, int, Hit]] = []
    for order, (entry_id, matched) in enumerate(matches.items()):
        entry = entries.get(entry_id)
        if entry is None:
            continue
        hit_names = [name for name, pairs in keys.items() if any(k in matched for k, _ in pairs)]
        score = sum(max(w for k, w in keys[name] if k in matched) for name in hit_names) / max(len(keys), 1)
        hit = Hit(entry=entry, score=round(score, 6), matched_by=[f"entity:{name}" for name in hit_names])
        scored.append((score, order, hit))
    scored.sort(key=lambda s: (-s[0], s[2].entry.context_type != ContextType.SKILL, s[1]))
    hits = [hit for _, _, hit in scored[:top_k]]
    if budget_tokens is not None:
        kept: list[Hit] = []
        used = 0
        for hit in hits:
            cost = tokenize.count_tokens(hit.content)
            if used + cost > budget_tokens and kept:
                break
            kept.append(hit)
            used += cost
        hits = kept
    step = TraceStep("entities", round((time.perf_counter() - started) * 1000, 3), len(matches),
                     {"entities": list(names), "keys": wanted, "budget_tokens": budget_tokens})
    return FindResult(hits, Trace(id=str(uuid.uuid4()), query=" ".join(names), steps=[step], intents=["entities"]))
