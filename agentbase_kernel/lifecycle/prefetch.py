"""Per-turn prefetch (Memobase-style): what to put in the prompt before the model answers a turn.

Three sections, deduplicated across each other, filled within one token budget:

- profile: the user's current preferences and facts (category ``preference`` / ``fact``, or facts
  ingest extracted from the user's own words), newest first, never superseded or expired ones;
- relevant: the kernel's ``find`` for the user's message;
- recent: the newest memories of the scope.

Each section may use its share of the budget (profile 30%, relevant 50%, recent 20%); what one
leaves unused goes to the next, and what is left at the end takes further relevant hits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..records import Entry, FindResult, Hit, SkillWarning
from ..text.tokenize import count_tokens

__all__ = ["Prefetch", "build_prefetch"]

PROFILE_CATEGORIES = ("preference", "fact")
SHARES = (("profile", 0.3), ("relevant", 0.5), ("recent", 0.2))
HEADINGS = {"profile": "What you know about the user", "relevant": "Memories relevant to this message",
            "recent": "Most recent memories"}


@dataclass
class Prefetch:
    """The context for one turn. ``text()`` renders it for a system prompt."""

    profile: list[Entry] = field(default_factory=list)
    relevant: list[Hit] = field(default_factory=list)
    recent: list[Entry] = field(default_factory=list)
    token_budget: int = 0
    degrade_reason: str | None = None
    #: the warnings of chosen skills that are stale or drifted (docs/skills.md); ``text()`` shows them
    skill_warnings: list[SkillWarning] = field(default_factory=list)

    @property
    def entries(self) -> list[Entry]:
        """Every chosen entry, profile first."""
        return [*self.profile, *(h.entry for h in self.relevant), *self.recent]

    @property
    def tokens(self) -> int:
        return count_tokens(self.text()) if self.entries else 0

    def text(self) -> str:
        """Markdown sections with one bullet per memory; ``""`` when nothing was found."""
        parts = []
        for name, entries in (("profile", self.profile), ("relevant", [h.entry for h in self.relevant]),
                              ("recent", self.recent)):
            if entries:
                lines = [_line(e, dated=name != "profile") for e in entries]
                parts.append(f"## {HEADINGS[name]}\n" + "\n".join(lines))
        if parts and self.skill_warnings:
            parts.append("## Skill warnings\n" + "\n".join(f"- {w.message}" for w in self.skill_warnings))
        return "\n\n".join(parts)

    def __bool__(self) -> bool:
        return bool(self.entries)


def _line(entry: Entry, *, dated: bool) -> str:
    when = entry.created_at.date().isoformat() if dated and entry.created_at else None
    text = " ".join(entry.l2_full.split())
    return f"- [{when}] {text}" if when else f"- {text}"


def _key(entry: Entry) -> str:
    return " ".join(entry.l2_full.casefold().split())


def build_prefetch(list_entries: Callable[..., list[Entry]], find: Callable[..., FindResult], message: str,
                   scope: dict[str, Any], *, token_budget: int, relevant_k: int, recent_k: int,
                   reinforce: bool | None) -> Prefetch:
    """Gather and fit the three sections (see the module docstring), reading through the kernel's
    own ``list`` and ``find`` (so the caller's permissions and reinforcement apply)."""
    user_scope = {k: v for k, v in scope.items() if k != "session_id"}  # the profile is the user's
    if not user_scope:  # a bare session (a thread with no owner) must not read the whole file's profile
        user_scope = scope
    profile: list[Entry] = []
    for category in PROFILE_CATEGORIES:
        profile += list_entries(**user_scope, category=category, limit=200, order="desc")
    profile += [e for e in list_entries(**user_scope, metadata={"derived": "fact"}, limit=200, order="desc")
                if e.category in ("profile", "preference", "relationship", "possession")]
    profile.sort(key=lambda e: e.created_at or e.updated_at, reverse=True)  # type: ignore[arg-type, return-value]
    hits: list[Hit] = []
    degrade = None
    if message.strip():
        found = find(message, top_k=relevant_k, reinforce=reinforce, **scope)
        hits, degrade = list(found.hits), found.degrade_reason
    recent = list_entries(**scope, limit=recent_k, order="desc")

    out = Prefetch(token_budget=token_budget, degrade_reason=degrade)
    seen: set[str] = set()
    used = 0
    carry = 0.0
    pools: dict[str, list[Any]] = {"profile": profile, "relevant": hits, "recent": recent}
    chosen: dict[str, list[Any]] = {"profile": out.profile, "relevant": out.relevant, "recent": out.recent}

    def take(name: str, allowance: float) -> float:
        nonlocal used
        spent = 0
        heading = count_tokens(f"## {HEADINGS[name]}\n") + 1
        pool = pools[name]
        while pool:
            item = pool[0]
            entry = item.entry if isinstance(item, Hit) else item
            if entry.id in seen or _key(entry) in seen:
                pool.pop(0)
                continue
            cost = count_tokens(_line(entry, dated=name != "profile")) + 1
            cost += 0 if chosen[name] else heading
            if spent + cost > allowance or used + cost > token_budget:
                break
            pool.pop(0)
            chosen[name].append(item)
            seen.update((entry.id, _key(entry)))
            spent += cost
            used += cost
        return allowance - spent

    for name, share in SHARES:
        carry = take(name, share * token_budget + carry)
    take("relevant", token_budget - used)
    take("recent", token_budget - used)
    return out
