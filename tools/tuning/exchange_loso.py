"""Three ways to fix the default's first hit, each judged leave-one-set-out from the ranker cache.

    python tools/tuning/exchange_loso.py DIR        # DIR: what ``python -m benchmarks.ranker_data`` wrote

Where the default's first hit is wrong the right turn is often the one plain dense ranks first, or the
other half of the same exchange (the default ranks a user's question first and the answer is next, or
the assistant's reply first and the user's statement is next). Each experiment reorders only the head of
the default's ranking (``<set>.old.json``) with signals the kernel already computes (``<set>.cands.pkl``):

- ``router``: put the vector leg's first hit first when a classifier over the question's and both first
  hits' signals says so (gradient-boosted trees; its threshold chosen inside the five training sets);
- ``answer``: when the first hit only asks (ends in "?") and a turn next to it in its session, from a
  speaker at least as named, that does not ask is within the first ``depth``, that turn goes first
  (optionally only for questions that ask for a recommendation);
- ``own_cosine``: within one exchange (adjacent turns of one session among the first ``depth``) the turn
  whose own vector is closer by ``margin`` goes first (context vectors find the exchange, not the turn).

For every held-out set the configuration (``off`` included) is chosen on the other five by mean
hit@1 + hit@10 and must not lose to the default on the sixth at hit@1 or hit@10. Results: docs/retrieval.md.
"""

from __future__ import annotations

import json
import pickle
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from agentbase_kernel.retrieve.signals import CANDIDATE_SIGNALS, QUERY_SIGNALS
from benchmarks.ranker_data import SETS, score

C = {name: i for i, name in enumerate(CANDIDATE_SIGNALS)}
Q = {name: i for i, name in enumerate(QUERY_SIGNALS)}
_DIA = re.compile(r"D(\d+):(\d+)$")
Config = tuple[tuple[str, Any], ...]


def load(cache: Path, name: str) -> dict[str, Any]:
    rows = pickle.loads((cache / f"{name}.cands.pkl").read_bytes())
    old = json.loads((cache / f"{name}.old.json").read_text())["ranked"]
    return {"name": name, "rows": rows, "old": old}


def hits(data: dict[str, Any], lists: list[list[list[str]]]) -> tuple[float, float]:
    t = score([(row, set(row["evidence"]), r) for row, r in zip(data["rows"], lists)])["all"]
    return t["hit@1"], t["hit@10"]


def place(ids: list[str]) -> tuple[int, int] | None:
    m = _DIA.match(ids[0]) if len(ids) == 1 else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def first(old: list[list[str]], r: int) -> list[list[str]]:
    return [old[r]] + [x for k, x in enumerate(old) if k != r]


def index(row: dict[str, Any]) -> dict[tuple[str, ...], int]:
    return {tuple(d): i for i, d in reversed(list(enumerate(row["dias"])))}


def neighbours_in_head(row: dict[str, Any], old: list[list[str]], depth: int) -> list[tuple[int, int, int]]:
    """(place in the ranking, candidate row of the first hit, candidate row) of the first hit's session
    neighbours among the first ``depth``."""
    at = index(row)
    top = place(old[0]) if old else None
    i0 = at.get(tuple(old[0])) if old else None
    if top is None or i0 is None:
        return []
    out = []
    for r in range(1, min(depth, len(old))):
        p, i = place(old[r]), at.get(tuple(old[r]))
        if p and i is not None and p[0] == top[0] and abs(p[1] - top[1]) == 1:
            out.append((r, i0, i))
    return out


def answer(data: dict[str, Any], cfg: dict[str, Any]) -> list[list[list[str]]]:
    out = []
    for row, old in zip(data["rows"], data["old"]):
        v, new = row["values"], old
        if not cfg["recommend_only"] or row["query"][Q["q_recommend"]] > 0:
            for r, i0, i in neighbours_in_head(row, old, cfg["depth"]):
                if v[i0, C["asks"]] > 0 and v[i, C["asks"]] == 0 and v[i, C["speaker_named"]] >= v[i0, C["speaker_named"]]:
                    new = first(old, r)
                    break
        out.append(new)
    return out


def own_cosine(data: dict[str, Any], cfg: dict[str, Any]) -> list[list[list[str]]]:
    out = []
    for row, old in zip(data["rows"], data["old"]):
        v, new = row["values"], old
        for r, i0, i in neighbours_in_head(row, old, cfg["depth"]):
            if (v[i, C["speaker_named"]] >= v[i0, C["speaker_named"]]
                    and v[i, C["cos_own"]] > v[i0, C["cos_own"]] + cfg["margin"]):
                new = first(old, r)
                break
        out.append(new)
    return out


# -- the router: vector leg's first hit or the default's ------------------------------------------------
def router_rows(data: dict[str, Any]) -> list[tuple[np.ndarray, list[str], bool, bool] | None]:
    """Per question: features, the vector leg's first hit, whether it / the default's first hit is right."""
    out: list[tuple[np.ndarray, list[str], bool, bool] | None] = []
    for row, old in zip(data["rows"], data["old"]):
        v = row["values"]
        lead = np.flatnonzero(v[:, C["vec_rank"]] == 0) if len(v) else []
        i0 = index(row).get(tuple(old[0])) if old else None
        if not len(lead) or i0 is None or list(row["dias"][int(lead[0])]) == list(old[0]):
            out.append(None)
            continue
        iv, ev = int(lead[0]), set(row["evidence"])
        cos, bm25 = v[:, C["cos_own"]], v[:, C["bm25"]]
        top_bm25 = max(float(bm25.max()), 1e-9)
        each = ["cos_own", "cos_ctx", "role_user", "fact", "speaker_named", "coverage_idf", "asks", "change"]
        f = [*row["query"], cos[iv] - cos[i0], bm25[iv] / top_bm25, bm25[i0] / top_bm25, np.log1p(bm25.max())]
        f += [v[iv, C[n]] for n in each] + [v[i0, C[n]] for n in each]
        out.append((np.array(f, dtype=np.float64), list(row["dias"][iv]), bool(set(row["dias"][iv]) & ev),
                    bool(set(old[0]) & ev)))
    return out


def router_fit(sets: list[dict[str, Any]]) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    X, y, w = [], [], []
    for d in sets:
        useful = [r for r in d["router"] if r is not None and r[2] != r[3]]
        for f, _, dense_right, _ in useful:
            X.append(f)
            y.append(int(dense_right))
            w.append(1.0 / len(useful))
    model = HistGradientBoostingClassifier(max_iter=100, learning_rate=0.05, max_leaf_nodes=7, min_samples_leaf=30,
                                           l2_regularization=1.0, random_state=0)
    return model.fit(np.array(X), np.array(y), sample_weight=np.array(w))


def router_apply(d: dict[str, Any], model: Any, threshold: float) -> list[list[list[str]]]:
    out = []
    for r, old in zip(d["router"], d["old"]):
        if r is not None and model.predict_proba(r[0].reshape(1, -1))[0, 1] > threshold:
            out.append([r[1]] + [x for x in old if list(x) != r[1]])
        else:
            out.append(old)
    return out


THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def router_loso(sets: list[dict[str, Any]]) -> list[str]:
    """The threshold is chosen on the five by their own leave-one-out predictions (nested), then the model
    trained on all five reorders the sixth."""
    lines = []
    for held in sets:
        rest = [d for d in sets if d is not held]
        inner = {d["name"]: router_fit([o for o in rest if o is not d]) for d in rest}
        gain = {t: np.mean([sum(hits(d, router_apply(d, inner[d["name"]], t))) - sum(hits(d, d["old"])) for d in rest])
                for t in THRESHOLDS}
        t, best = max(gain.items(), key=lambda kv: kv[1])
        chosen = "off" if best <= 0 else f"threshold {t}"
        mine = hits(held, held["old"] if best <= 0 else router_apply(held, router_fit(rest), t))
        lines.append(row_md(held, chosen, mine))
    return lines


# -- the LOSO chooser over a grid -----------------------------------------------------------------------
def row_md(held: dict[str, Any], chosen: str, mine: tuple[float, float]) -> str:
    base = hits(held, held["old"])
    loses = mine[0] < base[0] - 1e-9 or mine[1] < base[1] - 1e-9
    return (f"| {held['name']} | {chosen} | {base[0]:.3f} / {base[1]:.3f} | {mine[0]:.3f} / {mine[1]:.3f} "
            f"| {'loses' if loses else 'ok'} |")


def grid_loso(sets: list[dict[str, Any]], rule: Any, grid: list[dict[str, Any]]) -> list[str]:
    results = {(i, d["name"]): hits(d, rule(d, cfg)) for i, cfg in enumerate(grid) for d in sets}
    lines = []
    for held in sets:
        rest = [d for d in sets if d is not held]
        gains = [np.mean([sum(results[(i, d["name"])]) - sum(hits(d, d["old"])) for d in rest])
                 for i in range(len(grid))]
        best = int(np.argmax(gains))
        if gains[best] <= 0:
            lines.append(row_md(held, "off", hits(held, held["old"])))
        else:
            lines.append(row_md(held, ", ".join(f"{k}={v}" for k, v in grid[best].items()),
                                results[(best, held["name"])]))
    every = ["", "| configuration | " + " | ".join(d["name"] for d in sets) + " |",
             "|---|" + "---|" * len(sets)]
    for i, cfg in enumerate(grid):
        cells = []
        for d in sets:
            a, b = results[(i, d["name"])], hits(d, d["old"])
            cells.append(f"{a[0] - b[0]:+.3f} / {a[1] - b[1]:+.3f}")
        every.append("| " + ", ".join(f"{k}={v}" for k, v in cfg.items()) + " | " + " | ".join(cells) + " |")
    return lines + every


def main(argv: list[str]) -> int:
    cache = Path(argv[0])
    sets = [load(cache, name) for name in SETS]
    for d in sets:
        d["router"] = router_rows(d)
    head = ["| held-out set | chosen on the other five | default hit@1 / hit@10 | chosen | verdict |",
            "|---|---|---|---|---|"]
    experiments = [
        ("answer", lambda: grid_loso(sets, answer, [{"depth": k, "recommend_only": g}
                                                     for g in (False, True) for k in (2, 3, 5)])),
        ("own_cosine", lambda: grid_loso(sets, own_cosine, [{"depth": k, "margin": m}
                                                             for k in (2, 3, 5) for m in (0.0, 0.03, 0.05)])),
        ("router", lambda: router_loso(sets)),
    ]
    for name, run in experiments:
        print(f"\n### {name}\n")
        print("\n".join(head + run()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
