"""Build a 100k-entry agentbase file for dashboard timings (outside the repo)."""
import random
import sys
import time
from datetime import UTC, datetime, timedelta

from agentbase_kernel import Kernel

path = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
rnd = random.Random(7)
names = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Berlin", "Paris", "Tokyo", "Python", "Rust"]
verbs = ["likes", "visited", "wrote about", "asked about", "prefers", "moved to", "works with", "met"]
things = ["green tea", "the report", "a new laptop", "hiking", "jazz", "the budget", "sourdough", "chess", "the deadline", "a bug"]
cats = ["preference", "fact", "plan", "event", "skill_note", None]
tags = ["work", "home", "travel", "food", "music", "health", "code", "family"]
now = datetime(2026, 12, 1, tzinfo=UTC)
t0 = time.perf_counter()
with Kernel(path, embedder=None, ner="regex") as k:
    items = []
    for i in range(n):
        when = now - timedelta(days=rnd.random() ** 1.5 * 365, hours=rnd.randint(0, 23), minutes=rnd.randint(0, 59))
        items.append({"text": f"{rnd.choice(names)} {rnd.choice(verbs)} {rnd.choice(things)} with {rnd.choice(names)} (note {i})",
                      "user_id": f"user{rnd.randint(1, 20)}", "agent_id": rnd.choice([None, "planner", "coder"]),
                      "category": rnd.choice(cats), "tags": rnd.sample(tags, rnd.randint(0, 3)),
                      "context_type": rnd.choice(["memory"] * 8 + ["resource", "skill"]),
                      "created_at": when, "actor": rnd.choice([None, "mem0", "langgraph", "minimal"])})
    for start in range(0, n, 5000):
        k.add_memories(items[start:start + 5000])
        print(start + 5000, round(time.perf_counter() - t0, 1), flush=True)
    ids = [e.id for e in k.list(limit=2000, offset=1000)]
    for eid in ids[:1000]:
        k.update(eid, text="updated: " + k.get(eid).text, actor="dashboard-bench")
    for eid in ids[1000:1300]:
        k.delete(eid, actor="dashboard-bench")
    k.add_messages("bench-session", [{"role": "user", "content": "I moved to Berlin last week with Alice"},
                                      {"role": "assistant", "content": "Nice, how is Berlin?"}], user_id="user1")
    for q in ["green tea", "Alice Berlin", "budget deadline", "what does Bob like", "jazz"]:
        k.find(q, user_id="user1")
        k.find(q)
print("done", round(time.perf_counter() - t0, 1))
