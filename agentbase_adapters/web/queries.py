"""Every aggregate the dashboard shows, built from the kernel's public calls only.

The views never touch the kernel directly for numbers: they call ``Queries``. Today an aggregate
is computed from one scan of the scope (``Kernel.list`` paged, with superseded and expired
entries), kept for ``ttl`` seconds so one page of charts costs one scan. When the kernel grows
SQL aggregates (wished for in /work/notes/kernel-needs.md), only this module changes.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import logging
import os
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, TypedDict, cast

from agentbase_kernel import (
    AgentBaseError,
    ContextType,
    Entry,
    EntryNotFound,
    HistoryEvent,
    Kernel,
    Scope,
    SessionNotFound,
)

__all__ = ["AGE_BINS", "ENTITY_PREFIX", "TIMELINE_SPANS", "Queries", "ScanRow", "ScopeArgs", "SessionScopeArgs", "entity_type",
           "is_quantity", "scope_args", "scope_label", "tidy_graph"]

ENTITY_PREFIX = "ner_"
# spaCy's numeric kinds: counts and amounts, not things to draw or browse by
_QUANTITIES = frozenset({"CARDINAL", "QUANTITY", "PERCENT", "MONEY", "ORDINAL"})
# labels the small English model often gives a lone first name or word wrongly (Alice -> ORG): shown
# for one word only when other mentions agree
_DOUBTFUL = frozenset({"ORG", "NORP", "PRODUCT", "WORK_OF_ART", "LANGUAGE", "LAW", "NAME", "MISC"})


def is_quantity(text: str, label: str | None = None) -> bool:
    """A number, an amount or an age ("5 years old", "2023", "$40"): not an entity to show."""
    return (label or "").upper() in _QUANTITIES or any(ch.isdigit() for ch in text)


def entity_type(text: str, labels: Counter[str]) -> str | None:
    """The entity's type when its mentions agree (4 in 5 at least), else ``None`` (unsure).

    One mention of a one-word entity with a label the small model often gets wrong is unsure too.
    """
    if not labels:
        return None
    label, n = labels.most_common(1)[0]
    total = sum(labels.values())
    if n / total < 0.8:
        return None
    if label.upper() in _DOUBTFUL and len(text.split()) == 1 and total < 2:
        return None
    return label


def tidy_graph(graph: dict[str, Any]) -> dict[str, Any]:
    """``Kernel.entity_graph`` for people to read: one node per name (the kernel keeps one per label),
    numbers and quantities dropped, and a ``type`` only where the labels agree (``entity_type``)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for node in graph.get("nodes", []):
        if not is_quantity(str(node.get("text", "")), node.get("label")):
            groups.setdefault(str(node["norm"]), []).append(node)
    nodes: list[dict[str, Any]] = []
    moved: dict[Any, Any] = {}
    for norm, members in groups.items():
        labels: Counter[str] = Counter()
        texts: Counter[str] = Counter()
        for m in members:
            labels[str(m.get("label") or "")] += max(int(m["entries"]), 1)
            texts[str(m["text"])] += int(m["entries"])
            moved[m["id"]] = members[0]["id"]
        text = texts.most_common(1)[0][0]
        labels.pop("", None)
        nodes.append({"id": members[0]["id"], "norm": norm, "text": text, "entries": sum(texts.values()),
                      "type": entity_type(text, labels), "labels": dict(labels)})
    nodes.sort(key=lambda n: -n["entries"])
    edges = [{**e, "a": moved[e["a"]], "b": moved[e["b"]]} for e in graph.get("edges", [])
             if e["a"] in moved and e["b"] in moved and moved[e["a"]] != moved[e["b"]]]
    return {**graph, "nodes": nodes, "edges": edges}

_log = logging.getLogger(__name__)

# Age bins of the freshness view: (label, upper bound in days).
AGE_BINS: tuple[tuple[str, float], ...] = (
    ("< 1 day", 1), ("1-7 days", 7), ("1-4 weeks", 28), ("1-3 months", 91), ("3-6 months", 182),
    ("6-12 months", 365), ("> 1 year", float("inf")))
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# the timeline's ranges, ending now ("all": from the first entry); "auto" picks one from the data
TIMELINE_SPANS: dict[str, timedelta] = {"auto": timedelta(0), "day": timedelta(days=1), "week": timedelta(days=7),
                                        "month": timedelta(days=30), "all": timedelta(0)}
_BIN_NAMES = {"day": "hour", "week": "6 hours", "month": "day", "days": "day", "weeks": "week", "months": "month"}


class SessionScopeArgs(TypedDict, total=False):
    """The scope keyword arguments of ``Kernel.list_sessions`` (a session has no session scope)."""

    user_id: str
    agent_id: str
    project_id: str


class ScopeArgs(SessionScopeArgs, total=False):
    """``Scope.as_dict()`` as keyword arguments of the kernel calls: only the set fields, each a str."""

    session_id: str


def scope_args(scope: Scope) -> ScopeArgs:
    """``scope.as_dict()``, typed: its keys are ``Scope``'s four id fields, its values never ``None``."""
    return cast(ScopeArgs, scope.as_dict())


class ScanRow(NamedTuple):
    """The few fields of an entry that the aggregates read (a full ``Entry`` holds three texts).
    A tuple, not a dataclass: 100k of them are built per scan."""

    id: str
    context_type: str
    category: str | None
    tags: tuple[str, ...]
    scope: str
    created_at: datetime | None
    updated_at: datetime | None
    invalid_at: datetime | None
    superseded_by: str | None
    actor: str | None
    abstract: str
    role: str | None
    expires_at: datetime | None
    source: str | None  # the write path (adapter) that made it
    written_by: str | None  # the acting agent, when one was named


@functools.lru_cache(maxsize=4096)
def scope_label(scope: Scope) -> str:
    """``user:alice agent:bot`` style label; ``global`` for an entry without ids."""
    parts = [f"{k.removesuffix('_id')}:{v}" for k, v in scope.as_dict().items()]
    return " ".join(parts) or "global"


def _row(e: Entry) -> ScanRow:
    ctype = e.context_type
    return ScanRow(e.id, ctype.value if isinstance(ctype, ContextType) else str(ctype), e.category, tuple(e.tags),
                   scope_label(e.scope), e.created_at, e.updated_at, e.invalid_at, e.superseded_by, e.actor,
                   e.l0_abstract, e.role, e.expires_at, e.source, e.written_by)


def _per_scan(fn: Any) -> Any:
    """Compute an aggregate once per scan of its scope: one snapshot's charts never change."""
    @functools.wraps(fn)
    def wrapper(self: Queries, scope: Scope, **kw: Any) -> Any:
        rows = self.rows(scope)
        key = (fn.__name__, scope, tuple(sorted(kw.items())))
        with self._lock:
            hit = self._derived.get(key)
        if hit is not None and hit[0] is rows:
            return hit[1]
        value = fn(self, rows, **kw)
        with self._lock:
            self._derived[key] = (rows, value)
        return value
    return wrapper


class Queries:
    """Aggregates over one scope of a kernel, cached for ``ttl`` seconds.

    Usage::

        q = Queries(kernel)
        q.counts(Scope(user_id="alice"))["by_type"]
    """

    def __init__(self, kernel: Kernel, *, ttl: float = 30.0, verify_every: float = 300.0) -> None:
        self.kernel = kernel
        self.ttl = ttl
        self.verify_every = verify_every
        self._lock = threading.Lock()
        self._cache: dict[Any, tuple[float, Any, tuple[int, ...]]] = {}
        self._running: dict[Any, threading.Event] = {}
        self._deleted: list[dict[str, Any]] = []
        self._derived: dict[Any, tuple[list[ScanRow], Any]] = {}

    def forget(self) -> None:
        """Drop the cached scans (after an edit made through the dashboard)."""
        with self._lock:
            self._cache = {k: v for k, v in self._cache.items() if k == "verify"}
            self._derived.clear()

    def _cached(self, key: Any, compute: Any, ttl: float, *, wait: bool) -> tuple[Any, float] | None:
        """``(value, age in seconds)`` of ``compute()``, computed in one background thread per key.

        A cached value is served as it is within ``ttl`` or while the file is unchanged; older, it
        is still served while the thread recomputes it (on 100k entries a scan takes seconds, so a
        page never waits for a re-scan). With nothing cached, ``wait`` waits for the thread (one
        scan however many pages ask), else returns ``None``. ``ttl <= 0`` turns the cache off."""
        if ttl <= 0 and wait:
            return compute(), 0.0
        with self._lock:
            hit = self._cache.get(key)
            age = time.monotonic() - hit[0] if hit else 0.0
            stale = hit is not None and age >= ttl and hit[2] != self._signature()
            running = self._running.get(key)
            if running is None and (hit is None or stale):
                running = self._running[key] = threading.Event()
                threading.Thread(target=self._refresh, args=(key, compute, running), daemon=True,
                                 name=f"agentbase-web-{key[0] if isinstance(key, tuple) else key}").start()
        if hit is not None:
            return hit[1], age
        if not wait or running is None:
            return None
        running.wait()
        with self._lock:
            hit = self._cache.get(key)
        if hit is None:  # the thread failed: compute here, so the page shows the error
            return compute(), 0.0
        return hit[1], time.monotonic() - hit[0]

    def _signature(self) -> tuple[int, ...]:
        """Size and mtime of the file and its WAL: unchanged means nothing was written since."""
        path = str(self.kernel.path)
        out: list[int] = []
        for p in (path, path + "-wal"):
            try:
                st = os.stat(p)
                out += [st.st_size, st.st_mtime_ns]
            except OSError:
                out += [-1, -1]
        return tuple(out)

    def _refresh(self, key: Any, compute: Any, done: threading.Event) -> None:
        try:
            signature = self._signature()
            value = compute()
            with self._lock:
                self._cache[key] = (time.monotonic(), value, signature)
        except AgentBaseError as exc:  # a closed kernel or a locked file: the next page view tries again
            _log.warning("dashboard: background %s failed: %s", key, exc)
        finally:
            with self._lock:
                self._running.pop(key, None)
            done.set()

    def warm_up(self) -> None:
        """Start the whole-file scan and the verify in the background (at server start)."""
        self._cached(("rows", Scope()), lambda: self._scan(Scope()), self.ttl, wait=False)
        self.verify(wait=False)

    # -- the scan ----------------------------------------------------------------------------
    def rows(self, scope: Scope) -> list[ScanRow]:
        return self.rows_and_age(scope)[0]

    def rows_and_age(self, scope: Scope) -> tuple[list[ScanRow], float]:
        """The scope's rows and how many seconds ago they were read."""
        got = self._cached(("rows", scope), lambda: self._scan(scope), self.ttl, wait=True)
        assert got is not None
        return got

    def age(self, scope: Scope) -> float | None:
        """Seconds since the scope's rows were read, or ``None`` when not cached."""
        with self._lock:
            hit = self._cache.get(("rows", scope))
        return None if hit is None else time.monotonic() - hit[0]

    def _scan(self, scope: Scope) -> list[ScanRow]:
        # one call: paging with offset re-reads the skipped rows (9.5 s vs 5.4 s on 100k)
        entries = self.kernel.list(**scope_args(scope), include_expired=True, include_invalid=True, limit=None)
        return [_row(e) for e in entries]

    @_per_scan
    def counts(self, rows: list[ScanRow]) -> dict[str, Any]:
        current = [r for r in rows if r.invalid_at is None]
        return {
            "entries": len(rows), "current": len(current), "superseded": len(rows) - len(current),
            "by_type": Counter(r.context_type for r in rows).most_common(),
            "by_category": Counter(r.category or "(none)" for r in rows).most_common(),
            "by_scope": Counter(r.scope for r in rows).most_common(),
        }

    def newest_first(self, scope: Scope, *, context_type: str | None = None, category: str | None = None,
                     tags: list[str] | None = None, role: str | None = None,
                     now: datetime | None = None) -> list[str]:
        """Ids of the scope's unexpired entries (superseded included), newest creation time first.

        By ``created_at``, not by when a row was written: imported and back-dated entries take
        their place among the others. Read from the scope's scan (``ttl``), so the browser pages
        through one snapshot.
        """
        now = now or datetime.now(UTC)
        wanted = set(tags or ())
        keep = [r for r in self.rows(scope)
                if (r.expires_at is None or r.expires_at > now) and (context_type is None or r.context_type == context_type)
                and (category is None or r.category == category) and (role is None or r.role == role)
                and wanted <= set(r.tags)]
        oldest = datetime.min.replace(tzinfo=UTC)
        keep.sort(key=lambda r: (r.created_at or oldest, r.id), reverse=True)
        return [r.id for r in keep]

    def file_size(self) -> int:
        """Bytes on disk: the database plus its WAL and shared-memory files."""
        path = str(self.kernel.path)
        return sum(os.path.getsize(p) for p in (path, path + "-wal", path + "-shm") if os.path.exists(p))

    def verify(self, *, wait: bool = False) -> tuple[dict[str, Any] | None, float]:
        """``Kernel.verify()`` and its age: the integrity check reads the whole file (11 s on
        100k entries), so it runs in the background every ``verify_every`` seconds; ``None``
        until the first run ends unless ``wait``."""
        got = self._cached("verify", self.kernel.verify, self.verify_every, wait=wait)
        return got if got is not None else (None, 0.0)

    # -- the six charts ----------------------------------------------------------------------
    @_per_scan
    def timeline(self, rows: list[ScanRow], *, span: str = "auto", now: datetime | None = None) -> dict[str, Any]:
        """Entries created per time bin, by context type, over the last day / week / month or all of it.

        ``span="auto"`` takes the shortest of day, week and month that holds 90% of the entries
        (one old entry must not squeeze today's hundreds into a hairline), else all. The bin follows
        the span: hours for a day, 6 hours for a week, days for a month; for all, days up to 60
        days, weeks up to two years, else months. ``outside`` counts the entries before the span.
        """
        if span not in TIMELINE_SPANS:
            raise ValueError(f"span must be one of {', '.join(TIMELINE_SPANS)}, got {span!r:.40}")
        dated = sorted((r.created_at.astimezone(UTC), r.context_type) for r in rows if r.created_at is not None)
        empty = {"labels": [], "types": [], "series": {}, "span": span, "bin": "", "outside": 0, "start": None,
                 "end": None}
        if not dated:
            return empty
        end = max(now or datetime.now(UTC), dated[-1][0])
        if span == "auto":
            span = next((name for name in ("day", "week", "month")
                         if sum(t >= end - TIMELINE_SPANS[name] for t, _ in dated) >= 0.9 * len(dated)), "all")
        start = dated[0][0] if span == "all" else end - TIMELINE_SPANS[span]
        bins = _bins(start, end, span)
        types = sorted({t for _, t in dated})
        series = {t: [0] * len(bins) for t in types}
        edges = [b for b, _ in bins]
        outside = 0
        for when, ctype in dated:
            if when < bins[0][0]:
                outside += 1
                continue
            i = bisect.bisect_right(edges, when) - 1
            series[ctype][i] += 1
        series = {t: v for t, v in series.items() if any(v)}  # the legend names what the range holds
        types = list(series)
        return {"labels": [label for _, label in bins], "types": types, "series": series, "span": span,
                "bin": _BIN_NAMES[span if span != "all" else _all_bin(start, end)], "outside": outside,
                "start": bins[0][0], "end": end}

    @_per_scan
    def heatmap(self, rows: list[ScanRow]) -> list[list[int]]:
        """7 x 24 counts of entries created, weekday (Monday first) by hour, UTC."""
        grid = [[0] * 24 for _ in range(7)]
        for r in rows:
            if r.created_at is not None:
                grid[r.created_at.weekday()][r.created_at.hour] += 1
        return grid

    @_per_scan
    def sunburst(self, rows: list[ScanRow], *, max_children: int = 12) -> dict[str, Any]:
        """type -> category -> tag counts; small siblings beyond ``max_children`` fold into "other"."""
        tree: dict[str, dict[str, Counter[str]]] = {}
        for r in rows:
            cats = tree.setdefault(r.context_type, {})
            tags = cats.setdefault(r.category or "(none)", Counter())
            user_tags = [t for t in r.tags if not t.startswith("ner_")]
            for t in user_tags or ["(untagged)"]:
                tags[t] += 1

        def fold(counter: Counter[str]) -> list[dict[str, Any]]:
            top = counter.most_common(max_children)
            rest = sum(counter.values()) - sum(n for _, n in top)
            nodes = [{"name": k, "value": n, "children": []} for k, n in top]
            return nodes + ([{"name": "other", "value": rest, "children": []}] if rest else [])

        children: list[dict[str, Any]] = []
        for ctype, cats in sorted(tree.items()):
            cat_nodes: list[dict[str, Any]] = [{"name": cat, "value": sum(tags.values()), "children": fold(tags)}
                         for cat, tags in sorted(cats.items(), key=lambda kv: -sum(kv[1].values()))]
            children.append({"name": ctype, "value": sum(c["value"] for c in cat_nodes), "children": cat_nodes})
        return {"name": "all", "value": sum(c["value"] for c in children), "children": children}

    @_per_scan
    def freshness(self, rows: list[ScanRow], *, now: datetime | None = None) -> list[dict[str, Any]]:
        """Age histogram (by creation time) split into current and superseded entries."""
        now = now or datetime.now(UTC)
        bins: list[dict[str, Any]] = [{"label": label, "current": 0, "superseded": 0} for label, _ in AGE_BINS]
        for r in rows:
            if r.created_at is None:
                continue
            age = (now - r.created_at).total_seconds() / 86400
            for i, (_, upper) in enumerate(AGE_BINS):
                if age < upper:
                    bins[i]["superseded" if r.invalid_at is not None else "current"] += 1
                    break
        return bins

    @_per_scan
    def tag_counts(self, rows: list[ScanRow], *, limit: int = 150) -> list[tuple[str, int]]:
        """The most used tags the callers gave (not the ``ner_*`` tags NER adds)."""
        return Counter(t for r in rows for t in r.tags if not t.startswith(ENTITY_PREFIX)).most_common(limit)

    @_per_scan
    def entity_counts(self, rows: list[ScanRow], *, limit: int = 150) -> list[tuple[str, int]]:
        """The most mentioned entities (``ner_*`` tags, prefix dropped), numbers and quantities left out."""
        names = (t.removeprefix(ENTITY_PREFIX) for r in rows for t in r.tags if t.startswith(ENTITY_PREFIX))
        return Counter(n for n in names if not is_quantity(n)).most_common(limit)

    def activity(self, scope: Scope, *, limit: int = 50) -> list[dict[str, Any]]:
        """The latest history events of the scope: ADD / UPDATE / DELETE rows plus supersessions.

        The kernel has no scope-wide history call yet, so the events come from the histories of
        the most recently touched entries; an entry deleted from the scope is no longer listed,
        so its DELETE shows only when the dashboard itself made it (see kernel-needs.md).
        """
        events = list(self._recent_events(scope, limit=limit))
        with self._lock:
            events.extend(e for e in self._deleted if _in_scope(e["scope_obj"], scope))
        events.sort(key=lambda e: e["at"], reverse=True)
        return events[:limit]

    @_per_scan
    def _recent_events(self, rows: list[ScanRow], *, limit: int) -> list[dict[str, Any]]:
        recent = sorted((r for r in rows if r.updated_at or r.created_at),
                        key=lambda r: max(t for t in (r.updated_at, r.created_at) if t), reverse=True)[:limit]
        events: list[dict[str, Any]] = []
        for r in recent:
            for h in self.kernel.history(r.id):
                events.append(_event(h, r))
            if r.superseded_by and r.invalid_at:
                events.append({"at": r.invalid_at, "event": "SUPERSEDE", "entry_id": r.id,
                               "actor": _actor(None, r), "role": None, "text": r.abstract,
                               "detail": f"by {r.superseded_by}", "scope": r.scope, "via": r.source or ""})
        return events

    def remember_delete(self, entry: Entry, actor: str) -> None:
        """Keep a DELETE made through the dashboard for the feed (the kernel cannot list it)."""
        event = {"at": datetime.now(UTC), "event": "DELETE", "entry_id": entry.id, "actor": actor,
                 "role": entry.role, "text": entry.l0_abstract, "detail": "", "scope": scope_label(entry.scope),
                 "scope_obj": entry.scope, "via": "dashboard"}
        with self._lock:
            self._deleted = [event, *self._deleted][:200]

    # -- one entry ---------------------------------------------------------------------------
    def superseded(self, entry_id: str) -> list[ScanRow] | None:
        """Entries that ``entry_id`` replaced (its predecessors), from the whole-file scan;
        ``None`` while that scan is still running (an entry page never waits seconds for it)."""
        whole = Scope()
        got = self._cached(("rows", whole), lambda: self._scan(whole), self.ttl, wait=self.ttl <= 0)
        if got is None:
            return None
        return [r for r in got[0] if r.superseded_by == entry_id]

    def successors(self, entry: Entry, *, limit: int = 20) -> list[Entry]:
        chain: list[Entry] = []
        seen = {entry.id}
        nxt = entry.superseded_by
        while nxt and nxt not in seen and len(chain) < limit:
            seen.add(nxt)
            try:
                e = self.kernel.get(nxt)
            except EntryNotFound:
                break
            chain.append(e)
            nxt = e.superseded_by
        return chain

    def source_turns(self, entry: Entry) -> list[Any]:
        """The session messages this entry was made from (turn entries only; see kernel-needs.md)."""
        if not entry.session_id:
            return []
        try:
            self.kernel.get_session(entry.session_id)
        except SessionNotFound:
            return []
        return [m for m in self.kernel.list_messages(entry.session_id) if m.entry_id == entry.id]

    def entities_of(self, entry: Entry) -> list[str]:
        return [t.removeprefix(ENTITY_PREFIX) for t in entry.tags if t.startswith(ENTITY_PREFIX)]

    def entity_graph(self, scope: Scope, *, entity: str | None, limit: int) -> dict[str, Any]:
        """``Kernel.entity_graph``, cached like the scans (its GROUP BY reads every link of the scope)."""
        got = self._cached(("entities", scope, entity, limit),
                           lambda: self.kernel.entity_graph(entity=entity, **scope_args(scope), limit=limit),
                           self.ttl, wait=True)
        assert got is not None  # wait=True always yields a value
        return tidy_graph(got[0])

    def session_origin(self, session: Any) -> str:
        """Which adapter made a session: the write path of the entry its first message made.

        Streams (``stream-<hash>``: one write at a time, from Mem0, the LangGraph store or the
        Minimal adapter) say so, with their key.
        """
        source = None
        for message in self.kernel.list_messages(session.id, limit=5):
            if message.entry_id:
                try:
                    source = self.kernel.get(message.entry_id).source
                except EntryNotFound:
                    continue
                break
        stream = session.metadata.get("stream") if isinstance(session.metadata, dict) else None
        if stream is not None:
            return f"{source or 'adapter'} writes, one at a time (stream {str(stream)[:40]})"
        return source or "unknown"

    # -- traces ------------------------------------------------------------------------------
    def traces(self, scope: Scope, *, limit: int = 50) -> list[dict[str, Any]]:
        return self.kernel.trace_session(**scope_args(scope), limit=limit)

    def trace(self, trace_id: str, *, search: int = 500) -> dict[str, Any] | None:
        """One stored trace by id, among the ``search`` most recent (the kernel has no get-by-id)."""
        return next((t for t in self.kernel.trace_session(limit=search) if t["id"] == trace_id), None)

    def replay(self, trace: dict[str, Any]) -> Any:
        """Run the trace's query again in its scope without recording a new trace."""
        cfg = dataclasses.replace(self.kernel.config.retrieval, record_traces=False)
        scope = {k: v for k, v in trace.get("scope", {}).items()
                 if k in ("user_id", "agent_id", "project_id", "session_id")}
        return self.kernel.find(trace["query"], top_k=max(10, len(trace.get("result_ids", []))), config=cfg, **scope)


def _all_bin(start: datetime, end: datetime) -> str:
    days = (end - start).days
    return "days" if days <= 60 else "weeks" if days <= 730 else "months"


def _bins(start: datetime, end: datetime, span: str) -> list[tuple[datetime, str]]:
    """``(bin start, label)`` from the bin holding ``start`` to the one holding ``end``."""
    kind = span if span != "all" else _all_bin(start, end)
    out: list[tuple[datetime, str]] = []
    if kind in ("months",):
        at = datetime(start.year, start.month, 1, tzinfo=UTC)
        while at <= end:
            out.append((at, at.strftime("%Y-%m")))
            at = datetime(at.year + at.month // 12, at.month % 12 + 1, 1, tzinfo=UTC)
        return out
    if kind == "weeks":
        at = datetime(start.year, start.month, start.day, tzinfo=UTC) - timedelta(days=start.weekday())
        step, fmt = timedelta(days=7), "%Y-%m-%d"
    elif kind in ("month", "days"):
        at, step, fmt = datetime(start.year, start.month, start.day, tzinfo=UTC), timedelta(days=1), "%m-%d"
        if kind == "days" and start.year != end.year:
            fmt = "%Y-%m-%d"
    elif kind == "week":
        at = start.replace(minute=0, second=0, microsecond=0, hour=start.hour - start.hour % 6)
        step, fmt = timedelta(hours=6), "%a %H:00"
    else:  # day
        at, step, fmt = start.replace(minute=0, second=0, microsecond=0), timedelta(hours=1), "%H:00"
    while at <= end:
        out.append((at, at.strftime(fmt)))
        at += step
    return out


def _event(h: HistoryEvent, r: ScanRow) -> dict[str, Any]:
    text = h.new_value if h.new_value is not None else h.old_value
    return {"at": h.created_at, "event": h.event, "entry_id": h.entry_id, "actor": _actor(h.actor, r), "role": h.role,
            "text": (text or r.abstract)[:200], "detail": "", "scope": r.scope, "via": r.source or ""}


def _actor(named: str | None, r: ScanRow) -> str:
    """Who made the change: the actor the caller named, else the acting agent, else the write path."""
    return named or r.written_by or r.actor or r.source or "unknown"


def _in_scope(entry_scope: Scope, scope: Scope) -> bool:
    return all(getattr(entry_scope, k) == v for k, v in scope.as_dict().items())
