"""Tuning harness: ingest a LoCoMo-format dev set into a kernel file once, then score ``Kernel.find``.

Ingest and search mirror main's ``benchmarks/kernel_paths.py`` (session API; each turn's text is
``"(<session date>) <Speaker>: <said>"``, role user for speaker_a else assistant, speaker as
``name``, the session date as ``created_at``; ``find`` per conversation with the last session's
date as reference time), so a figure here is the figure ``benchmarks/locomo.py`` gives on main.

    python tools/tuning/harness.py ingest assistant /tmp/tune/assistant.db
    python tools/tuning/harness.py eval assistant /tmp/tune/assistant.db [key=value ...]   # experimental__intents=true
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.locomo import session_date, sessions_of, turn_text

# the six sets, where they live and how questions are read: one definition, benchmarks/ranker_data.py's
from benchmarks.ranker_data import KS, load, questions


def ingest(kernel: Any, data: list[dict[str, Any]], raw: bool = False) -> int:
    """``raw``: the turn's own words only, as baseline_check.py gives the plain baselines."""
    n_turns = 0
    for conv in data:
        sample = conv["sample_id"]
        first = conv["conversation"].get("speaker_a")
        for n, date, turns in sessions_of(conv["conversation"]):
            when = session_date(date)
            sid = f"{sample}-s{n}"
            msgs = []
            for t in turns:
                said = turn_text(t)
                if not said.strip():
                    continue
                speaker = str(t.get("speaker") or "")
                memory = said if raw else f"({date}) {speaker}: {said}" if date else f"{speaker}: {said}"
                msgs.append({"role": "user" if first is None or speaker == first else "assistant", "content": memory,
                             "name": speaker, "created_at": when, "metadata": {"dia_id": str(t["dia_id"])}})
            kernel.create_session(sid, user_id=sample, metadata={"date": date})
            kernel.add_messages(sid, msgs)
            n_turns += len(msgs)
    return n_turns


def refs_of(data: list[dict[str, Any]]) -> dict[str, datetime | None]:
    out = {}
    for conv in data:
        known = [d for d in (session_date(w) for _, w, _ in sessions_of(conv["conversation"])) if d]
        out[conv["sample_id"]] = known[-1] if known else None
    return out


def dia_ids(hit: Any) -> list[str]:
    ids = [p.metadata.get("dia_id") for p in hit.provenance if p.metadata.get("dia_id")]
    if not ids and hit.entry.metadata.get("dia_id"):
        ids = [hit.entry.metadata["dia_id"]]
    return ids


def score(rankings: list[tuple[dict[str, Any], set[str], list[list[str]]]]) -> dict[str, dict[str, float]]:
    """hit@k / recall@k per category, per kind, and for knowledge updates: how often an old value leads."""
    groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for q, ev, ranked in rankings:
        keys = ["all", f"cat{q['category']}"] + ([q["kind"]] if q.get("kind") else [])
        for k in KS:
            got = {d for ids in ranked[:k] for d in ids}
            for key in keys:
                groups[key][f"hit@{k}"].append(float(bool(ev & got)))
                groups[key][f"recall@{k}"].append(len(ev & got) / len(ev))
        if q.get("superseded"):
            flat = [d for ids in ranked for d in ids]
            old = min((flat.index(s) for s in q["superseded"] if s in flat), default=999)
            new = min((flat.index(e) for e in ev if e in flat), default=999)
            groups["knowledge-update"]["old-first"].append(float(old < new))
    return {key: {m: round(sum(v) / len(v), 3) for m, v in ms.items()} | {"n": len(ms["hit@1"])}
            for key, ms in groups.items()}


def run(kernel: Any, data: list[dict[str, Any]], retrieval: Any = None,
        scores: list[list[float]] | None = None) -> tuple[dict, list]:
    """``scores``: a list to append each question's hit scores to (for comparing two runs exactly)."""
    refs = refs_of(data)
    rankings = []
    for sample, q, ev in questions(data):
        found = kernel.find(str(q["question"]), top_k=max(KS), user_id=sample, reference_time=refs[sample],
                            config=retrieval)
        rankings.append((q, ev, [dia_ids(h) for h in found]))
        if scores is not None:
            scores.append([h.score for h in found])
    return score(rankings), rankings


def show(name: str, table: dict[str, dict[str, float]]) -> None:
    a = table["all"]
    print(f"{name}: all n={a['n']} hit@1={a['hit@1']:.3f} hit@10={a['hit@10']:.3f} recall@10={a['recall@10']:.3f}")
    for key in sorted(k for k in table if k != "all"):
        s = table[key]
        extra = f" old-first={s['old-first']:.3f}" if "old-first" in s else ""
        print(f"  {key:26s} n={s['n']:3d} hit@1={s['hit@1']:.3f} hit@10={s['hit@10']:.3f} "
              f"recall@10={s['recall@10']:.3f}{extra}")


def _value(raw: str) -> Any:
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(raw.lower(), raw)


def main(argv: list[str]) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agentbase_kernel import Kernel

    cmd, name, db = argv[:3]
    data = load(name)
    with Kernel(db) as kernel:
        if cmd in ("ingest", "ingest-raw"):
            t0 = time.perf_counter()
            n = ingest(kernel, data, raw=cmd == "ingest-raw")
            print(f"{name}: {n} turns in {time.perf_counter() - t0:.0f} s")
            return
        changes = dict(a.split("=", 1) for a in argv[3:])
        save = changes.pop("save", None)
        # a key of a nested section as the environment spells it: experimental__intents=true
        cfg = kernel.config.with_(retrieval={k: _value(v) for k, v in changes.items()}).retrieval if changes else None
        scores: list[list[float]] = []
        table, rankings = run(kernel, data, cfg, scores)
        show(name + (f" {changes}" if changes else ""), table)
        if save:  # every question's ranking and scores, to check a refactor changes nothing
            Path(save).write_text(json.dumps([{"q": q["question"], "ranked": r, "scores": sc}
                                              for (q, _, r), sc in zip(rankings, scores)]))


if __name__ == "__main__":
    main(sys.argv[1:])
