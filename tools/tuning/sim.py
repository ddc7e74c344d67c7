"""Score fusion variants offline from dump.py's pickles (seconds per variant).

    python tools/tuning/sim.py /tmp/tune/assistant.pkl /tmp/tune/locomo.pkl
"""

from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness

_DIA = re.compile(r"D(\d+):(\d+)")


def pos(dia: str) -> tuple[int, int] | None:
    m = _DIA.fullmatch(dia or "")
    return (int(m[1]), int(m[2])) if m else None


def fuse(row, p):
    pool = p.get("pool", 60)
    cands = [c for c in row["cands"] if c["legs"].get("fts", 999) < pool or c["legs"].get("vector", 999) < pool]
    a, cw = p.get("a", 0.5), p.get("cw", 0.75)
    bm = {c["rid"]: c["bm25"] for c in cands}
    cos = {c["rid"]: (1 - cw) * c["own"] + cw * c["ctx"] for c in cands}
    top_b = max(bm.values(), default=0) or 1.0
    top_c = max(cos.values(), default=0) or 1.0
    out = []
    for c in cands:
        f = (1 - a) * bm[c["rid"]] / top_b + a * max(cos[c["rid"]], 0) / top_c
        out.append([f * c["boost"], c])
    out.sort(key=lambda x: (-x[0], x[1]["rid"]))
    return out


def co_retrieve(scored, p):
    if not p.get("co", True):
        return [(s, c["dia"]) for s, c in scored]
    seeds = scored[: p.get("seeds", 3)]
    w = p.get("cow", 0.6)
    win = p.get("win", 2)
    best: dict[str, float] = {}
    for s, c in seeds:
        if c["fact"]:
            continue
        for d in c["dia"]:
            sp = pos(d)
            if not sp:
                continue
            for dt in range(-win, win + 1):
                if dt:
                    nd = f"D{sp[0]}:{sp[1] + dt}"
                    ww = p.get("next_w", w) if dt == 1 else w
                    best[nd] = max(best.get(nd, 0.0), s * ww)
    items = []
    have = set()
    for s, c in scored:
        ids = c["dia"]
        s2 = max([s] + [best.get(d, 0.0) for d in ids if not c["fact"]])
        items.append((s2, ids))
        have.update(ids if not c["fact"] else [])
    for d, s in best.items():
        if d not in have:
            items.append((s, [d]))
    items.sort(key=lambda x: -x[0])
    return items


def evaluate(rows, p, hook=None):
    rankings = []
    for row in rows:
        scored = fuse(row, p)
        if hook:
            scored = hook(row, scored, p)
        ranked = co_retrieve(scored, p)
        rankings.append((row["q"], row["ev"], [ids for _, ids in ranked[:20]]))
    return harness.score(rankings)


def line(name, t):
    a = t["all"]
    kinds = " ".join(f"{k[:8]}={t[k]['hit@1']:.2f}/{t[k]['hit@10']:.2f}" for k in sorted(t)
                     if not k.startswith("cat") and k != "all")
    cats = " ".join(f"{k}={t[k]['hit@10']:.3f}/{t[k]['recall@10']:.3f}" for k in sorted(t) if k.startswith("cat"))
    return f"{name}: h1={a['hit@1']:.3f} h10={a['hit@10']:.3f} r10={a['recall@10']:.3f} | {kinds or cats}"


if __name__ == "__main__":
    sets = {Path(f).stem: pickle.loads(Path(f).read_bytes()) for f in sys.argv[1:]}
    for name, rows in sets.items():
        print(line(name, evaluate(rows, {})))
