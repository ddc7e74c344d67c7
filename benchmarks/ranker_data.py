"""The six development sets as the learned ranker sees them: ingested once, candidates and signals cached.

Each set is ingested once into a kernel file the way ``benchmarks/kernel_paths.py`` ingests (session
API; each turn's text ``"(<session date>) <Speaker>: <said>"``, role user for the conversation's
first speaker, the speaker as ``name``, the session date as ``created_at``). For every scored
question the kernel's own steps run up to the candidates (both recall legs read ``pool`` rows) and
``retrieve/signals.py`` records each candidate's signals, so a ranker is trained, ablated and scored
from the cache in seconds. The plain baselines are computed on the same stored texts: dense is the
stored MiniLM vector's cosine (what Mem0 OSS does), BM25 is an FTS5 table (unicode61, OR of the
question's words) per conversation.

    python -m benchmarks.ranker_data ingest DIR [SET ...]   # one kernel file per set
    python -m benchmarks.ranker_data dump DIR [SET ...]     # DIR/<set>.cands.pkl
    python -m benchmarks.ranker_data variants DIR [SET ...] --variants default,no_slots   # DIR/<set>.<variant>.json
    python -m benchmarks.judge_rules DIR                    # each variant judged leave-one-set-out
    python -m benchmarks.ranker_data foreign DIR [SET ...]  # questions asked in another conversation (no answer)
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import sqlite3
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .locomo import ASSISTANT_DATA, reference_times, session_date, sessions_of, turn_text

# the shared dev data beside the repository (AGENTBASE_DEV_DATA to point elsewhere)
SHARED = Path(os.environ.get("AGENTBASE_DEV_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
SETS: dict[str, Path] = {
    "locomo": SHARED / "locomo_dev.json",
    "realtalk": SHARED / "realtalk_dev.json",
    "beam": SHARED / "beam100k_dev.json",
    "pref_explicit": SHARED / "prefeval_explicit_dev.json",
    "pref_choice": SHARED / "prefeval_choice_dev.json",
    "assistant": ASSISTANT_DATA,
}
KS = (1, 5, 10, 20)
POOL = 150


def load(name: str) -> list[dict[str, Any]]:
    return json.loads(SETS[name].read_text())


def ingest(kernel: Any, data: list[dict[str, Any]]) -> int:
    """Every session in one ``add_messages``, as the kernel's session path benchmark does."""
    n_turns = 0
    for conv in data:
        sample = conv["sample_id"]
        first = conv["conversation"].get("speaker_a")
        for n, date, turns in sessions_of(conv["conversation"]):
            when = session_date(date)
            msgs = []
            for t in turns:
                said = turn_text(t)
                if not said.strip():
                    continue
                speaker = str(t.get("speaker") or "")
                memory = f"({date}) {speaker}: {said}" if date else f"{speaker}: {said}"
                msgs.append({"role": "user" if first is None or speaker == first else "assistant", "content": memory,
                             "name": speaker, "created_at": when, "metadata": {"dia_id": str(t["dia_id"])}})
            kernel.create_session(f"{sample}-s{n}", user_id=sample, metadata={"date": date})
            kernel.add_messages(f"{sample}-s{n}", msgs)
            n_turns += len(msgs)
    return n_turns


def questions(data: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], set[str]]]:
    """(sample_id, qa, evidence dia_ids) for every question of categories 1-4 with valid evidence."""
    valid = {str(t["dia_id"]) for conv in data for _, _, ts in sessions_of(conv["conversation"]) for t in ts}
    out = []
    for conv in data:
        for q in conv["qa"]:
            if q.get("category") not in (1, 2, 3, 4):
                continue
            ev = {p.strip() for e in q.get("evidence", []) for p in str(e).replace(";", ",").split(",")} & valid
            if ev:
                out.append((conv["sample_id"], q, ev))
    return out


def dump(kernel: Any, data: list[dict[str, Any]], pool: int = POOL) -> list[dict[str, Any]]:
    """Each question's candidates (both legs ``pool`` deep) with their signals and turn ids."""
    from agentbase_kernel.records import Scope
    from agentbase_kernel.retrieve.query import parse_query
    from agentbase_kernel.retrieve.signals import collect
    from agentbase_kernel.retrieve.steps import STEPS, Search, VectorCache
    from agentbase_kernel.store.base import EntryFilter

    r = kernel.retriever
    store = r.store
    cfg = replace(kernel.config.retrieval, fusion_pool=pool, record_traces=False)
    refs = reference_times(data)
    upto = [step for name, step in STEPS if name in ("normalise", "intent", "decompose", "recall_fts",
                                                     "recall_vector", "candidates", "fuse_scores")]
    rows = []
    for sample, qa, ev in questions(data):
        q = parse_query(str(qa["question"]), top_k=20, flt=EntryFilter(scope=Scope(user_id=sample)),
                        reference_time=refs[sample], token_budget=None, strategy="auto", cfg=cfg)
        s = Search(vectors=VectorCache(store))
        for step in upto:
            step(r, q, s)
        sig = collect(r, q, s, s.lacked_share)
        entries = {rid: s.cands[rid].entry for rid in sig.rids}
        facts = [e.id for e in entries.values() if e is not None and e.metadata.get("derived")]
        prov = store.provenance(facts) if facts else {}
        dias = []
        for rid in sig.rids:
            e = entries[rid]
            cited = [p.metadata.get("dia_id") for p in prov.get(e.id, []) if p.metadata.get("dia_id")]
            dias.append(cited or ([e.metadata["dia_id"]] if e.metadata.get("dia_id") else []))
        rows.append({"sample": sample, "question": qa["question"], "category": qa["category"],
                     "kind": qa.get("kind"), "evidence": sorted(ev), "superseded": qa.get("superseded"),
                     "rids": sig.rids, "dias": dias, "values": sig.values.astype(np.float32), "query": sig.query,
                     "neighbours": sig.neighbours})
    return rows


def plain_rankings(kernel: Any, data: list[dict[str, Any]], k: int = 20) -> dict[str, list[list[list[str]]]]:
    """The plain baselines on the stored turn texts: MiniLM cosine and FTS5 BM25, per conversation."""
    store = kernel.retriever.store
    embedder = kernel.retriever.embedder
    fts = sqlite3.connect(":memory:")
    fts.execute("CREATE VIRTUAL TABLE turns USING fts5(text, sample UNINDEXED, dia_id UNINDEXED)")
    matrices: dict[str, tuple[np.ndarray, list[str]]] = {}
    for conv in data:
        sample = conv["sample_id"]
        turns = [e for e in kernel.list(user_id=sample, limit=None)
                 if e.metadata.get("dia_id") and not e.metadata.get("derived")]
        fts.executemany("INSERT INTO turns VALUES (?, ?, ?)", [(e.l2_full, sample, e.metadata["dia_id"]) for e in turns])
        vectors = store.vectors_for({e.content_hash for e in turns})
        with_vec = [e for e in turns if e.content_hash in vectors]
        matrices[sample] = (np.stack([vectors[e.content_hash] for e in with_vec]),
                            [e.metadata["dia_id"] for e in with_vec])
    out: dict[str, list[list[list[str]]]] = {"dense": [], "bm25": []}
    for sample, qa, _ in questions(data):
        question = str(qa["question"])
        matrix, ids = matrices[sample]
        sims = matrix @ np.asarray(embedder.embed_batch([question])[0], dtype=np.float32)
        out["dense"].append([[ids[i]] for i in np.argsort(-sims, kind="stable")[:k]])
        words = re.findall(r"\w+", question.casefold())
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        found = fts.execute("SELECT dia_id FROM turns WHERE turns MATCH ? AND sample = ? ORDER BY bm25(turns) "
                            "LIMIT ?", (match, sample, k)).fetchall() if words else []
        out["bm25"].append([[d] for (d,) in found])
    return out


def foreign(kernel: Any, data: list[dict[str, Any]], per_set: int = 120, k: int = 20) -> list[dict[str, Any]]:
    """Questions asked in another conversation's scope (the next one's): what a question with no answer
    in the scope looks like to the calibration (every hit is a miss), about ``per_set`` questions spread
    over the conversations. Per question: the default's
    fused scores (uncalibrated) of its best ``k`` and the question's best cosine, best BM25, unseen
    and lacked word shares."""
    from agentbase_kernel.records import Scope
    from agentbase_kernel.retrieve.query import parse_query
    from agentbase_kernel.retrieve.steps import STEPS, Search, VectorCache
    from agentbase_kernel.store.base import EntryFilter

    r = kernel.retriever
    cfg = replace(kernel.config.retrieval, calibrated_scores=False, record_traces=False)
    refs = reference_times(data)
    samples = [conv["sample_id"] for conv in data]
    if len(samples) < 2:
        return []
    per_conversation = max(1, per_set // len(samples))
    out = []
    for i, conv in enumerate(data):
        other = samples[(i + 1) % len(samples)]
        asked = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4)][:per_conversation]
        for qa in asked:
            q = parse_query(str(qa["question"]), top_k=k, flt=EntryFilter(scope=Scope(user_id=other)),
                            reference_time=refs[other], token_budget=None, strategy="auto", cfg=cfg)
            s = Search(vectors=VectorCache(r.store))
            for _, step in STEPS:
                step(r, q, s)
            n_terms = len(q.worded)
            out.append({"scores": [h.score for h in s.hits[:k]],
                        "top_cosine": max(s.similarity.values(), default=0.0),
                        "top_bm25": max(s.bm25.values(), default=0.0),
                        "unseen_share": len(s.unseen) / n_terms if n_terms else 0.0,
                        "lacked_share": s.lacked_share})
    return out


def kernel_rankings(kernel: Any, data: list[dict[str, Any]], retrieval: Any = None,
                    k: int = 20) -> tuple[list[list[list[str]]], list[list[float]], list[float]]:
    """The kernel's own ``find`` (its rankings, scores and milliseconds per question)."""
    from .kernel_paths import dia_ids

    refs = reference_times(data)
    ranked, scores, ms = [], [], []
    for sample, qa, _ in questions(data):
        t0 = time.perf_counter()
        found = kernel.find(str(qa["question"]), top_k=k, user_id=sample, reference_time=refs[sample],
                            config=retrieval, reinforce=False)
        ms.append((time.perf_counter() - t0) * 1000)
        ranked.append([dia_ids(h) for h in found])
        scores.append([h.score for h in found])
    return ranked, scores, ms


# each hand rule of the default switched off (``variants``): the rule's leave-one-set-out judgement
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "no_slots": {"latest_slots": False},
    "no_change": {"latest_change_relevance": 0.7, "latest_slot_change_relevance": 0.7},
    "no_quota": {"dense_quota": 0},
    "no_speaker": {"ner_speaker": 1.0},
    "no_dates": {"date_event_boost": 1.0, "date_said_boost": 1.0},
    "no_self": {"self_boost": 1.0},
    "ranker": {"experimental": {"ranker": True}},
    "no_answer_first": {"answer_first": False},
}


def score(items: list[tuple[dict[str, Any], set[str], list[list[str]]]]) -> dict[str, dict[str, float]]:
    """hit@k / recall@k overall, per category and per kind (``items``: (question row, evidence, ranking))."""
    groups: dict[str, dict[str, list[float]]] = {}
    for row, ev, ranked in items:
        keys = ["all", f"cat{row['category']}"] + ([str(row["kind"])] if row.get("kind") else [])
        for kk in KS:
            got = {d for ids in ranked[:kk] for d in ids}
            for key in keys:
                g = groups.setdefault(key, {})
                g.setdefault(f"hit@{kk}", []).append(float(bool(ev & got)))
                g.setdefault(f"recall@{kk}", []).append(len(ev & got) / len(ev))
    return {key: {m: sum(v) / len(v) for m, v in ms.items()} | {"n": len(ms["hit@1"])} for key, ms in groups.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["ingest", "dump", "baselines", "kernel", "variants", "foreign"])
    parser.add_argument("dir")
    parser.add_argument("sets", nargs="*", default=list(SETS))
    parser.add_argument("--pool", type=int, default=POOL)
    parser.add_argument("--label", default="default", help="kernel: the name of this run's rankings file")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="variants: which config variants to run (DIR/<set>.<variant>.json; existing files kept)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agentbase_kernel import Kernel

    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    for name in args.sets:
        data = load(name)
        db = folder / f"{name}.db"
        with Kernel(db) as kernel:
            t0 = time.perf_counter()
            if args.command == "ingest":
                n = ingest(kernel, data)
                print(f"{name}: {n} turns in {time.perf_counter() - t0:.0f} s", flush=True)
            elif args.command == "dump":
                rows = dump(kernel, data, args.pool)
                (folder / f"{name}.cands.pkl").write_bytes(pickle.dumps(rows))
                print(f"{name}: {len(rows)} questions, {sum(len(r['rids']) for r in rows)} candidates "
                      f"in {time.perf_counter() - t0:.0f} s", flush=True)
            elif args.command == "baselines":
                plain = plain_rankings(kernel, data)
                (folder / f"{name}.plain.json").write_text(json.dumps(plain))
                print(f"{name}: plain baselines in {time.perf_counter() - t0:.0f} s", flush=True)
            elif args.command == "foreign":
                rows = foreign(kernel, data)
                (folder / f"{name}.foreign.json").write_text(json.dumps(rows))
                print(f"{name}: {len(rows)} questions in another conversation in {time.perf_counter() - t0:.0f} s",
                      flush=True)
            elif args.command == "variants":
                for variant in args.variants.split(","):
                    path = folder / f"{name}.{variant}.json"
                    if path.exists():
                        continue
                    t1 = time.perf_counter()
                    ranked, scores, ms = kernel_rankings(kernel, data,
                                                         kernel.config.with_(retrieval=VARIANTS[variant]).retrieval)
                    path.write_text(json.dumps({"ranked": ranked, "scores": scores, "ms": ms}))
                    print(f"{name} {variant}: {time.perf_counter() - t1:.0f} s", flush=True)
            else:
                ranked, scores, ms = kernel_rankings(kernel, data)
                (folder / f"{name}.{args.label}.json").write_text(json.dumps({"ranked": ranked, "scores": scores,
                                                                              "ms": ms}))
                print(f"{name}: kernel rankings in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
