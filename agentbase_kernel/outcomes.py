"""``kernel.outcomes``: what happened after a session's retrievals moves the confidence of what was
retrieved (the rule: ``rules/outcomes.py``; docs/governance.md). ``Kernel.record_outcome`` ... are
these methods under the same names.

Usage::

    kernel.find("deploy steps", session_id="s1")            # the trace remembers what was retrieved
    kernel.record_outcome("s1", "success")                   # those entries' confidence goes up
    kernel.revert_outcome(outcome.id)                        # and back
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import arguments as check
from .errors import InvalidArgument
from .records import Outcome, Scope
from .rules.outcomes import apply_outcome, check_outcome, revert_counts
from .store.base import utcnow
from .threads import in_thread

if TYPE_CHECKING:
    from .kernel import Kernel

__all__ = ["AsyncOutcomes", "Outcomes"]

#: how many of a session's traces an outcome looks at
_TRACES = 1000


def _outcome(row: dict[str, Any]) -> Outcome:
    return Outcome(id=row["id"], session_id=row["session_id"], scope=row["scope"], outcome_type=row["outcome_type"],
                   value=float(row["value"]), weight=float(row["weight"]), actor=row["actor"],
                   trace_ids=list(row["trace_ids"]), detail=row["detail"], effects=row["effects"],
                   created_at=row["created_at"], reverted_at=row["reverted_at"])


class Outcomes:
    """Outcomes and the confidence they move, on one kernel's database (``kernel.outcomes``)."""

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel

    def _retrieved(self, session_id: str, scope: Scope, top_k: int | None,
                   trace_ids: list[str] | None) -> tuple[list[str], list[str]]:
        """``(trace ids, entry ids)`` the session's finds returned since its last outcome (not reverted),
        or the finds ``trace_ids`` name (made anywhere in ``scope``)."""
        store = self._kernel._ready()
        owner = Scope(scope.user_id, scope.agent_id, scope.project_id, session_id)
        used = {t for o in store.list_outcomes(owner, include_reverted=False, limit=None) for t in o["trace_ids"]}
        if trace_ids is not None:
            known = {t["id"]: t for t in store.load_traces(scope, _TRACES)}
            unknown = [t for t in trace_ids if t not in known]
            if unknown:
                raise InvalidArgument(f"No retrieval trace {unknown[0]!r} in this scope (the last {_TRACES})",
                                      param="trace_ids")
            traces = [known[t] for t in trace_ids]
        else:
            traces = [t for t in reversed(store.load_traces(owner, _TRACES)) if t["id"] not in used]
        ids: list[str] = []
        for trace in traces:
            ids.extend(trace["result_ids"][:top_k] if top_k is not None else trace["result_ids"])
        return [t["id"] for t in traces], list(dict.fromkeys(ids))

    def record_outcome(self, session_id: str, outcome_type: str, value: float | bool | None = None, *,
                       entry_ids: Sequence[str] | None = None, trace_ids: Sequence[str] | None = None,
                       top_k: int | None = None, weight: float = 1.0, detail: dict[str, Any] | None = None,
                       actor: str | None = None, user_id: str | None = None, agent_id: str | None = None,
                       project_id: str | None = None) -> Outcome:
        """Record how a session went; the memories it retrieved have their confidence moved.

        The entries are those the session's ``find`` calls (made with ``session_id=``; their traces,
        ``retrieval.record_traces``) returned since its previous outcome, or those of the finds
        ``trace_ids`` names (``result.trace.id``: a find over the user's memories made during the
        session) - the first ``top_k`` of each, if given - or exactly ``entry_ids`` (the ones used). ``value`` in [0, 1] is how well it went (1 success, 0 failure; ``None`` takes
        the label's: ``success`` 1, ``partial`` 0.5, ``failure`` 0 ...); ``weight`` in (0, 1] how much
        this outcome counts. Each entry's confidence moves by the Beta rule of ``rules/outcomes.py``
        (bounded, reversible); every change is an ``outcome`` audit row and an ``OUTCOME`` history event.

        Raises:
            InvalidArgument: a bad label, value, weight or id; an entry id that does not exist.
            PermissionDenied: this kernel's agent may not write an entry's scope.
        """
        k = self._kernel
        session_id = check.check_id("session_id", session_id) or ""
        if not session_id:
            raise InvalidArgument("record_outcome needs the session_id whose retrievals it judges", param="session_id")
        label, value, weight = check_outcome(outcome_type, value, weight)
        scope = check.scope_of(user_id, agent_id, project_id)
        if top_k is not None:
            check.count(top_k, "top_k")
        info = check.metadata(detail) if detail is not None else {}
        store = k._ready()
        if entry_ids is not None:
            if isinstance(entry_ids, (str, bytes)) or not isinstance(entry_ids, Sequence):
                raise InvalidArgument("entry_ids must be a list of entry ids", param="entry_ids")
            trace_ids = []
            ids = list(dict.fromkeys(check.entry_id(i) for i in entry_ids))
        else:
            if trace_ids is not None and (isinstance(trace_ids, (str, bytes)) or not isinstance(trace_ids, Sequence)):
                raise InvalidArgument("trace_ids must be a list of trace ids", param="trace_ids")
            named = None if trace_ids is None else [check.check_id("trace_ids", t) or "" for t in trace_ids]
            trace_ids, ids = self._retrieved(session_id, scope, top_k, named)
        strength = k.config.lifecycle.outcome_prior_strength
        with store.transaction():
            current = store.confidence_counts(ids)
            missing = [i for i in ids if i not in current]
            if missing and entry_ids is not None:
                raise InvalidArgument(f"No entry with id {missing[0]!r}", param="entry_ids")
            ids = [i for i in ids if i in current]  # a retrieved entry deleted since is skipped
            if k.agent is not None:
                for entry in store.get_entries(ids).values():
                    k._check_entry("write", entry, "record_outcome")
            effects = [{"entry_id": i, **apply_outcome(current[i]["confidence"], current[i]["counts"], value=value,
                                                       weight=weight, strength=strength)} for i in ids]
            outcome_id = f"out_{uuid.uuid4().hex}"
            outcome = {"id": outcome_id, "session_id": session_id, "scope": scope,
                       "outcome_type": label, "value": value, "weight": weight, "actor": actor or k.agent,
                       "trace_ids": trace_ids, "detail": info, "created_at": utcnow()}
            store.save_outcome(outcome, effects)
        return self.get_outcome(outcome_id)

    def get_outcome(self, outcome_id: str) -> Outcome:
        """One outcome with its effects; ``InvalidArgument`` when there is none."""
        outcome_id = check.check_id("outcome_id", outcome_id) or ""
        found = self._kernel._ready().list_outcomes(Scope(), outcome_id=outcome_id, limit=1)
        if not found:
            raise InvalidArgument(f"No outcome with id {outcome_id!r}", param="outcome_id")
        return _outcome(found[0])

    def revert_outcome(self, outcome_id: str, *, actor: str | None = None) -> Outcome:
        """Take an outcome back: each entry's counts lose what it added and its confidence is
        recomputed (exactly the old value when nothing else moved it since). Reverting twice is an error.

        Raises:
            InvalidArgument: unknown or already reverted outcome.
        """
        k = self._kernel
        store = k._ready()
        strength = k.config.lifecycle.outcome_prior_strength
        with store.transaction():
            outcome = self.get_outcome(outcome_id)
            if outcome.reverted_at is not None:
                raise InvalidArgument(f"Outcome {outcome.id!r} was already reverted", param="outcome_id")
            if k.agent is not None:
                for entry in store.get_entries(outcome.entry_ids).values():
                    k._check_entry("write", entry, "revert_outcome")
            current = store.confidence_counts(outcome.entry_ids)
            changes = [{"entry_id": e["entry_id"],
                        **revert_counts(current[e["entry_id"]]["confidence"], current[e["entry_id"]]["counts"],
                                        success=e["success"], failure=e["failure"], strength=strength)}
                       for e in outcome.effects if e["entry_id"] in current]
            store.revert_outcome(outcome.id, utcnow(), changes, actor=actor or k.agent)
        return self.get_outcome(outcome.id)

    def list_outcomes(self, *, session_id: str | None = None, user_id: str | None = None, agent_id: str | None = None,
                 project_id: str | None = None, include_reverted: bool = True,
                 limit: int | None = 100) -> builtins.list[Outcome]:
        """Recorded outcomes, newest first; each given id must match the outcome's."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        self._kernel._gate.check("read", scope, "list_outcomes")
        rows = self._kernel._ready().list_outcomes(scope, include_reverted=bool(include_reverted),
                                                   limit=check.limit(limit))
        return [_outcome(r) for r in rows]

    def outcome_stats(self, *, user_id: str | None = None, agent_id: str | None = None, project_id: str | None = None,
                      session_id: str | None = None, top: int = 5) -> dict[str, Any]:
        """Outcomes recorded (per type, and reverted), the confidence of the scope's live entries in
        ten buckets of 0.1, and the ``top`` most-helped and most-harmed entries (net success counts)."""
        scope = check.scope_of(user_id, agent_id, project_id, session_id)
        self._kernel._gate.check("read", scope, "outcome_stats", whole=True)
        return self._kernel._ready().outcome_stats(scope, top=check.count(top, "top"))


class AsyncOutcomes:
    """``Outcomes`` for async code: each method runs in a worker thread (``db.outcomes``)."""

    def __init__(self, outcomes: Outcomes) -> None:
        self._sync = outcomes

    record_outcome = in_thread(Outcomes.record_outcome)
    get_outcome = in_thread(Outcomes.get_outcome)
    revert_outcome = in_thread(Outcomes.revert_outcome)
    list_outcomes = in_thread(Outcomes.list_outcomes)
    outcome_stats = in_thread(Outcomes.outcome_stats)
