"""One config object for every weight, half-life and switch.

Values come from the defaults below, then an optional TOML file, then environment variables
``AGENTBASE_<SECTION>__<KEY>`` (e.g. ``AGENTBASE_RETRIEVAL__RRF_K=60``), then keyword overrides.
Each default's comment says why; the measurements behind them are in docs/retrieval.md ("Where
each default comes from") and docs/lifecycle.md.
"""

from __future__ import annotations

import functools
import os
import tomllib
import warnings
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import InvalidArgument

__all__ = ["POINTER_FILE", "Config", "DatabaseChoice", "EmbedderConfig", "ExperimentalRetrieval", "IngestConfig",
           "LifecycleConfig", "RetrievalConfig", "StorageConfig", "default_path", "find_pointer", "locate_database"]

POINTER_FILE = ".agentbase"
DEFAULT_FILE = "agentbase.db"
_SERVER_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class DatabaseChoice:
    """Which database a caller means, and why: ``source`` is shown by ``agentbase info``.

    ``embedder`` and ``ner`` are what the ``.agentbase`` pointer names (``None`` elsewhere).
    """

    location: Path | str
    source: str
    embedder: str | None = None
    ner: str | None = None


def _location(value: str | os.PathLike[str]) -> Path | str:
    text = os.fspath(value)
    # a postgresql:// URL stays a string (a Path would fold its '//')
    return text if text.lower().startswith(_SERVER_SCHEMES) else Path(text)


def find_pointer(start: Path | None = None) -> Path | None:
    """The nearest ``.agentbase`` file in ``start`` (default: the working folder) or one of its parents."""
    start = Path.cwd() if start is None else start
    for folder in (start, *start.parents):
        candidate = folder / POINTER_FILE
        if candidate.is_file():
            return candidate
    return None


def _read_pointer(pointer: Path) -> dict[str, str]:
    try:
        data = tomllib.loads(pointer.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidArgument(f"{pointer} is not a valid agentbase pointer file ({exc}). Fix it, delete it, or "
                              "write it again with: agentbase init --data-dir DIR", param="path",
                              code="bad_pointer") from None
    if not isinstance(data.get("db"), str) or not data["db"]:
        raise InvalidArgument(f"{pointer} has no db = \"PATH\" line. Write it again with: agentbase init --data-dir DIR",
                              param="path", code="bad_pointer")
    return {k: v for k, v in data.items() if isinstance(v, str)}


def locate_database(path: str | os.PathLike[str] | None = None) -> DatabaseChoice:
    """The database every entry point opens: the one rule for the kernel, adapters, CLI and servers.

    First to last: ``path`` when given, ``$AGENTBASE_PATH``, the ``.agentbase`` pointer that
    ``agentbase init --data-dir DIR`` wrote in the working folder or a parent (its ``db`` is
    relative to the pointer's folder), then ``./agentbase.db``.

    Raises:
        InvalidArgument: The pointer file that applies cannot be read (``code="bad_pointer"``).
    """
    if path is not None:
        return DatabaseChoice(_location(path), "argument")
    env = os.environ.get("AGENTBASE_PATH")
    if env:
        return DatabaseChoice(_location(env), "$AGENTBASE_PATH")
    pointer = find_pointer()
    if pointer is not None:
        values = _read_pointer(pointer)
        target = values["db"]
        location = target if target.lower().startswith(_SERVER_SCHEMES) else pointer.parent / target
        return DatabaseChoice(location, str(pointer), embedder=values.get("embedder"), ner=values.get("ner"))
    return DatabaseChoice(Path(DEFAULT_FILE), f"default (./{DEFAULT_FILE})")


def default_path() -> Path | str:
    """The database opened when none is named (``locate_database().location``)."""
    return locate_database().location


@dataclass(frozen=True)
class StorageConfig:
    busy_timeout_ms: int = 30_000
    synchronous: str = "NORMAL"
    # RAM for the per-scope vector indexes (4 x dim + 12 bytes a memory; least recently searched go
    # first); 0 searches the file every time
    vector_cache_bytes: int = 2 << 30
    # a scope with more vectors is searched through a 1-bit shortlist (6% of it), then exactly; 0 is
    # always exact
    vector_shortlist_above: int = 50_000
    # cache per-term FTS counts and rankings until the data changes
    fts_cache: bool = True
    # PostgreSQL: a word in more rows of the searched scope than this (by the planner's statistics)
    # takes its own candidates from its newest rows only (docs/postgres.md, "Common words")
    fts_common_rows: int = 5_000


@dataclass(frozen=True)
class IngestConfig:
    ner: bool = True
    dates: bool = True
    facts: bool = True
    dedup_near_threshold: float = 0.95
    poison_flags: bool = True
    # embed turns on a background thread after their write commits: writes return before the model
    # runs, vector search sees the newest turns only once the thread catches up (``wait_embedded``).
    # Off for the kernel's own calls; the swap adapters (Mem0, LangGraph store, Minimal) defer per
    # write unless built with defer_embedding=False (docs/swap-paths.md)
    defer_embedding: bool = False
    # a stream write (ingest/streams.py) this many minutes after the stream's previous one starts a new
    # stream session (0: a stream is one session); measured on the write's time, else its stamp, else arrival
    stream_gap_minutes: float = 30.0
    # find() first embeds up to this many of the searched scope's texts still queued for a vector
    # (read-your-writes); more than that and the result says it is degraded (0: never embed in find)
    find_embeds_at_most: int = 256
    # whose turns facts are extracted from (each fact is an entry with a vector of its own): "all",
    # or "user" for the user's turns and writes without a role only, so a long assistant reply
    # costs one vector (docs/retrieval.md, "Facts from assistant turns")
    facts_from: str = "all"

    def __post_init__(self) -> None:
        if self.facts_from not in ("all", "user"):
            raise InvalidArgument(f"ingest.facts_from must be 'all' or 'user', got {self.facts_from!r}")


@dataclass(frozen=True)
class ExperimentalRetrieval:
    """Retrieval steps that did not help on the dev sets, all off: kept, tested and switchable for
    workloads they may suit (docs/retrieval.md, "Steps that did not help, and are off by default" and
    "Verdict: the ranker does not pass"). ``RetrievalConfig(experimental=ExperimentalRetrieval(
    intents=True))``, ``[retrieval.experimental]`` in the TOML file, or
    ``AGENTBASE_RETRIEVAL__EXPERIMENTAL__INTENTS=true``."""

    # keyword intents: multi-session spreading, preference and update boosts, a bigger result pool
    # for "how many" questions; they reorder good single-hop results (a date window in the query
    # applies without them: RetrievalConfig.date_window)
    intents: bool = False
    # the keyword intents' boosts: a preference question lifts the user's turns, preference memories
    # and turns that imply an acted-on preference; an update question lifts recently updated
    # memories by up to intent_update_boost (half-life update_half_life_days)
    intent_preference_user: float = 1.8
    intent_preference_category: float = 2.0
    intent_preference_implicit: float = 1.3
    intent_update_boost: float = 0.5
    update_half_life_days: float = 30.0
    # an aggregation question ("how many ...") reads up to this many results
    aggregation_top_k: int = 120
    # also boost turns that merely mention a query name, not only those the named speaker said
    ner_mentions: bool = False
    # zero-LLM query decomposition: key phrases searched as sub-queries by the keyword leg
    decompose: bool = False
    # the keyword leg searches the whole question and at most this many sub-queries in all (a
    # caller's own decomposer, Kernel(decomposer=...), included); a sub-query's rows count this
    # much of the whole question's
    max_subqueries: int = 6
    subquery_weight: float = 0.5
    # the heuristic rerank's mix: relevance, freshness (half-life freshness_half_life_days; for an
    # update question update_half_life_days), confidence, scope priority (session 1.0, agent,
    # project, global each rerank_scope_step less; the searched session rerank_same_session more)
    # and a preference memory for a preference question
    rerank: bool = False
    rerank_relevance: float = 0.6
    rerank_freshness: float = 0.15
    rerank_confidence: float = 0.1
    rerank_priority: float = 0.1
    rerank_type_match: float = 0.05
    rerank_scope_step: float = 0.2
    rerank_same_session: float = 0.2
    freshness_half_life_days: float = 7.0
    # the learned second stage (retrieve/ranker.json, ``python -m benchmarks train-ranker``) ranks
    # both legs' candidates instead of score fusion, the boosts and the reorderings
    ranker: bool = False
    # with the ranker, each recall leg reads this many rows (what it was trained on)
    ranker_pool: int = 150


_EXPERIMENTAL_KEYS = frozenset(f.name for f in fields(ExperimentalRetrieval))


def _moved(old: str, new: str, stacklevel: int) -> None:
    """Warn that ``old`` still works but is deprecated; ``stacklevel`` counts from the caller of ``_moved``."""
    warnings.warn(f"{old} is deprecated: write {new} (the retrieval steps that did not help are in "
                  "one section, docs/retrieval.md)", DeprecationWarning, stacklevel=stacklevel + 1)


@dataclass(frozen=True)
class RetrievalConfig:
    """Retrieval weights and switches. Defaults were chosen on the dev sets (LoCoMo first, then the
    assistant set; ``benchmarks/locomo.py``); steps that did not help are off by default. The
    figures behind each default: docs/retrieval.md, "Where each default comes from"."""

    # "score": a convex mix of max-normalised BM25 and cosine over both legs' candidates, which
    # keeps how far ahead the leader is; "rrf": reciprocal rank fusion
    fusion: str = "score"
    fusion_pool: int = 60
    score_vector_weight: float = 0.5
    # the cosine's share grows by this much times the share of the query's words that occur nowhere
    # in the scope (a question asked in other words than the memories), up to score_vector_max
    unseen_vector_shift: float = 1.0
    score_vector_max: float = 0.8
    # when the best keyword matches all lack at least missed_words_share of the query's words, the
    # words they lack count as unseen too (the question names its subject in other words)
    missed_words: bool = True
    missed_words_share: float = 0.6
    # the cosine of a turn read together with the turns around it in its session (their vectors'
    # sum: no extra model call) weighs this much against the turn's own cosine
    context_vector_weight: float = 0.5
    # an assistant's reply to a user's question (the turn just before it, a candidate too) scores at
    # least this much of the question's cosine (0: off)
    reply_question_cosine: float = 0.9
    # a first-person question (dense_quota_self_only) whose best keyword matches lack at least
    # dense_quota_missed of its words: the dense_quota entries nearest by cosine are each guaranteed
    # a rank within dense_quota_depth (0: off; docs/retrieval.md "Fourth round (b)")
    dense_quota: int = 3
    dense_quota_missed: float = 0.5
    dense_quota_depth: int = 10
    dense_quota_self_only: bool = True
    # a request for a recommendation whose best hit is a question the user asked, with the turn next to
    # it in its session second (the options offered, the pick made), puts that turn first
    # (docs/retrieval.md, "Answer before question")
    answer_first: bool = True
    rrf_k: float = 60.0
    # the RRF legs' weights: the keyword leg weighs more on conversations
    fts_weight: float = 0.85
    vector_weight: float = 0.15
    overfetch: float = 3.0
    fts: bool = True
    vectors: bool = True
    ner_boost: bool = True
    ner_strong: float = 1.3
    ner_medium: float = 1.24
    ner_weak: float = 1.15
    ner_speaker: float = 1.5
    date_window: bool = True
    # a turn said inside the question's date window ("what did X do on 23 January") ranks up too
    date_said_boost: float = 1.2
    # a first-person question ("what's my rent?", not "what did you suggest?") is about what the
    # user said: the user's turns weigh this much more (docs/retrieval.md, assistant dev set)
    self_boost: float = 1.3
    # ... and so do the assistant's replies to the user's own questions (labelled answers_question)
    self_boost_replies: bool = True
    # a question about how things stand now ("who is my manager?", "... these days?"): among the
    # candidates within latest_relevance of the best, a later turn by the same speaker on the same
    # topic (centred cosine >= latest_same_topic) ranks just above the earlier one
    latest_first: bool = True
    latest_relevance: float = 0.7
    latest_same_topic: float = 0.1
    latest_pool: int = 30
    # a later turn that announces a change ("switched", "moved", "instead": text/changes.py) may be
    # lifted from down to this share of the best score (turns that only ask are never lifted)
    latest_change_relevance: float = 0.6
    # a later turn that fills another attribute than the question asks for (spaCy's parse,
    # text/slots.py: "adjust it for the new city" for "which city do I live in?") is not lifted
    latest_slots: bool = True
    # ... and a later turn that fills the asked slot ranks above every earlier relevant turn of its
    # speaker ("my defense moved to June 14" for "when is my thesis defense scheduled?")
    latest_slot_lift: bool = True
    # ... and also above a later turn of its speaker that fills only other attributes
    latest_slot_over_other: bool = True
    # ... and one that fills the asked slot and announces a change may come from down to this share
    latest_slot_change_relevance: float = 0.5
    # which memories hold each query word (unseen and missed words) is read up to this many rows a
    # word; a word in more is common and never counts as missed
    term_rows: int = 400
    # missed words: the best-covering of the keyword leg's this-many best memories is compared
    missed_words_pool: int = 10
    # a memory whose resolved event date falls in the question's date window ranks up this much
    date_event_boost: float = 1.5
    co_retrieval: bool = True
    co_retrieval_seeds: int = 3
    co_retrieval_window: int = 2
    co_retrieval_weight: float = 0.6
    # facts extracted from a turn rank a little below the turn itself
    derived_weight: float = 0.8
    record_traces: bool = True
    # the score callers see is a calibrated probability that the memory is what the question asks
    # for (retrieve/calibration.json, fitted on the dev sets): comparable across questions and
    # scopes, so a threshold drops what is irrelevant. False: the fused score out of the best
    # possible (the top hit of any question near 1.0)
    calibrated_scores: bool = True
    # the steps that did not help, all off (ExperimentalRetrieval)
    experimental: ExperimentalRetrieval = field(default_factory=ExperimentalRetrieval)

    def __post_init__(self) -> None:
        if self.fusion not in ("score", "rrf"):
            raise InvalidArgument(f"retrieval.fusion must be 'score' or 'rrf', got {self.fusion!r}")
        if not isinstance(self.experimental, ExperimentalRetrieval):
            raise InvalidArgument("retrieval.experimental must be an ExperimentalRetrieval, got "
                                  f"{type(self.experimental).__name__}")

    if not TYPE_CHECKING:  # the old flat spelling, for reading; typed code reads .experimental
        def __getattr__(self, name: str) -> Any:
            if name in _EXPERIMENTAL_KEYS and "experimental" in self.__dict__:
                _moved(f"RetrievalConfig.{name}", f"RetrievalConfig.experimental.{name}", stacklevel=2)
                return getattr(self.experimental, name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _accept_flat_experimental(init: Callable[..., None]) -> Callable[..., None]:
    """``RetrievalConfig(intents=True)`` and ``replace(cfg, intents=True)`` as they worked before the
    experimental steps moved into their section: folded into ``experimental``, with a warning."""

    @functools.wraps(init)
    def __init__(self: RetrievalConfig, *args: Any, **kwargs: Any) -> None:
        flat = {name: kwargs.pop(name) for name in [k for k in kwargs if k in _EXPERIMENTAL_KEYS]}
        if flat:
            for name in flat:
                _moved(f"RetrievalConfig({name}=...)",
                       f"RetrievalConfig(experimental=ExperimentalRetrieval({name}=...))", stacklevel=2)
            kwargs["experimental"] = replace(kwargs.get("experimental") or ExperimentalRetrieval(), **flat)
        init(self, *args, **kwargs)

    return __init__


RetrievalConfig.__init__ = _accept_flat_experimental(RetrievalConfig.__init__)  # type: ignore[method-assign]


@dataclass(frozen=True)
class LifecycleConfig:
    """Reinforcement, audit and prefetch (docs/lifecycle.md)."""

    # every entry ``find`` returns gets access_count + 1 and last_accessed_at = now (per call: reinforce=False)
    reinforce: bool = True
    # queued bumps are written by a background thread this often (and on close / flush_lifecycle)
    reinforce_flush_seconds: float = 1.0
    # append writes, updates and deletes of entries to the audit log, in the same transaction
    audit: bool = True
    # also log every find's returned ids as a 'read' row (written with the reinforcement flush)
    audit_reads: bool = False
    # the log keeps this many rows; the oldest are pruned
    audit_max_rows: int = 100_000
    # importance, decay, capacity, consolidation (rules/rank.py; lifecycle/capacity.py, consolidate.py,
    # composite.py).
    # The composite rank term w_sim*relevance + w_rec*0.5^(age/half_life) + w_imp*importance +
    # w_acc*access is off: not positive on both dev sets (docs/lifecycle.md)
    rank_composite: bool = False
    rank_w_sim: float = 1.0
    rank_w_rec: float = 0.1
    rank_w_imp: float = 0.1
    rank_w_acc: float = 0.05
    half_life_days: float = 30.0
    # live entries one scope keeps (0: no limit); over it, the lowest by importance + recency +
    # access are archived. Per scope: Kernel.set_capacity
    max_items_per_scope: int = 0
    # fold older, low-importance memories of a scope into a summary after every N writes to it
    # (0: only when Kernel.consolidate is called), on a background thread
    consolidate_every_writes: int = 0
    # ... or once this kernel has seen no write for this many seconds, every scope written since (0: off)
    consolidate_idle_seconds: float = 0.0
    consolidate_older_than_days: float = 30.0
    consolidate_max_importance: float = 0.6
    consolidate_min_items: int = 3
    # how many outcomes an entry's confidence is worth when the first outcome touches it (the Beta
    # prior of rules/outcomes.py): one outcome moves it by at most 1 / (strength + 1)
    outcome_prior_strength: float = 4.0
    # skills (docs/skills.md): health halves every this many days since last used or verified;
    # a skill below the threshold in a find / prefetch result carries a warning
    skill_half_life_days: float = 30.0
    skill_health_threshold: float = 0.6

    def __post_init__(self) -> None:
        if self.outcome_prior_strength <= 0:
            raise InvalidArgument("lifecycle.outcome_prior_strength must be > 0")
        if self.skill_half_life_days <= 0 or not 0 <= self.skill_health_threshold <= 1:
            raise InvalidArgument("lifecycle.skill_half_life_days must be > 0 and skill_health_threshold in [0, 1]")
        if self.reinforce_flush_seconds <= 0:
            raise InvalidArgument("lifecycle.reinforce_flush_seconds must be > 0")
        if self.audit_max_rows < 1:
            raise InvalidArgument("lifecycle.audit_max_rows must be >= 1")
        if min(self.rank_w_sim, self.rank_w_rec, self.rank_w_imp, self.rank_w_acc) < 0 or \
                self.rank_w_sim + self.rank_w_rec + self.rank_w_imp + self.rank_w_acc <= 0:
            raise InvalidArgument("lifecycle.rank_w_* must be >= 0 and not all 0")
        if self.half_life_days <= 0:
            raise InvalidArgument("lifecycle.half_life_days must be > 0")
        if self.max_items_per_scope < 0 or self.consolidate_every_writes < 0:
            raise InvalidArgument("lifecycle.max_items_per_scope and consolidate_every_writes must be >= 0")
        if self.consolidate_idle_seconds < 0:
            raise InvalidArgument("lifecycle.consolidate_idle_seconds must be >= 0")
        if self.consolidate_older_than_days < 0 or not 0 <= self.consolidate_max_importance <= 1:
            raise InvalidArgument("lifecycle.consolidate_older_than_days must be >= 0 and "
                                  "consolidate_max_importance in [0, 1]")
        if self.consolidate_min_items < 2:
            raise InvalidArgument("lifecycle.consolidate_min_items must be >= 2")


@dataclass(frozen=True)
class EmbedderConfig:
    """A remote embedder's timeout and circuit breaker (docs/lifecycle.md, "Fail-open remote embedders")."""

    # seconds per HTTP request; a slower answer counts as a failure
    timeout_seconds: float = 10.0
    # the breaker opens after this many failures in a row: no request goes out while it is open
    breaker_failures: int = 3
    # then, after this long, one trial request goes out (half-open); success closes it
    breaker_cooldown_seconds: float = 30.0

    def __post_init__(self) -> None:
        if self.timeout_seconds <= 0:
            raise InvalidArgument("embedder.timeout_seconds must be > 0")
        if self.breaker_failures < 1:
            raise InvalidArgument("embedder.breaker_failures must be >= 1")
        if self.breaker_cooldown_seconds < 0:
            raise InvalidArgument("embedder.breaker_cooldown_seconds must be >= 0")


_SECTIONS = {"storage": StorageConfig, "ingest": IngestConfig, "retrieval": RetrievalConfig,
             "lifecycle": LifecycleConfig, "embedder": EmbedderConfig}


@dataclass(frozen=True)
class Config:
    """All tunables. ``Config.load()`` reads file and environment; ``with_(...)`` overrides."""

    storage: StorageConfig = field(default_factory=StorageConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    lifecycle: LifecycleConfig = field(default_factory=LifecycleConfig)
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)

    @classmethod
    def load(cls, file: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Config:
        env = dict(os.environ if env is None else env)
        values: dict[str, dict[str, Any]] = {name: {} for name in _SECTIONS}
        file = file or env.get("AGENTBASE_CONFIG")
        if file:
            with open(file, "rb") as fh:
                data = tomllib.load(fh)
            for section, items in data.items():
                _check_section(section)
                values[section].update(_fold_flat_experimental(
                    section, items, f"<key> under [retrieval] in {file}", "it under [retrieval.experimental]"))
        for key, raw in env.items():
            if not key.startswith("AGENTBASE_") or "__" not in key:
                continue
            section, _, name = key[len("AGENTBASE_") :].lower().partition("__")
            _check_section(section)
            values[section].update(_fold_flat_experimental(
                section, {name: raw}, key, "AGENTBASE_RETRIEVAL__EXPERIMENTAL__<KEY>"))
        return cls(**{s: _build(_SECTIONS[s], v) for s, v in values.items()})

    def with_(self, **sections: dict[str, Any]) -> Config:
        """A copy with some keys changed: ``cfg.with_(retrieval={"vectors": False})``; a nested section
        takes a dict of its own keys: ``cfg.with_(retrieval={"experimental": {"intents": True}})``."""
        changed = {}
        for section, items in sections.items():
            _check_section(section)
            current = getattr(self, section)
            items = _fold_flat_experimental(section, items, "with_(retrieval={'<key>': ...})",
                                            "with_(retrieval={'experimental': {'<key>': ...}})")
            changed[section] = replace(current, **_coerce_all(type(current), items, current))
        return replace(self, **changed)


def _check_section(section: str) -> None:
    if section not in _SECTIONS:
        raise InvalidArgument(f"Unknown config section {section!r}; expected one of {sorted(_SECTIONS)}")


def _fold_flat_experimental(section: str, items: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``items`` with the experimental steps' old flat keys (``retrieval.intents``) moved into their
    section (``experimental__intents``), each with a warning: ``old`` and ``new`` spell it before and
    now (``<key>`` / ``<KEY>`` stand for the key)."""
    if section != "retrieval" or not _EXPERIMENTAL_KEYS & items.keys():
        return items
    out = {}
    for name, value in items.items():
        if name in _EXPERIMENTAL_KEYS:
            then, now = (t.replace("<key>", name).replace("<KEY>", name.upper()) for t in (old, new))
            _moved(then, now, stacklevel=3)
            name = f"experimental__{name}"
        out[name] = value
    return out


def _build(kind: type, items: dict[str, Any]) -> Any:
    return kind(**_coerce_all(kind, items))


def _coerce_all(kind: type, items: dict[str, Any], current: Any = None) -> dict[str, Any]:
    """``items``' values in their fields' types. A nested section's keys come as one dict
    (``experimental={"intents": "true"}``, TOML's ``[retrieval.experimental]``) or one by one as an
    environment variable spells them (``experimental__intents``); they change ``current``'s section
    (or the defaults)."""
    known = {f.name: f for f in fields(kind)}
    grouped: dict[str, Any] = {}
    for name, value in items.items():
        head, nested, rest = name.partition("__")
        if nested or isinstance(value, dict):
            section = grouped.setdefault(head, {})
            if is_dataclass(section):  # the whole section given as an object, then keys on top of it
                section = grouped[head] = {f.name: getattr(section, f.name) for f in fields(section)}
            if not isinstance(section, dict):
                raise InvalidArgument(f"Config key {head!r} in {kind.__name__} is not a section")
            section.update({rest: value} if nested else value)
        else:
            grouped[name] = value
    out = {}
    for name, value in grouped.items():
        if name not in known:
            raise InvalidArgument(f"Unknown config key {name!r} in {kind.__name__}; known: {sorted(known)}")
        spec = known[name]
        if spec.default_factory is not MISSING:  # a nested section
            out[name] = _section_value(spec.default_factory, value, getattr(current, name, None), name)
        else:
            out[name] = _coerce(value, type(spec.default), name)
    return out


def _section_value(kind: Any, value: Any, current: Any, name: str) -> Any:
    if isinstance(value, kind):
        return value
    if not isinstance(value, dict):
        raise InvalidArgument(f"Config key {name!r} is a section ({kind.__name__}): give a table of its keys, "
                              f"got {value!r}")
    base = kind() if current is None else current
    return replace(base, **_coerce_all(kind, value, base))


def _coerce(value: Any, kind: type, name: str) -> Any:
    if isinstance(value, kind) or not isinstance(value, str):
        try:
            return kind(value) if kind in (int, float) and not isinstance(value, bool) else value  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise InvalidArgument(f"Config key {name!r} expects {kind.__name__}, got {value!r}") from None
    try:
        if kind is bool:
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        return kind(value)
    except ValueError:
        raise InvalidArgument(f"Config key {name!r} expects {kind.__name__}, got {value!r}") from None
