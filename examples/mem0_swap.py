"""Mem0's quick start with one line changed: ``from mem0 import Memory`` -> agentbase's drop-in.

No API key, no LLM, no network: facts are extracted by rules, vectors come from the bundled
MiniLM, and everything lives in one SQLite file ($AGENTBASE_PATH, here a temp dir if unset).

    python examples/mem0_swap.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("AGENTBASE_PATH", str(Path(tempfile.mkdtemp()) / "memory.db"))

# from mem0 import Memory
from agentbase_adapters.mem0 import Memory

m = Memory()

# --- from here on, Mem0's quick start as published ---
messages = [
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."},
]
result = m.add(messages, user_id="alice", metadata={"category": "movies"})
print(f"add: {len(result['results'])} memories stored")
for item in result["results"]:
    print(f"  {item['event']:4} {item['memory']}")

related = m.search(query="What kind of movies does alice like?", filters={"user_id": "alice"}, top_k=3)
print("search:")
for item in related["results"]:
    print(f"  {item['score']:.2f} {item['memory']}")

all_memories = m.get_all(filters={"user_id": "alice"})
first = all_memories["results"][0]
m.update(first["id"], text=first["memory"] + " (confirmed)")
print("history:", [row["event"] for row in m.history(first["id"])])

m.delete_all(user_id="alice")
print("after delete_all:", len(m.get_all(filters={"user_id": "alice"})["results"]), "memories")
m.close()
print(f"database file: {os.environ['AGENTBASE_PATH']}")
