"""Zero-LLM ingest: text in -> tiers, entities, dates, facts, vectors -> store.

Whatever arrives is stored verbatim (L2) first; analysis only adds tags, dates, tiers, facts and
links. Ingest never deletes: a newer fact on the same subject supersedes the older one by setting
its ``invalid_at``. The only model calls are the local NER pipeline and the local embedder.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from ..config import IngestConfig
from ..errors import EmbedderUnavailable, InvalidArgument
from ..records import AddResult, Entry, Message, Scope, Session
from ..rules.conflicts import conflict_reason
from ..rules.importance import rule_importance
from ..rules.trust import stamp
from ..rules.zones import is_human_approved
from ..store.base import NO_EMBEDDER, EntryFilter, utcnow
from ..store.protocol import EntryRow
from ..text import tokenize
from ..text.drift import find_drift
from ..text.targets import target_entities
from .roles import IngestStore
from .streams import StreamWriter, infer_speaker, leading_time
from .turns import is_turn, turn_context, turn_items

__all__ = ["Analysis", "Ingestor", "content_hash"]

Summarizer = Callable[[str], str]

# NER, dates, facts, tiers and the embedder read only this much of a text: a very long text must
# not hang a caller (docs/reliability.md). The text is still stored and FTS-indexed whole, and the
# instruction-like check still reads all of it.
_HEAD_CHARS = 100_000
_EMBED_BATCH = 64
# A queued entry the background embedder still cannot see after this long was rolled back (or its
# transaction is very long); it is dropped from the queue, and the next sweep or rebuild() finds it.
_PENDING_TTL_S = 10.0
# the background embedder waits at least this long before retrying an unavailable remote embedder
# (longer while its circuit breaker is open: until the breaker lets a trial request through)
_RETRY_MIN_S = 0.1

_log = logging.getLogger(__name__)


def content_hash(text: str) -> str:
    """md5 of the UTF-8 text: the same hash Mem0 uses, so ids and hashes line up."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


@dataclass
class Analysis:
    """Everything ingest derives from one text, before it touches the database."""

    text: str
    l0: str
    l1: str
    hash: str
    search_text: str
    entities: list[Any] = field(default_factory=list)
    dates: list[Any] = field(default_factory=list)
    facts: list[Any] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    @property
    def ner_tags(self) -> list[str]:
        return [f"ner_{e.norm}" for e in self.entities]

    @property
    def date_range(self) -> tuple[str | None, str | None]:
        if not self.dates:
            return None, None
        return min(d.start for d in self.dates).isoformat(), max(d.end for d in self.dates).isoformat()



def _entity_rows(text: str, analysis: Analysis) -> list[tuple[str, str, str]]:
    """What an entry is linked to: its named entities, then the code targets NER leaves out
    (relative paths, identifiers: ``text/targets.py``) - linked, never tags."""
    rows = [(e.norm, e.label, e.text) for e in analysis.entities]
    named = {norm for norm, _, _ in rows}
    return rows + [t for t in target_entities(text) if t[0] not in named]

class Ingestor:
    """Turns texts into stored entries. Owned by the kernel; adapters never see it.

    With ``defer_embedding``, ``add_many`` returns before the stored texts have vectors: they are
    searchable at once by full text and entities, and a background thread embeds them after the
    write commits. Derived facts are still embedded before the write, because the near-duplicate
    check compares their vectors, so what gets stored is the same in both modes.

    Usage::

        ingestor = Ingestor(store, config=IngestConfig(), ner=load_ner(), embedder=None)
        results = ingestor.add_many([{"text": "I live in Paris", "user_id": "u"}])
    """

    def __init__(self, store: IngestStore, *, config: IngestConfig, ner: Any, embedder: Any,
                 summarizer: Summarizer | None = None, defer_embedding: bool = False) -> None:
        self.store = store
        self.config = config
        self.ner = ner
        self.embedder = embedder
        self.summarizer = summarizer
        self.defer_embedding = defer_embedding
        self.texts_embedded = 0
        self._no_embedder_recorded = False
        self._lock = threading.Lock()
        self._pending: dict[str, float] = {}  # entry id -> when it was queued (monotonic seconds)
        # entry id -> (scope, hash, text) of each queued text until its vector is stored: find()
        # embeds its scope's share first (embed_awaiting)
        self._awaiting: dict[str, tuple[Scope, str, str]] = {}
        self.pending_ttl_s = _PENDING_TTL_S
        self._wake = threading.Condition(self._lock)
        self._worker: threading.Thread | None = None
        self._stopping = False
        self._busy = False
        self.embed_error: BaseException | None = None  # why the background embedder last stopped
        # set while the background embedder waits for an unavailable (remote) embedder to come back
        self.unavailable: EmbedderUnavailable | None = None

    @property
    def ner_stage(self) -> str:
        return getattr(self.ner, "stage", "off") if self.ner is not None else "off"

    # -- analysis ------------------------------------------------------------------------------
    def analyse_many(self, texts: Sequence[str], roles: Sequence[str | None],
                     references: Sequence[datetime | None], *, facts: Sequence[bool]) -> list[Analysis]:
        from ..text import dates as dates_mod
        from ..text import facts as facts_mod
        from ..text import tiers

        entity_lists: list[list[Any]]
        if self.config.ner and self.ner is not None:
            entity_lists = self.ner.extract_batch([t[:_HEAD_CHARS] for t in texts])
        else:
            entity_lists = [[] for _ in texts]
        out = []
        for text, role, ref, want_facts, entities in zip(texts, roles, references, facts, entity_lists):
            if role == "system":  # a session summary's own labels are not names
                entities = [e for e in entities if e.text not in tiers.SUMMARY_LABELS]
            clean = text.replace("\x00", " ")
            head = clean[:_HEAD_CHARS]
            mentions = dates_mod.resolve_dates(head, ref or utcnow()) if self.config.dates else []
            found = (facts_mod.extract_facts(head, role=role or "user", entities=entities)
                     if want_facts and self.config.facts else [])
            flags = ["instruction_like"] if self.config.poison_flags and facts_mod.looks_like_instruction(clean) else []
            if role in ("assistant", "tool", "ai", "function"):
                flags.append(f"from_{'assistant' if role == 'ai' else role}")
            out.append(Analysis(
                text=text, l0=tiers.make_l0(head, entities), l1=tiers.make_l1(head), hash=content_hash(text),
                search_text=tokenize.fts_text(clean), entities=entities, dates=mentions, facts=found, flags=flags))
        return out

    # -- embedding -----------------------------------------------------------------------------
    def embed_missing(self, items: Sequence[tuple[str, str]], batch_size: int = _EMBED_BATCH, *,
                      progress: Callable[[int, int], None] | None = None) -> int:
        """Embed each distinct text whose hash has no vector yet; returns how many were embedded.

        Texts go to the embedder shortest first, ``batch_size`` at a time, so one ``add_messages``
        call is one ``embed_batch`` call (one request for an HTTP embedder). A local model pads
        each run to its longest text, so the embedder should run what it gets in short sorted runs
        (``OnnxEmbedder`` does; docs/retrieval.md, "Where each default comes from"). ``progress(done,
        total)`` counts texts, after each batch.
        """
        if self.embedder is None or not items:
            return 0
        by_hash = dict(items)
        missing = sorted(self.store.missing_vectors(by_hash), key=lambda h: (len(by_hash[h]), h))
        done = 0
        for i in range(0, len(missing), batch_size):
            if self._stopping and threading.current_thread() is self._worker:
                break
            chunk = missing[i : i + batch_size]
            vectors = np.asarray(self.embedder.embed_batch([by_hash[h][:_HEAD_CHARS] for h in chunk]), dtype=np.float32)
            self.store.put_vectors(zip(chunk, vectors))
            done += len(chunk)
            with self._lock:
                self.texts_embedded += len(chunk)
            if progress is not None:
                progress(done, len(missing))
        return done

    def _embed_or_defer(self, items: Sequence[tuple[str, str]]) -> bool:
        """``embed_missing`` for a write, failing open: ``False`` when the embedder is unavailable.

        The texts then stay without vectors (FTS- and NER-searchable at once) and the caller
        queues them for the background embedder, which backfills them once the embedder is back.
        """
        try:
            self.embed_missing(items)
        except EmbedderUnavailable as exc:
            if exc.reason != "circuit open":  # the breaker bounds how often this is logged
                _log.warning("embedder unavailable, the write keeps its vectors queued: %s", exc)
            return False
        return True

    def _backfill(self, items: Sequence[tuple[str, str]]) -> bool:
        """Embed ``items`` in the background worker; while the embedder is unavailable, wait (for its
        breaker's cool-down) and retry with the whole backlog. ``False`` when stopped meanwhile."""
        while True:
            try:
                self.embed_missing(items)
            except EmbedderUnavailable as exc:
                deadline = time.monotonic() + max(exc.retry_in, _RETRY_MIN_S)
                with self._lock:
                    self.unavailable = exc
                    self._wake.notify_all()  # wait_embedded() stops waiting for a dead endpoint
                    while not self._stopping and (left := deadline - time.monotonic()) > 0:
                        self._wake.wait(left)
                    if self._stopping:
                        return False
                items = self.store.hashes_without_vector()
                continue
            with self._lock:
                self.unavailable = None
            return True

    # -- deferred embedding --------------------------------------------------------------------
    @property
    def pending(self) -> int:
        """Entries queued for the background embedder (0 when embedding is not deferred)."""
        with self._lock:
            return len(self._pending) + int(self._busy)

    def resume(self) -> bool:
        """Embed, in the background, every stored text without a vector (a crash or kill mid-way
        through deferred embedding leaves some): called when the kernel opens a file.

        Returns whether there was anything to embed.
        """
        if self.embedder is None or not self.store.hashes_without_vector():
            return False
        self._queue([], start=True)
        return True

    def _queue(self, entry_ids: Sequence[str], *, start: bool = False) -> None:
        if not entry_ids and not start:
            return
        now = time.monotonic()
        with self._lock:
            for entry_id in entry_ids:
                self._pending.setdefault(entry_id, now)
            if self._worker is None or not self._worker.is_alive():
                self._stopping = False
                self._busy = True  # its first sweep counts as work in progress
                self.embed_error = None
                self._worker = threading.Thread(target=self._work, name="agentbase-embed", daemon=True)
                self._worker.start()
            self._wake.notify_all()

    def _work(self) -> None:
        """Embed queued entries once their write has committed; first, whatever an earlier run left."""
        try:
            if not self._backfill(self.store.hashes_without_vector()):
                return
            while True:
                with self._lock:
                    while not self._pending and not self._stopping:
                        self._busy = False
                        self._wake.notify_all()
                        self._wake.wait()
                    if self._stopping:
                        return
                    ids = list(self._pending)
                    self._busy = True
                # this thread's own connection sees committed rows only: the caller's write may
                # still be open (a kernel transaction around add_many), or have rolled back
                visible = self.store.get_entries(ids)
                now = time.monotonic()
                with self._lock:
                    for entry_id in ids:
                        if entry_id in visible or now - self._pending.get(entry_id, now) > self.pending_ttl_s:
                            self._pending.pop(entry_id, None)
                if not self._backfill([(e.content_hash, e.l2_full) for e in visible.values()]):
                    return
                with self._lock:
                    for entry_id in visible:
                        self._awaiting.pop(entry_id, None)
                if not visible:
                    with self._lock:
                        self._wake.wait(0.02)
        except Exception as exc:  # a closed store, a failing embedder: the texts stay without vectors
            self.embed_error = exc
            _log.exception("background embedding stopped; Kernel.rebuild() embeds what is left")
        finally:
            with self._lock:
                self._busy = False
                self._pending.clear()
                self._awaiting.clear()
                self._wake.notify_all()

    def _await(self, entries: Sequence[Entry]) -> None:
        with self._lock:
            for e in entries:
                self._awaiting[e.id] = (Scope(e.user_id, e.agent_id, e.project_id, e.session_id), e.content_hash,
                                        e.l2_full)

    def embed_awaiting(self, scope: Scope, at_most: int) -> int:
        """Embed, in the caller's thread, up to ``at_most`` of ``scope``'s texts still queued for a vector
        (the newest first): a search right after writes ranks them by meaning too, not by their words
        alone. Returns how many of the scope's queued texts are still without a vector.

        The background embedder may be embedding the same texts meanwhile: storing a vector twice
        keeps the first (the store ignores the second), so the worst case is some repeated work.
        """
        with self._lock:
            mine = [(entry_id, h, text) for entry_id, (s, h, text) in self._awaiting.items() if _within(s, scope)]
        if not mine:
            return 0
        missing = self.store.missing_vectors({h for _, h, _ in mine})
        todo = [(h, text) for _, h, text in reversed(mine) if h in missing]
        todo = list(dict(todo).items())  # one vector per distinct text
        if at_most > 0 and todo:
            try:
                self.embed_missing(todo[:at_most])
            except EmbedderUnavailable:
                return len(todo)
            missing = self.store.missing_vectors({h for _, h, _ in mine})
        with self._lock:
            for entry_id, h, _ in mine:
                if h not in missing:
                    self._awaiting.pop(entry_id, None)
        return len({h for _, h, _ in mine if h in missing})

    def wait_embedded(self, timeout: float | None = None) -> bool:
        """Block until the background embedder has caught up.

        Call it outside any open write of this thread: rows that write has not committed are
        invisible to the embedder until then, and the rows of a rolled-back write count as
        pending for ``pending_ttl_s`` seconds.

        Returns:
            ``False`` if ``timeout`` ran out first, the embedder stopped on an error
            (``embed_error``; the texts it did not reach have no vector), or a remote embedder is
            unavailable (``unavailable``: the worker keeps retrying, the backlog stays queued).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._worker is not None and self._worker.is_alive() and (self._pending or self._busy):
                if self.unavailable is not None:
                    return False
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._wake.wait(left)
        return self.embed_error is None

    def close(self, *, wait: bool = False) -> None:
        """Stop the background embedder (after it has caught up, with ``wait``). Safe to call twice.

        What it had not embedded keeps no vector until the next deferred write (its worker first
        embeds every text without one) or ``Kernel.rebuild()``.
        """
        if wait:
            self.wait_embedded()
        with self._lock:
            worker = self._worker
            self._stopping = True
            self._wake.notify_all()
        if worker is not None and worker is not threading.current_thread():
            worker.join()

    # -- writes --------------------------------------------------------------------------------
    def add_many(self, items: Sequence[dict[str, Any]], *, progress: Callable[[int, int], None] | None = None,
                 message_ids: Sequence[str | None] | None = None) -> list[AddResult]:
        """Store many memories in one transaction (analysis and embedding happen before it).

        ``items`` come checked (``arguments.memory_item``: the text a non-empty str). A text the
        scope already holds (an exact duplicate, by content hash) is found before any analysis and
        only reinforced (``_known_duplicates``).
        """
        texts: list[str] = [item["text"] for item in items]
        # a stream write without a time of its own happened when it is stamped; without a speaker, it
        # was said by the name it opens with (ingest/streams.py)
        items = [infer_speaker({**item, "stamped_at": leading_time(text)}, text) if item.get("stream") else item
                 for item, text in zip(items, texts)]
        if self.embedder is None and not self._no_embedder_recorded:
            self.store.check_embedder(NO_EMBEDDER, 0)  # so that "auto" reopens the file as it was written
            self._no_embedder_recorded = True
        known = self._known_duplicates(items, texts, message_ids)
        analyses = self._analyse_new(items, texts, known)
        fact_rows = [[self._fact_row(item, fact) for fact in a.facts] if a is not None else []
                     for item, a in zip(items, analyses)]
        fact_analyses = self.analyse_many(
            [r["text"] for rows in fact_rows for r in rows], [r["role"] for rows in fact_rows for r in rows],
            [r.get("created_at") for rows in fact_rows for r in rows],
            facts=[False] * sum(len(rows) for rows in fact_rows))
        # deferred: facts are still embedded now, since _near_duplicate compares their vectors.
        # An item's own "defer_embedding" (True/False) overrides the config for it.
        defer = [self.embedder is not None and bool(self.defer_embedding if item.get("defer_embedding") is None
                                                     else item["defer_embedding"]) for item in items]
        pairs = [(content_hash(text), text) for text in texts]
        embedded = self._embed_or_defer([p for p, d in zip(pairs, defer) if not d]
                                        + [(a.hash, a.text) for a in fact_analyses])
        if not embedded:
            defer = [True] * len(items)  # fail open: stored now, vectors backfilled in the background
        with self.store.transaction():
            results = self._write(items, texts, analyses, known, fact_rows, iter(fact_analyses), message_ids,
                                  progress)
        if any(defer):
            queued = [r.entry for r, d in zip(results, defer) if d]
            if not embedded:  # the facts lack their vectors too
                queued += [fact.entry for r in results for fact in r.facts]
            self._await(queued)
            self._queue([e.id for e in queued])
        return results

    @staticmethod
    def _roles_and_times(items: Sequence[dict[str, Any]]) -> tuple[list[str | None], list[datetime | None]]:
        """What analysis reads each text as: who said it (a named human speaker gets facts about them
        by name, never "User") and when (a stream write without a time of its own reads relative
        dates against the date it is stamped with)."""
        roles = [item.get("actor") if item.get("role", "user") == "user" and item.get("actor") else
                 item.get("role", "user") for item in items]
        return roles, [item.get("created_at") or item.get("stamped_at") for item in items]

    def _known_duplicates(self, items: Sequence[dict[str, Any]], texts: Sequence[str],
                          message_ids: Sequence[str | None] | None) -> dict[int, Entry]:
        """Items (by position) whose text is already a live entry of their scope: what the insert
        would return as its duplicate, looked up by content hash before any analysis.

        Only plain writes qualify: a write that infers facts still extracts them, a stream write
        still moves its stream, a session turn is still attached to its message, and an archived
        duplicate is brought back by the insert itself - those go the usual way.
        """
        eligible = [n for n, item in enumerate(items)
                    if item.get("dedup", True) and not item.get("infer") and not item.get("stream")
                    and not (message_ids and message_ids[n])]
        if not eligible:
            return {}
        keys = [(_scope(items[n]), content_hash(texts[n])) for n in eligible]
        found = self.store.live_duplicates(keys)
        return {n: found[key] for n, key in zip(eligible, keys)
                if key in found and found[key].archived_at is None}

    def _wants_facts(self, item: dict[str, Any]) -> bool:
        """Whether an item's facts are extracted: it asks to infer them, and with ``facts_from="user"``
        it is the user's (role user, or no role)."""
        if not item.get("infer"):
            return False
        return self.config.facts_from == "all" or (item.get("role") or "user") == "user"

    def _analyse_new(self, items: Sequence[dict[str, Any]], texts: Sequence[str],
                     known: dict[int, Entry]) -> list[Analysis | None]:
        """The analysis of every item whose text is new (``None`` for the known duplicates)."""
        roles, refs = self._roles_and_times(items)
        todo = [n for n in range(len(items)) if n not in known]
        done = self.analyse_many([texts[n] for n in todo], [roles[n] for n in todo], [refs[n] for n in todo],
                                 facts=[self._wants_facts(items[n]) for n in todo])
        analyses: list[Analysis | None] = [None] * len(items)
        for n, analysis in zip(todo, done):
            analyses[n] = analysis
        return analyses

    def _write(self, items: Sequence[dict[str, Any]], texts: Sequence[str], analyses: Sequence[Analysis | None],
               known: dict[int, Entry], fact_rows: Sequence[list[dict[str, Any]]], facts: Any,
               message_ids: Sequence[str | None] | None,
               progress: Callable[[int, int], None] | None) -> list[AddResult]:
        """The write transaction's body: each item stored (or reinforced), its facts, its links."""
        results: list[AddResult] = []
        gap = self.config.stream_gap_minutes
        streams = StreamWriter(self.store, timedelta(minutes=gap) if gap > 0 else None)
        current = self.store.get_entries([e.id for e in known.values()]) if known else {}
        for n, (item, analysis, rows) in enumerate(zip(items, analyses, fact_rows)):
            if analysis is None:
                result = self._reinforce_known(item, texts[n], known[n], current.get(known[n].id))
                results.append(result)
                if progress is not None:
                    progress(n + 1, len(items))
                continue
            sid = streams.session_for(item) if item.get("stream") else None
            if sid is not None:
                item = {**item, "context": item.get("context") or streams.before(sid, item)}
            result = self._store_one(item, analysis)
            if sid is not None and result.event == "ADD":
                streams.append(sid, item, result.entry)
            mid = message_ids[n] if message_ids else None
            if mid:
                self.store.attach_entry(mid, result.entry.id, item["session_id"])
            for row in rows:
                fact = self._store_fact(row, next(facts))
                if fact is None:
                    continue
                self.store.link_entries(fact.entry.id, result.entry.id, "derived_from")
                if mid:
                    self.store.link_source(fact.entry.id, mid)
                    self.store.link_session(item["session_id"], fact.entry.id, "fact")
                result.facts.append(fact)
                result.superseded.extend(fact.superseded)
                result.conflicts.extend(fact.conflicts)
            results.append(result)
            if progress is not None:
                progress(n + 1, len(items))
        return results

    def _reinforce_known(self, item: dict[str, Any], text: str, known: Entry, current: Entry | None) -> AddResult:
        """A known duplicate, read again inside the write: still the live entry -> reinforced (a
        NOOP); changed meanwhile by another writer -> analysed now and stored as any new text."""
        if current is not None and current.invalid_at is None and current.archived_at is None:
            confidence = _reinforced(current.confidence)
            self.store.reinforce(current.id, confidence)
            current.confidence = confidence
            return AddResult(entry=current, event="NOOP")
        roles, refs = self._roles_and_times([item])
        analysis = self.analyse_many([text], roles, refs, facts=[False])[0]
        return self._store_one(item, analysis)

    def build_row(self, item: dict[str, Any], analysis: Analysis) -> EntryRow:
        """The stored row of an item and its analysis: the one place text becomes a row."""
        tags = list(dict.fromkeys([*(item.get("tags") or ()), *analysis.ner_tags]))
        date_min, date_max = analysis.date_range
        created = item.get("created_at")
        happened = created or item.get("stamped_at")
        if date_min is None and happened is not None:
            # an undated turn still happened on its own day (or the day it is stamped with): temporal
            # filters can use that
            date_min = date_max = happened.date().isoformat() if isinstance(happened, datetime) else None
        return {
            "id": item.get("entry_id"), "l2_full": analysis.text, "l0_abstract": analysis.l0,
            "l1_overview": analysis.l1, "content_hash": analysis.hash,
            # entity tags stay in ``tags`` (for the NER boost), not in the FTS text; who said it is
            # searchable (docs/retrieval.md, "Where each default comes from")
            "search_text": _search_text(item, analysis), "search_context": _search_context(item),
            "context_type": _enum_value(item.get("context_type", "memory")), "category": item.get("category"),
            "tags": tags, "user_id": item.get("user_id"), "agent_id": item.get("agent_id"),
            "project_id": item.get("project_id"), "session_id": item.get("session_id"),
            "role": item.get("role", "user"), "actor": item.get("actor"),
            "confidence": item.get("confidence", 1.0), "metadata": item.get("metadata") or {},
            "event_dates": [d.iso() for d in analysis.dates], "date_min": date_min, "date_max": date_max,
            "flags": sorted(set(analysis.flags)), "subject_key": item.get("subject_key"),
            "created_at": created, "valid_from": item.get("valid_from") or created,
            "expires_at": item.get("expires_at"), "dedup": item.get("dedup", True),
            "importance": item["importance"] if item.get("importance") is not None else rule_importance(
                category=item.get("category"), role=item.get("role", "user"),
                derived=(item.get("metadata") or {}).get("derived") == "fact",
                entities=len({(e.norm, e.label) for e in analysis.entities})),
            **stamp(item),  # type: ignore[typeddict-item]
        }

    def _store_one(self, item: dict[str, Any], analysis: Analysis) -> AddResult:
        entry, inserted = self.store.insert_entry(self.build_row(item, analysis))
        if not inserted:
            self.store.reinforce(entry.id, _reinforced(entry.confidence))
            return AddResult(entry=self.store.get_entry(entry.id), event="NOOP")
        self._store_entities(entry, analysis)
        return AddResult(entry=entry, event="ADD")

    def _store_entities(self, entry: Entry, analysis: Analysis) -> None:
        found = _entity_rows(entry.l2_full, analysis)
        if found:
            self.store.add_entities(entry.id, found, entry.created_at or utcnow())
        marks = find_drift(entry.l2_full)  # "events_v1 was renamed to events_v2": skills naming it drift
        if marks:
            self.store.add_drift(entry.id, entry.scope, marks, entry.created_at or utcnow())

    def _fact_row(self, item: dict[str, Any], fact: Any) -> dict[str, Any]:
        role = item.get("role", "user")
        return {
            "text": fact.text, "category": fact.category, "subject_key": f"{role}:{fact.subject}" if fact.subject else None,
            "role": role, "actor": item.get("actor"), "user_id": item.get("user_id"), "agent_id": item.get("agent_id"),
            "project_id": item.get("project_id"), "session_id": item.get("session_id"),
            "created_at": item.get("created_at"), "metadata": {**(item.get("metadata") or {}), "derived": "fact"},
            "context_type": "memory", "confidence": 0.8, "expires_at": item.get("expires_at"),
            "trust": item.get("trust"), "source": item.get("source"), "written_by": item.get("written_by"),
        }

    def _store_fact(self, row: dict[str, Any], analysis: Analysis) -> AddResult | None:
        scope = Scope(row.get("user_id"), row.get("agent_id"), row.get("project_id"), row.get("session_id"))
        near = self._near_duplicate(analysis, scope, row.get("category"))
        if near is not None:
            self.store.reinforce(near.id, _reinforced(near.confidence))
            return AddResult(entry=self.store.get_entry(near.id), event="MERGE")
        result = self._store_one(row, analysis)
        if result.event != "ADD" or not row.get("subject_key"):
            return result
        for old in self.store.live_subject_entries(scope, row["subject_key"], result.entry.id):
            reason = conflict_reason(old, result.entry)  # rules that cannot order them: keep both, flagged
            if reason is None and is_human_approved(old) and not is_human_approved(result.entry):
                reason = "would overwrite a human-approved memory"  # rules/zones.py: a person decides
            if reason is not None:
                result.conflicts.append(self.store.add_conflict(old, result.entry, reason, row["subject_key"]))
                continue
            self.store.supersede(old.id, result.entry.id, result.entry.created_at or utcnow())
            result.superseded.append(old.id)
        return result

    def _near_duplicate(self, analysis: Analysis, scope: Scope, category: str | None) -> Entry | None:
        """A live fact of the same scope and category whose text is nearly the same."""
        candidates = self.store.list_entries(EntryFilter(scope=scope, category=category), limit=200, order="desc")
        mine = set(tokenize.words(analysis.text))
        threshold = self.config.dedup_near_threshold
        for cand in candidates:
            if cand.content_hash == analysis.hash:
                continue
            theirs = set(tokenize.words(cand.l2_full))
            if mine and theirs and len(mine & theirs) / len(mine | theirs) >= threshold:
                return cand
        if self.embedder is None or not candidates:
            return None
        hashes = [analysis.hash] + [c.content_hash for c in candidates]
        vectors = self.store.vectors_for(hashes)
        if analysis.hash not in vectors:
            return None
        if len(vectors) < len(set(hashes)):
            # a candidate whose vector is still queued would be judged as if it had one
            try:
                if self.embed_missing([(c.content_hash, c.l2_full) for c in candidates
                                       if c.content_hash not in vectors]):
                    vectors = self.store.vectors_for(hashes)
            except EmbedderUnavailable:
                pass  # judged on the vectors there are; the word-overlap check above already ran
        q = vectors[analysis.hash]
        for cand in candidates:
            v = vectors.get(cand.content_hash)
            if v is not None and cand.content_hash != analysis.hash and float(np.dot(q, v)) >= threshold:
                return cand
        return None

    # -- in-place updates ---------------------------------------------------------------------------
    def update(self, entry: Entry, scope: Scope, changes: dict[str, Any], *, text: str | None = None,
               tags: list[str] | None = None, actor: str | None = None) -> Entry:
        """Change an entry in place. A new text is analysed and turned into a row as on insert
        (``build_row``: tiers, speaker prefix, dates with the created-date fallback, NER tags,
        flags) and embedded, and its entities replace the old ones. The FTS context column (its
        neighbouring turns) is kept: the neighbours did not change. ``tags`` replaces the user's
        tags; entity tags stay derived from the text."""
        changes = dict(changes)
        user_tags = tags if tags is not None else [t for t in entry.tags if not t.startswith("ner_")]
        analysis = None
        embedded = True
        if text is not None:
            analysis = self.analyse_many([text], [entry.role], [entry.created_at], facts=[False])[0]
            embedded = self._embed_or_defer([(analysis.hash, text)])
            item = {"text": text, "tags": user_tags, "role": entry.role, "created_at": entry.created_at,
                    "speaker": entry.actor if entry.category == "turn" else None}
            row = self.build_row(item, analysis)
            changes.update({key: row[key] for key in _TEXT_FIELDS})  # type: ignore[literal-required]
        elif tags is not None:
            changes["tags"] = list(dict.fromkeys([*user_tags, *(t for t in entry.tags if t.startswith("ner_"))]))
        with self.store.transaction():
            updated = self.store.update_entry(entry.id, scope, changes, actor=actor)
            if analysis is not None:
                self.store.add_entities(entry.id, _entity_rows(updated.l2_full, analysis),
                                        entry.created_at or utcnow(), replace=True)
        if not embedded:
            self._await([updated])
            self._queue([entry.id])
        return updated

    # -- sessions ------------------------------------------------------------------------------
    def add_turns(self, session: Session, stored: list[Message], turns: list[Message], *, appended: bool,
                  progress: Callable[[int, int], None] | None = None) -> None:
        """Ingest newly stored session messages (``turns``, a subset of ``stored``) as memories,
        each indexed with its neighbouring turns (``ingest/turns.py``)."""
        turns = [m for m in turns if is_turn(m)]
        if not turns:
            return
        before, after = turn_context(self.store, session.id, stored, appended=appended)
        self.add_many(turn_items(session, turns, before, after), message_ids=[m.id for m in turns],
                      progress=progress)

    def commit_session(self, session: Session, messages: list[Message]) -> Entry:
        """Store the session's summary and link it and every turn entry to the session."""
        turns = [(m.role, m.content) for m in messages if m.content.strip()]
        if not turns:
            raise InvalidArgument(f"Session {session.id!r} has no messages to summarise")
        summary = self.summarize(turns)
        with self.store.transaction():
            result = self.add_many([{
                "text": summary, **session.scope.as_dict(), "session_id": session.id, "role": "system",
                "category": "session_summary", "created_at": messages[-1].created_at,
                "metadata": {"turns": len(turns)}, "context_type": "memory"}])[0]
            self.store.link_session(session.id, result.entry.id, "summary")
            for m in messages:
                if m.entry_id:
                    self.store.link_session(session.id, m.entry_id, "turn")
                    self.store.link_source(result.entry.id, m.id)
            self.store.update_session(session.id, committed=True, summary_entry_id=result.entry.id)
        return self.store.get_entry(result.entry.id)

    def summarize(self, turns: list[tuple[str, str]]) -> str:
        from ..text import tiers

        text = tiers.summarize_session(turns)
        if self.summarizer is not None:
            text = self.summarizer("\n".join(f"{r}: {c}" for r, c in turns)) or text
        return text


# the row fields a new text changes (``Ingestor.update``)
_TEXT_FIELDS = ("l2_full", "l0_abstract", "l1_overview", "content_hash", "search_text", "tags", "event_dates",
                "date_min", "date_max", "flags")


def _search_text(item: dict[str, Any], analysis: Analysis) -> str:
    """What FTS indexes as the entry's own words: the text, prefixed with who said it.

    The speaker makes "What did Caroline say ..." match (docs/retrieval.md).
    """
    return f"{item['speaker']}: {analysis.search_text}" if item.get("speaker") else analysis.search_text


def _search_context(item: dict[str, Any]) -> str:
    """The FTS context column: the turns around a session turn (set by the kernel).

    They carry the topic a reply leaves out and the answer a question gets (docs/retrieval.md).
    """
    parts = [item.get("context"), item.get("context_after")]
    return "\n".join(tokenize.fts_text(p) for p in parts if p)


def _within(entry: Scope, scope: Scope) -> bool:
    """Whether an entry of scope ``entry`` is visible to a search of ``scope`` (``None`` fields match anything)."""
    return all(want is None or want == have for want, have in (
        (scope.user_id, entry.user_id), (scope.agent_id, entry.agent_id), (scope.project_id, entry.project_id),
        (scope.session_id, entry.session_id)))


def _scope(item: dict[str, Any]) -> Scope:
    return Scope(item.get("user_id"), item.get("agent_id"), item.get("project_id"), item.get("session_id"))


def _reinforced(confidence: float) -> float:
    return min(1.0, confidence + (1.0 - confidence) * 0.25)


def _enum_value(value: Any) -> Any:
    return getattr(value, "value", value)

