"""For each question: how many of its FTS terms occur at all in its conversation (df > 0).

    python tools/tuning/term_presence.py assistant /tmp/tune/assistant.db /tmp/tune/assistant.terms.pkl
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness


def main(name: str, db: str, out: str) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agentbase_kernel import Kernel
    from agentbase_kernel.records import Scope
    from agentbase_kernel.store.base import EntryFilter
    from agentbase_kernel.text import tokenize

    data = harness.load(name)
    rows = {}
    with Kernel(db, embedder=None, ner=None) as kernel:
        store = kernel._ready()
        for sample, q, _ in harness.questions(data):
            terms = tokenize.query_terms(tokenize.normalize(str(q["question"])))
            flt = EntryFilter(scope=Scope(user_id=sample))
            rows[q["question"], sample] = {t: len(store.fts_search([t], flt, 5)) for t in terms}
    Path(out).write_bytes(pickle.dumps(rows))
    print(len(rows))


if __name__ == "__main__":
    main(*sys.argv[1:4])
