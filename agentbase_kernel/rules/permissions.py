"""Per-scope permissions: which agents may read or write which scopes (the rule; ``lifecycle/gate.py``
enforces it for one acting agent).

A policy says that ``agent`` may (or may not) read and write the entries, sessions and messages of
a scope pattern (e.g. ``project_id="p1"``, or ``agent_id="a", project_id="p1"``). A scope with at
least one policy is *protected*: only the agents granted on it may use it. Scopes without policies
stay open, as are all files without policies.

The acting agent is the kernel's (``Kernel(path, agent="b")``, ``kernel.as_agent("b")``). A kernel
without one is the file's owner - it manages the policies and is never restricted.

How a call is judged, for the acting agent and each protected pattern it lacks the access for:

- the call's scope lies inside the pattern (every id the pattern sets is given, equal): denied;
- the call's scope is wider and may reach into it (no given id differs): the pattern's rows are
  left out of what the call reads or changes, as row-level security does;
- otherwise the pattern does not concern the call.

A single entry, session or message is judged by its own scope.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..records import Scope

__all__ = ["Policy", "Verdict", "Verdicts", "judge", "policy_of"]

_FIELDS = ("user_id", "agent_id", "project_id", "session_id")


@dataclass(frozen=True)
class Policy:
    """What ``agent`` may do in the entries of ``scope`` (and in scopes inside it)."""

    agent: str
    scope: Scope
    read: bool
    write: bool
    created_at: datetime | None = None


@dataclass(frozen=True)
class Verdict:
    """``denied_by``: the pattern that forbids the call; ``excluded``: patterns to leave out."""

    denied_by: Scope | None = None
    excluded: tuple[Scope, ...] = ()


def _inside(scope: Scope, pattern: Scope) -> bool:
    return all(getattr(scope, f) == v for f, v in pattern.as_dict().items())


def _touches(scope: Scope, pattern: Scope) -> bool:
    return all(getattr(scope, f) is None or getattr(scope, f) == v for f, v in pattern.as_dict().items())


def judge(policies: Sequence[Policy], agent: str, scope: Scope, access: str, *, exact: bool = False) -> Verdict:
    """The verdict on ``agent`` doing ``access`` (``"read"`` / ``"write"``) in ``scope``.

    ``exact``: ``scope`` is one row's own scope (its unset ids are empty, not wildcards), so only
    the patterns it lies inside concern it.
    """
    allowed: dict[Scope, bool] = {}
    for policy in policies:
        granted = policy.read if access == "read" else policy.write
        allowed[policy.scope] = allowed.get(policy.scope, False) or (policy.agent == agent and granted)
    excluded: list[Scope] = []
    for pattern, ok in allowed.items():
        if ok:
            continue
        if _inside(scope, pattern):
            return Verdict(denied_by=pattern)
        if not exact and _touches(scope, pattern):
            excluded.append(pattern)
    return Verdict(excluded=tuple(excluded))


def policy_of(row: dict[str, Any]) -> Policy:
    return Policy(agent=row["agent"], scope=row["scope"], read=row["read"], write=row["write"],
                  created_at=row.get("created_at"))


class Verdicts:
    """Verdicts already reached on one policy list (shared by a kernel and its views): the policy
    table changes rarely, while every call of an agent-bound kernel asks."""

    _MAX = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: Any = None
        self._memo: dict[tuple[Any, ...], Verdict] = {}

    def get(self, rows: Any, key: tuple[Any, ...], compute: Callable[[], Verdict]) -> Verdict:
        with self._lock:
            if self._rows is not rows:
                self._rows, self._memo = rows, {}
            verdict = self._memo.get(key)
        if verdict is None:
            verdict = compute()
            with self._lock:
                if self._rows is rows and len(self._memo) < self._MAX:  # still the list it was judged on
                    self._memo[key] = verdict
        return verdict
