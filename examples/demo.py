"""The main demo: one database file, memories in two scopes, a session, and a search.

Run it with `make demo`. It writes `demo.db` in a temporary folder (or $AGENTBASE_PATH).
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from agentbase_kernel import Kernel


def main() -> None:
    path = Path(os.environ.get("AGENTBASE_PATH") or Path(tempfile.mkdtemp()) / "demo.db")
    with Kernel(path) as db:
        info = db.info()
        print(f"database: {info['path']}  vectors: {info['vector_backend']}  NER: {info['ner_stage']}  "
              f"embedder: {info['embedder']}")
        db.add_memory("I prefer Python 3.12 and dark mode", user_id="alice", category="preference")
        db.add_memory("Bob is allergic to peanuts", user_id="bob")
        db.create_session("trip", user_id="alice")
        when = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
        db.add_messages("trip", [
            {"role": "user", "content": "I went to the LGBTQ support group yesterday", "created_at": when},
            {"role": "assistant", "content": "That sounds meaningful. How did it go?", "created_at": when},
            {"role": "user", "content": "Great! Next month I'm going camping in Yosemite", "created_at": when},
        ])
        summary = db.commit_session("trip")
        print(f"session summary: {summary.l1_overview}")
        for query in ("what does alice prefer?", "when did she go to the support group?", "peanuts"):
            result = db.find(query, user_id="alice", reference_time=when)
            print(f"\nfind({query!r}, user_id='alice')  intents={result.trace.intents}")
            for hit in result[:3]:
                print(f"  {hit.score:.3f}  {hit.entry.l2_full!r}  dates={hit.entry.event_dates}  via={hit.matched_by}")
        print(f"\nbob's memories are not alice's: {len(db.find('peanuts', user_id='alice', config=db.config.with_(retrieval={'vectors': False}).retrieval))} FTS hits for alice")


if __name__ == "__main__":
    main()
