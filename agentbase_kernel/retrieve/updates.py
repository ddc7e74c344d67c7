"""Latest first: when a question asks how things stand now, a later statement outranks an earlier one.

"I live in Boston" (January) ... "we moved to Denver last month" (May): both answer "Where do I live
now?", and plain relevance often ranks the older one higher (it says "live"). Among the candidates
relevant enough to be an answer (a score within ``relevance`` of the best), a later turn by the same
speaker that talks about the same thing as an earlier one is ranked just above it. "The same thing"
is the two turns' cosine after taking out what every candidate shares (the mean of their vectors:
the speaker's name, the conversation's style), so two statements of one attribute pair up and a
later turn on another topic does not. A later turn that only asks ("What time should I aim for?")
states no new value and is not lifted; nor, when the question asks about the asker, is a later turn
about someone else ("She spends $600 a month") unless it announces a change. A later turn that
announces a change ("they switched me to amlodipine", ``text/changes.py``) may come from further
down the candidates (``change_relevance``): the current value often shares few words with the
question while the old one shares many. When a parser is installed (``text/slots.py``), the
question's own slot decides more: a later statement that fills another attribute than the one
asked ("adjust it for the new city" for "Which city do I live in now?") is not lifted, and one
that fills the asked attribute (of the asker, when the question is about the asker) ranks above
every earlier relevant statement of its speaker, on the same topic to the cosine or not. Nothing is removed: the earlier statement stays in the
results just below, and ``as_of`` before the update makes it the latest again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ..text.changes import about_someone_else, announces_change, only_asks

__all__ = ["latest_first"]


class _Ranked(Protocol):
    entry: Any
    fused: float
    boost: float
    matched_by: list[str]


def latest_first(cands: Sequence[_Ranked], vectors: dict[str, np.ndarray], *, relevance: float,
                 same_topic: float, pool: int, change_relevance: float | None = None,
                 about_asker: bool = False, asked_slots: frozenset[tuple[str, str]] | None = None,
                 slots_of: Callable[[str], frozenset[tuple[str, str]] | None] | None = None,
                 slots_of_many: Callable[[list[str]], list[frozenset[tuple[str, str]]] | None] | None = None,
                 slot_lift: bool = True, slot_over_other: bool = False, slot_change_relevance: float | None = None) -> list[tuple[str, str, str]]:
    """Rank later statements of the same speaker and topic above earlier ones, in place.

    Args:
        cands: The candidates, best first (``fused * boost`` is the score).
        vectors: The entries' own vectors by content hash (candidates without one are skipped).
        relevance: An earlier statement counts when it scores at least this share of the best.
        same_topic: The least centred cosine between two statements of the same thing.
        pool: How many of the best candidates take part.
        change_relevance: The share of the best a later statement that announces a change needs
            (``None``: the same as ``relevance``).
        about_asker: The question asks about the asker ("What's my rent now?"); then a later
            statement about someone else (he / she, no I / we) is lifted only if it announces a change.

        asked_slots: The ``(holder, key)`` slots the question itself fills (``text/slots.py``), or
            ``None`` (no parser). A later statement that fills slots, none of them with an asked
            key, and announces no change, states another attribute and is not lifted.
        slots_of: How to get a statement's slots (parsed lazily, only for a later statement about
            to be lifted).
        slots_of_many: The same for a batch: the candidates taking part are parsed in one pass
            (spaCy's ``pipe``), cheaper than one at a time.
        slot_over_other: With ``slot_lift``, the statement that fills the asked slot also ranks above
            a later statement of its speaker that fills only other attributes and announces no
            change ("Ledgerly opened a Leeds office, so I go there now, a twenty-minute bus" for "How
            do I get to work these days?" over the later "Month-end used to take nine days").
        slot_change_relevance: The share of the best a later statement that fills an asked slot and
            announces a change needs ("swim is changing again for summer" for "When is Anika's swim
            practice now?"); ``None``: as ``change_relevance``.
        slot_lift: A later statement that fills an asked slot (of the asker, when the question is
            about the asker) ranks above every earlier, relevant statement of its speaker, topic or not:
            "my defense moved to June 14" over "Good news on the thesis: the chapter is drafted".

    Returns:
        ``(later entry id, earlier entry id, why)`` for each pair that was reordered; ``why`` is
        ``"slot:<key>"`` when the later statement filled the asked slot (``slot:residence``),
        ``"change:<word>"`` when it announced a change, else ``"same_topic"``.
    """
    if not cands:
        return []
    best = cands[0].fused * cands[0].boost
    if best <= 0:
        return []
    known = [c for c in cands if c.entry.content_hash in vectors]
    if len(known) < 2:
        return []
    mean = np.mean([vectors[c.entry.content_hash] for c in known], axis=0)
    floor = relevance * best
    change_floor = (relevance if change_relevance is None else change_relevance) * best
    slot_change_floor = change_floor if slot_change_relevance is None or not asked_slots else slot_change_relevance * best
    asked_keys = {k for _, k in asked_slots or ()}
    filled: dict[int, frozenset[tuple[str, str]] | None] = {}

    def other_attribute(c: _Ranked) -> bool:
        if not asked_keys or slots_of is None or change[id(c)] is not None:
            return False
        if id(c) not in filled:
            filled[id(c)] = slots_of(c.entry.l2_full)
        keys = {k for _, k in filled[id(c)] or ()}
        return bool(keys) and not keys & asked_keys

    def fills_asked(c: _Ranked) -> str | None:
        if not asked_keys or slots_of is None:
            return None
        if id(c) not in filled:
            filled[id(c)] = slots_of(c.entry.l2_full)
        own = {k for who, k in filled[id(c)] or () if not about_asker or who == "self"}
        return next(iter(sorted(own & asked_keys)), None)

    # extracted facts take part too: "Maya lives in Boston" is outranked by a later "we moved to Denver"
    taking_part = [c for c in cands[:pool] if c.entry.content_hash in vectors and c.entry.created_at is not None
                   and c.fused * c.boost >= min(floor, change_floor, slot_change_floor)]
    taking_part.sort(key=lambda c: c.entry.created_at)
    if asked_keys and slots_of_many is not None:
        filled.update(zip(map(id, taking_part), slots_of_many([c.entry.l2_full for c in taking_part]) or []))
    change = {id(c): announces_change(c.entry.l2_full) for c in taking_part}
    # a later statement replaces an earlier one if it is relevant enough, or announces a change and
    # is relevant enough for that; one that only asks replaces nothing
    can_replace = {id(c): not only_asks(c.entry.l2_full)
                   and (c.fused * c.boost >= floor or (change[id(c)] is not None and c.fused * c.boost >= change_floor)
                        or (change[id(c)] is not None and c.fused * c.boost >= slot_change_floor
                            and fills_asked(c) is not None))
                   for c in taking_part}
    if about_asker:
        # "What was our grocery spend?" asks for the asker's value: "She spends $600 a month" (a
        # friend's) replaces nothing, unless it reports a change ("She increased my dose")
        for c in taking_part:
            if change[id(c)] is None and about_someone_else(c.entry.l2_full):
                can_replace[id(c)] = False
    centred = {}
    for c in taking_part:
        v = vectors[c.entry.content_hash] - mean
        centred[id(c)] = v / (float(np.linalg.norm(v)) or 1.0)
    # an earlier statement lifts a later one by its own relevance, not by a lift it got itself: else
    # one loosely related turn would start a chain that ends at the newest turn of all
    relevant = {id(c): c.fused * c.boost for c in taking_part}
    pairs: list[tuple[str, str, str]] = []
    if slot_lift:
        for i, later in enumerate(taking_part):
            if not can_replace[id(later)]:
                continue
            key = fills_asked(later)
            if key is None:
                continue
            others = list(taking_part[:i])
            if slot_over_other:
                others += [c for c in taking_part[i + 1:] if other_attribute(c)]
            for earlier in others:
                if relevant[id(earlier)] < floor or earlier.entry.actor != later.entry.actor:
                    continue
                if earlier.entry.created_at == later.entry.created_at:
                    continue
                if earlier.entry.created_at > later.entry.created_at and not slot_over_other:
                    continue
                above = relevant[id(earlier)] * 1.001 * (1 + 1e-6 * i)
                if later.fused * later.boost < above and later.fused > 0:
                    later.boost = above / later.fused
                    pairs.append((later.entry.id, earlier.entry.id, f"slot:{key}"))
                    if "latest_first" not in later.matched_by:
                        later.matched_by.append("latest_first")
                    if "superseded_later" not in earlier.matched_by:
                        earlier.matched_by.append("superseded_later")
    for i, later in enumerate(taking_part):
        if not can_replace[id(later)]:
            continue
        checked = False
        for earlier in taking_part[:i]:
            if relevant[id(earlier)] < floor:
                continue
            if earlier.entry.created_at >= later.entry.created_at or earlier.entry.actor != later.entry.actor:
                continue
            if float(centred[id(earlier)] @ centred[id(later)]) < same_topic:
                continue
            if not checked:
                checked = True
                if other_attribute(later):
                    break
            # two later statements lifted over the same earlier one keep their order in time
            above = relevant[id(earlier)] * 1.001 * (1 + 1e-6 * i)
            if later.fused * later.boost < above and later.fused > 0:
                later.boost = above / later.fused
                pairs.append((later.entry.id, earlier.entry.id,
                              f"change:{change[id(later)]}" if change[id(later)] else "same_topic"))
                if "latest_first" not in later.matched_by:
                    later.matched_by.append("latest_first")
                if "superseded_later" not in earlier.matched_by:
                    earlier.matched_by.append("superseded_later")
    return pairs
