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
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..text.changes import about_someone_else, announces_change, only_asks

__all__ = ["latest_first"]

Slots = frozenset[tuple[str, str]]
Pair = tuple[str, str, str]


class _Ranked(Protocol):
    entry: Any
    fused: float
    boost: float
    matched_by: list[str]


def latest_first(cands: Sequence[_Ranked], vectors: dict[str, np.ndarray], *, relevance: float,
                 same_topic: float, pool: int, change_relevance: float | None = None,
                 about_asker: bool = False, asked_slots: Slots | None = None,
                 slots_of: Callable[[str], Slots | None] | None = None,
                 slots_of_many: Callable[[list[str]], list[Slots] | None] | None = None,
                 slot_lift: bool = True, slot_over_other: bool = False,
                 slot_change_relevance: float | None = None) -> list[Pair]:
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
    best = cands[0].fused * cands[0].boost if cands else 0.0
    known = [c for c in cands if c.entry.content_hash in vectors]
    if best <= 0 or len(known) < 2:
        return []
    floors = _Floors.of(best, relevance, change_relevance, slot_change_relevance, asked_slots)
    slots = _Slots(asked_slots, about_asker, slots_of)
    part = _Pass.over(cands, vectors, pool, floors, slots, slots_of_many, about_asker)
    if slot_lift:
        part.lift_asked_slot(slot_over_other)
    part.lift_same_topic(_centred(part.statements, vectors, known), same_topic)
    return part.pairs


@dataclass(frozen=True)
class _Floors:
    """The least score a statement needs to take part: as an earlier statement or a plain later one
    (``relevant``), as a later one that announces a change (``change``: the current value often shares
    few words with the question), and as one that also fills the asked slot (``slot_change``)."""

    relevant: float
    change: float
    slot_change: float

    @classmethod
    def of(cls, best: float, relevance: float, change_relevance: float | None,
           slot_change_relevance: float | None, asked_slots: Slots | None) -> _Floors:
        change = (relevance if change_relevance is None else change_relevance) * best
        slot_change = change if slot_change_relevance is None or not asked_slots else slot_change_relevance * best
        return cls(relevance * best, change, slot_change)


class _Slots:
    """The attributes the statements fill, parsed at most once each, against the ones the question asks."""

    def __init__(self, asked_slots: Slots | None, about_asker: bool,
                 slots_of: Callable[[str], Slots | None] | None) -> None:
        self.asked_keys = {k for _, k in asked_slots or ()}
        self.about_asker = about_asker
        self._slots_of = slots_of
        self._filled: dict[int, Slots | None] = {}

    def parse_together(self, statements: list[_Ranked],
                       slots_of_many: Callable[[list[str]], list[Slots] | None] | None) -> None:
        """Parse all the statements taking part in one batch (spaCy's ``pipe``): cheaper than one by one."""
        if self.asked_keys and slots_of_many is not None:
            self._filled.update(zip(map(id, statements), slots_of_many([c.entry.l2_full for c in statements]) or []))

    def _of(self, c: _Ranked, slots_of: Callable[[str], Slots | None]) -> Slots | None:
        if id(c) not in self._filled:
            self._filled[id(c)] = slots_of(c.entry.l2_full)
        return self._filled[id(c)]

    def asked_key(self, c: _Ranked) -> str | None:
        """The asked attribute ``c`` fills (of the asker, when the question is about the asker), if any."""
        if not self.asked_keys or self._slots_of is None:
            return None
        own = {k for who, k in self._of(c, self._slots_of) or () if not self.about_asker or who == "self"}
        return next(iter(sorted(own & self.asked_keys)), None)

    def other_attribute(self, c: _Ranked, change: str | None) -> bool:
        """``c`` fills attributes, none of them asked, and announces no change: it answers something else."""
        if not self.asked_keys or self._slots_of is None or change is not None:
            return False
        keys = {k for _, k in self._of(c, self._slots_of) or ()}
        return bool(keys) and not keys & self.asked_keys


@dataclass
class _Pass:
    """One call's statements taking part (oldest first) and what is known about each, keyed by ``id``."""

    statements: list[_Ranked]
    floors: _Floors
    slots: _Slots
    change: dict[int, str | None]
    can_replace: dict[int, bool]
    # an earlier statement lifts a later one by its own relevance, not by a lift it got itself: else
    # one loosely related turn would start a chain that ends at the newest turn of all
    relevant: dict[int, float]
    pairs: list[Pair] = field(default_factory=list)

    @classmethod
    def over(cls, cands: Sequence[_Ranked], vectors: dict[str, np.ndarray], pool: int, floors: _Floors,
             slots: _Slots, slots_of_many: Callable[[list[str]], list[Slots] | None] | None,
             about_asker: bool) -> _Pass:
        statements = _taking_part(cands, vectors, pool, min(floors.relevant, floors.change, floors.slot_change))
        slots.parse_together(statements, slots_of_many)
        change = {id(c): announces_change(c.entry.l2_full) for c in statements}
        can_replace = _can_replace(statements, change, floors, slots, about_asker)
        return cls(statements, floors, slots, change, can_replace, {id(c): c.fused * c.boost for c in statements})

    def lift_asked_slot(self, over_other: bool) -> None:
        """A later statement that fills the asked slot ranks above every earlier relevant statement of its
        speaker, on the same topic or not (and, ``over_other``, above a later one answering something else)."""
        for i, later in enumerate(self.statements):
            if not self.can_replace[id(later)]:
                continue
            key = self.slots.asked_key(later)
            if key is None:
                continue
            others = list(self.statements[:i])
            if over_other:
                others += [c for c in self.statements[i + 1:] if self.slots.other_attribute(c, self.change[id(c)])]
            for earlier in others:
                if self.relevant[id(earlier)] < self.floors.relevant or earlier.entry.actor != later.entry.actor:
                    continue
                if earlier.entry.created_at == later.entry.created_at:
                    continue
                if earlier.entry.created_at > later.entry.created_at and not over_other:
                    continue
                self._raise(later, earlier, i, f"slot:{key}")

    def lift_same_topic(self, centred: dict[int, np.ndarray], same_topic: float) -> None:
        """A later statement of the same speaker on the same topic (centred cosine) ranks above an earlier
        relevant one, unless it fills another attribute than the one asked."""
        for i, later in enumerate(self.statements):
            if not self.can_replace[id(later)]:
                continue
            checked = False
            for earlier in self.statements[:i]:
                if self.relevant[id(earlier)] < self.floors.relevant:
                    continue
                if earlier.entry.created_at >= later.entry.created_at or earlier.entry.actor != later.entry.actor:
                    continue
                if float(centred[id(earlier)] @ centred[id(later)]) < same_topic:
                    continue
                if not checked:
                    checked = True
                    if self.slots.other_attribute(later, self.change[id(later)]):
                        break
                change = self.change[id(later)]
                self._raise(later, earlier, i, f"change:{change}" if change else "same_topic")

    def _raise(self, later: _Ranked, earlier: _Ranked, i: int, why: str) -> None:
        """Score ``later`` just above ``earlier`` (which stays in the results, just below); two later
        statements lifted over the same earlier one keep their order in time (the ``i`` term)."""
        above = self.relevant[id(earlier)] * 1.001 * (1 + 1e-6 * i)
        if later.fused * later.boost < above and later.fused > 0:
            later.boost = above / later.fused
            self.pairs.append((later.entry.id, earlier.entry.id, why))
            if "latest_first" not in later.matched_by:
                later.matched_by.append("latest_first")
            if "superseded_later" not in earlier.matched_by:
                earlier.matched_by.append("superseded_later")


def _taking_part(cands: Sequence[_Ranked], vectors: dict[str, np.ndarray], pool: int, lowest: float) -> list[_Ranked]:
    """The best ``pool`` candidates with a vector and a time that score at least ``lowest``, oldest first.

    Extracted facts take part too: "Maya lives in Boston" is outranked by a later "we moved to Denver".
    """
    statements = [c for c in cands[:pool] if c.entry.content_hash in vectors and c.entry.created_at is not None
                  and c.fused * c.boost >= lowest]
    statements.sort(key=lambda c: c.entry.created_at)
    return statements


def _can_replace(statements: list[_Ranked], change: dict[int, str | None], floors: _Floors, slots: _Slots,
                 about_asker: bool) -> dict[int, bool]:
    """Which statements may replace an earlier one: relevant enough, or announcing a change and relevant
    enough for that. One that only asks replaces nothing; when the question asks for the asker's value,
    neither does one about someone else ("She spends $600 a month"), unless it reports a change."""
    can = {id(c): not only_asks(c.entry.l2_full)
           and (c.fused * c.boost >= floors.relevant
                or (change[id(c)] is not None and c.fused * c.boost >= floors.change)
                or (change[id(c)] is not None and c.fused * c.boost >= floors.slot_change
                    and slots.asked_key(c) is not None))
           for c in statements}
    if about_asker:
        for c in statements:
            if change[id(c)] is None and about_someone_else(c.entry.l2_full):
                can[id(c)] = False
    return can


def _centred(statements: list[_Ranked], vectors: dict[str, np.ndarray], known: list[_Ranked]) -> dict[int, np.ndarray]:
    """Each statement's vector less the mean of all candidates' (the speaker's name, the conversation's
    style), at unit length: two statements of one attribute then pair up, two merely alike do not."""
    mean = np.mean([vectors[c.entry.content_hash] for c in known], axis=0)
    centred = {}
    for c in statements:
        v = vectors[c.entry.content_hash] - mean
        centred[id(c)] = v / (float(np.linalg.norm(v)) or 1.0)
    return centred
