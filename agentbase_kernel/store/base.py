"""What every backend shares: the entry filter, the timestamp format and BM25's IDF.

The storage interface itself is ``Store`` in ``store/protocol.py``; the metadata filter language
is in ``store/filters.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, overload

from ..records import Scope
from ..rules.trust import ROLE_TRUST, UNKNOWN_ROLE_TRUST, default_trust
from .filters import MetadataFilter, parse_metadata_filter

__all__ = ["NO_EMBEDDER", "ROLE_TRUST", "UNKNOWN_ROLE_TRUST", "EntryFilter", "default_trust", "iso", "key_matches", "parse_iso",
           "utcnow"]

# what a file records as its embedder when it is written without one (``check_embedder``)
NO_EMBEDDER = "none"

def utcnow() -> datetime:
    return datetime.now(timezone.utc)


@overload
def iso(value: datetime) -> str: ...
@overload
def iso(value: None) -> None: ...
@overload
def iso(value: datetime | None) -> str | None: ...
def iso(value: datetime | None) -> str | None:
    """Fixed-width ISO 8601 in UTC, so that text order is time order."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    # isoformat pads the year to four digits; strftime's %Y does not on glibc (year 1 -> "1-01-01")
    return value.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds") + "+00:00"


def parse_iso(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


@dataclass
class EntryFilter:
    """Which entries a read may see. Scope fields match exactly; ``None`` is unconstrained.

    ``metadata`` is a filter mapping (``store/filters.py``), parsed once (``metadata_tree``) and
    compiled by the store once per call.
    """

    scope: Scope = field(default_factory=Scope)
    context_type: str | None = None
    category: str | None = None
    tags: tuple[str, ...] | None = None
    role: str | None = None
    include_expired: bool = False
    include_invalid: bool = False
    as_of: datetime | None = None
    metadata: dict[str, Any] | None = None
    since: datetime | None = None
    until: datetime | None = None
    date_window: tuple[date, date] | None = None
    # archived entries (capacity, consolidation): False hides them, True shows only them, None both
    archived: bool | None = False
    # governance (rules/trust.py, rules/permissions.py): entries below this trust, and
    # entries inside any of these scopes (each set field equal), are left out
    min_trust: float | None = None
    # entries whose confidence (moved by outcomes, rules/outcomes.py) is below this are left out
    min_confidence: float | None = None
    exclude_scopes: tuple[Scope, ...] = ()
    # only entries written by one of these sources (``Entry.source``); these ids are left out - a
    # bulk delete by a non-person kernel uses both to spare what approval zones hold (proposals.py)
    sources: tuple[str, ...] | None = None
    exclude_ids: frozenset[str] = frozenset()
    # the entry text holds this exact substring (case-sensitive): a file backend's literal grep
    text_contains: str | None = None
    _parsed: tuple[dict[str, Any], MetadataFilter] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def metadata_tree(self) -> MetadataFilter | None:
        """``metadata`` parsed: the tree a checked filter carries (``filters.check_metadata_filter``),
        else parsed on first use and kept while ``metadata`` is the same object."""
        if not self.metadata:
            return None
        carried: MetadataFilter | None = getattr(self.metadata, "tree", None)
        if carried is not None:
            return carried
        if self._parsed is None or self._parsed[0] is not self.metadata:
            self._parsed = (self.metadata, parse_metadata_filter(self.metadata))
        return self._parsed[1]


def key_matches(norm: str, keys: Sequence[str]) -> list[str]:
    """The ``keys`` that name the entity ``norm``: equal to it, or its last part after ``/`` or ``.``
    (``EntryStore.entity_matches``)."""
    return [k for k in keys if norm == k or norm.endswith(("/" + k, "." + k))]


def bm25_idf(n: int, df: int) -> float:
    """FTS5's BM25 IDF, floored like FTS5 does so that very common terms still count a little.

    ``n`` (the scope's rows) and ``df`` may come from separate statements or a cache: a write
    committed between them can make df exceed n, which would be a log of a negative number; the
    scope holds at least df rows."""
    n = max(n, df)
    return max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
