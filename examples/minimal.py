"""The smallest agentbase program: remember, recall, forget, on one SQLite file.

    python examples/minimal.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from agentbase_adapters.minimal import MinimalAdapter

path = Path(tempfile.mkdtemp()) / "memory.db"

with MinimalAdapter(path) as mem:
    seat = mem.remember("Alice prefers window seats", who="alice", tags=["travel"])
    mem.remember("Alice is allergic to peanuts", who="alice", source="intake form")
    mem.remember("Bob prefers the aisle", who="bob")

    for hit in mem.recall("where does alice like to sit?", who="alice", top_k=2):
        print(f"{hit.score:.2f}  {hit.content}")

    print("forgotten:", mem.forget(seat))
    print("left for alice:", [hit.content for hit in mem.recall("alice", who="alice")])

print(f"database file: {path}")
