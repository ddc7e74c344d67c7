"""A governed memory loop: an agent writes, retrieves and reports outcomes; its write into a protected
zone waits for a person, who approves it from the command line; a stale skill warns in `find`; and
before editing a file the agent recalls what is known about that file.

Run it: python examples/governed_loop.py   (offline: the packaged MiniLM and spaCy models)
"""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from agentbase_kernel import Kernel
from agentbase_kernel.store.base import utcnow

DB = Path("governed_loop.db")
SHOP = {"project_id": "shop"}


def section(title: str) -> None:
    print(f"\n== {title}")


def cli(*args: str) -> str:
    """The `agentbase` command a person types, on the same database."""
    done = subprocess.run([sys.executable, "-m", "agentbase_cli", "--db", str(DB), *args], check=True,
                          capture_output=True, text=True)
    return done.stdout.strip()


for leftover in DB.parent.glob(DB.name + "*"):
    leftover.unlink()

with Kernel(DB) as owner:
    agent = owner.view(agent="coder")  # the agent's own handle: same file, its writes marked as its own

    section("the agent writes and retrieves")
    agent.add_memory("Before editing src/app/db.py run `make migrate-check`: the pool settings live there",
                     **SHOP, category="guidance", confidence=0.6)
    agent.add_memory("The checkout page reads prices from the prices_daily view", **SHOP)
    found = agent.find("what should I check before changing the database module", **SHOP, top_k=1)
    for hit in found:
        print(f"  {hit.score:.3f}  {hit.entry.l2_full}")
    assert "make migrate-check" in found[0].entry.l2_full

    section("the outcome of the task moves the confidence of what was used")
    outcome = agent.record_outcome("task-1", "success", trace_ids=[found.trace.id], **SHOP)
    for effect in outcome.effects:
        print(f"  {effect['entry_id'][:8]}  confidence {effect['confidence_before']:.2f} -> "
              f"{effect['confidence_after']:.2f}")
    assert outcome.effects and outcome.effects[0]["confidence_after"] > outcome.effects[0]["confidence_before"]

    section("a protected zone: the agent's write becomes a proposal")
    owner.protect(**SHOP, category="policy", actor="dana")
    proposed = agent.add_memory("Deploys are allowed on Fridays", **SHOP, category="policy")
    print(f"  event {proposed.event}; in the zone now: {len(owner.list(**SHOP, category='policy'))} memories")
    assert proposed.event == "PROPOSED" and owner.list(**SHOP, category="policy") == []

section("a person approves it from the command line")
print("  $ agentbase proposals list --project-id shop")
print("  " + cli("proposals", "list", "--project-id", "shop").replace("\n", "\n  "))
print(f"  $ agentbase proposals approve {proposed.proposal_id} --reviewer dana")
print("  " + cli("proposals", "approve", str(proposed.proposal_id), "--reviewer", "dana"))

with Kernel(DB) as owner:
    agent = owner.view(agent="coder")
    [policy] = owner.list(**SHOP, category="policy")
    print(f"  now stored: {policy.l2_full!r} (source {policy.source}, trust {policy.trust})")
    assert policy.source == "human_approved"

    section("a skill goes stale and find says so")
    owner.add_skill("analytics-schema", "Daily revenue: sum amount from the analytics.events_v1 table by day",
                    **SHOP, authored_by="dana", created_at=utcnow() - timedelta(days=45))
    owner.add_memory("The analytics.events_v1 table was renamed to events_v2 last week", **SHOP)
    result = agent.find("how do I compute daily revenue", **SHOP, top_k=3)
    for warning in result.skill_warnings:
        print(f"  warning: {warning.message}")
    assert any(w.name == "analytics-schema" and "stale" in w.message for w in result.skill_warnings)
    owner.update_skill("analytics-schema", "Daily revenue: sum amount from the events_v2 table by day",
                       **SHOP, authored_by="coder")  # a new version waits for a person
    print("  $ agentbase skills promote analytics-schema --project-id shop --actor dana")
    print("  " + cli("skills", "promote", "analytics-schema", "--project-id", "shop", "--actor", "dana"))
    print("  $ agentbase skills list --project-id shop")
    print("  " + cli("skills", "list", "--project-id", "shop"))
    fresh = owner.get_skill("analytics-schema", **SHOP)
    assert fresh.version == 2 and fresh.warning is None
    assert not agent.find("how do I compute daily revenue", **SHOP, top_k=3).skill_warnings

    section("before editing a file: what is known about it")
    agent.add_messages("task-2", [{"role": "user", "content": "Raise the pool size, we time out under load"},
                                  {"role": "assistant", "content": "Raised the pool from 10 to 20 connections"}],
                       **SHOP, touched_entities=["src/app/db.py"])
    about = agent.retrieve_by_entities(["src/app/db.py"], **SHOP, budget_tokens=200)
    for hit in about:
        print(f"  {hit.score:.2f}  {hit.entry.l2_full}")
    texts = [h.entry.l2_full for h in about]
    assert any("make migrate-check" in t for t in texts) and any("from 10 to 20" in t for t in texts)
