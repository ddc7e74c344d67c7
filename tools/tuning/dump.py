"""Dump every candidate's features per question, so fusion variants score offline in seconds.

    python tools/tuning/dump.py assistant /tmp/tune/assistant.db /tmp/tune/assistant.pkl

Runs the kernel's own retriever with a wide pool (150) and no co-retrieval, and records for each
candidate: BM25, own cosine, context cosine, the boost and its labels, role, speaker, date, session,
dia_id, fact-or-turn, the entry's own vector (for pairwise similarity); plus each question's
intents and date window.
"""

from __future__ import annotations

import os
import pickle
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness


def main(name: str, db: str, out: str) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agentbase_kernel import Kernel
    from agentbase_kernel.retrieve import pipeline
    from agentbase_kernel.text import dates as dates_mod
    from agentbase_kernel.text import intent as intent_mod

    stash: dict = {}
    orig_cos = pipeline.Retriever._cosines
    orig_fuse = pipeline.Retriever._score_fusion

    def cosines(self, cands, similarity, qvec, cfg):
        own = orig_cos(self, cands, similarity, qvec, replace(cfg, context_vector_weight=0.0))
        ctx = orig_cos(self, cands, similarity, qvec, replace(cfg, context_vector_weight=1.0))
        stash["own"], stash["ctx"] = own, ctx
        return orig_cos(self, cands, similarity, qvec, cfg)

    def fuse(self, cands, bm25, *rest):
        stash["bm25"] = dict(bm25)
        return orig_fuse(self, cands, bm25, *rest)

    def co(self, ordered, flt, cfg):
        stash["ordered"] = list(ordered)
        return ordered

    pipeline.Retriever._cosines = cosines
    pipeline.Retriever._score_fusion = fuse
    pipeline.Retriever._co_retrieve = co
    data = harness.load(name)
    refs = harness.refs_of(data)
    rows = []
    with Kernel(db) as kernel:
        cfg = replace(kernel.config.retrieval, fusion_pool=150, record_traces=False, self_boost=1.0, latest_first=False)
        store = kernel._ready()
        for sample, q, ev in harness.questions(data):
            stash.clear()
            kernel.find(str(q["question"]), top_k=20, user_id=sample, reference_time=refs[sample], config=cfg)
            cands = []
            hashes = []
            for c in stash.get("ordered", []):
                e = c.entry
                dia = e.metadata.get("dia_id")
                prov = [p.metadata.get("dia_id") for p in store.provenance([e.id]).get(e.id, [])] if \
                    e.metadata.get("derived") else []
                cands.append({
                    "rid": c.rid, "id": e.id, "dia": [d for d in prov if d] or ([dia] if dia else []),
                    "bm25": stash["bm25"].get(c.rid, 0.0), "own": stash.get("own", {}).get(c.rid, 0.0),
                    "ctx": stash.get("ctx", {}).get(c.rid, 0.0), "boost": c.boost, "labels": list(c.matched_by), "legs": dict(c.legs),
                    "role": e.role, "actor": e.actor, "created": e.created_at, "session": e.session_id,
                    "fact": e.metadata.get("derived") == "fact", "category": e.category, "hash": e.content_hash,
                    "text": e.l2_full[:300], "invalid": e.invalid_at})
                hashes.append(e.content_hash)
            vecs = store.vectors_for(hashes)
            for c in cands:
                c["vec"] = vecs.get(c["hash"])
            query = str(q["question"])
            window = dates_mod.query_window(query, refs[sample])
            rows.append({"sample": sample, "q": q, "ev": ev, "cands": cands, "window": window,
                         "intents": intent_mod.detect_intents(query.casefold()), "ref": refs[sample]})
    Path(out).write_bytes(pickle.dumps(rows))
    print(f"{name}: {len(rows)} questions dumped")


if __name__ == "__main__":
    main(*sys.argv[1:4])
