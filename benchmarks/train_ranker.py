"""Train the learned second stage on the six development sets, judge it leave-one-set-out, ship its weights.

    python -m benchmarks train-ranker --cache DIR            # LOSO table, then train on all six, write weights
    python -m benchmarks train-ranker --cache DIR --loso-only

``DIR`` holds what ``python -m benchmarks.ranker_data ingest|dump|baselines|kernel DIR`` wrote: each set's
candidates with their signals (``<set>.cands.pkl``), the plain baselines (``<set>.plain.json``) and the
previous default's rankings (``<set>.old.json``). The model is scikit-learn's histogram gradient
boosting (log loss: its output is a probability); every question weighs the same within its set and
every set the same in all. The shipped file (``agentbase_kernel/retrieve/ranker.json``) holds the trees
as plain arrays and a Platt scaling fitted on the leave-one-set-out predictions, so ``find`` scores
with numpy alone, and a score is the probability that a memory is what the question asks for.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .ranker_data import KS, SETS, score

WEIGHTS = Path(__file__).resolve().parents[1] / "agentbase_kernel" / "retrieve" / "ranker.json"
PARAMS: dict[str, Any] = {"max_iter": 300, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 40,
                          "l2_regularization": 1.0, "random_state": 0}


@dataclass
class SetData:
    """One set's candidate features, labels and question boundaries."""

    name: str
    rows: list[dict[str, Any]]
    X: np.ndarray
    y: np.ndarray
    bounds: list[tuple[int, int]]  # each question's slice of X
    old: dict[str, Any] = field(default_factory=dict)
    plain: dict[str, Any] = field(default_factory=dict)

    def training_rows(self, hard: int = 40, easy: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Rows to train on and their weights: every relevant candidate, and per question the ``hard``
        negatives either leg ranks best plus ``easy`` others at random. Every question weighs
        1 / (questions in the set), half on its relevant candidates and half on the rest."""
        from agentbase_kernel.retrieve.features import FEATURES

        fts, vec = FEATURES.index("fts_rank_log"), FEATURES.index("vec_rank_log")
        rng = np.random.default_rng(seed)
        idx, weights = [], []
        per_question = 1.0 / len(self.bounds)
        for a, b in self.bounds:
            y = self.y[a:b]
            pos = np.flatnonzero(y == 1)
            neg = np.flatnonzero(y == 0)
            best = np.minimum(self.X[a:b, fts], self.X[a:b, vec])[neg]
            order = neg[np.argsort(best, kind="stable")]
            chosen = order[:hard]
            rest = order[hard:]
            if len(rest):
                chosen = np.concatenate([chosen, rng.choice(rest, size=min(easy, len(rest)), replace=False)])
            for rows, share in ((pos, 0.5), (chosen, 0.5)):
                if len(rows):
                    idx.append(a + rows)
                    weights.append(np.full(len(rows), share * per_question / len(rows)))
        return np.concatenate(idx), np.concatenate(weights)


def load_set(cache: Path, name: str, pool: int | None = None) -> SetData:
    from agentbase_kernel.retrieve.features import matrix
    from agentbase_kernel.retrieve.signals import CANDIDATE_SIGNALS, Signals

    rows = pickle.loads((cache / f"{name}.cands.pkl").read_bytes())
    fts_col, vec_col = CANDIDATE_SIGNALS.index("fts_rank"), CANDIDATE_SIGNALS.index("vec_rank")
    blocks, labels, bounds = [], [], []
    at = 0
    kept_rows = []
    for row in rows:
        values = row["values"].astype(np.float64)
        keep = np.ones(len(values), dtype=bool)
        if pool is not None:
            f, v = values[:, fts_col], values[:, vec_col]
            keep = ((f >= 0) & (f < pool)) | ((v >= 0) & (v < pool))
        rids = [rid for rid, k in zip(row["rids"], keep) if k]
        dias = [d for d, k in zip(row["dias"], keep) if k]
        nb = row.get("neighbours")
        if nb is not None and pool is not None:  # rows renumbered after the cut
            new_index = np.cumsum(keep) - 1
            nb = np.where(nb >= 0, np.where(keep[np.maximum(nb, 0)], new_index[np.maximum(nb, 0)], -1), -1)[keep]
        X = matrix(Signals(rids, values[keep], row["query"], nb))
        ev = set(row["evidence"])
        labels.append(np.array([bool(ev & set(d)) for d in dias], dtype=np.int8))
        blocks.append(X)
        bounds.append((at, at + len(X)))
        at += len(X)
        kept_rows.append(row | {"rids": rids, "dias": dias, "neighbours": nb})
    data = SetData(name, kept_rows, np.vstack(blocks), np.concatenate(labels), bounds)
    for label, attr in (("old", "old"), ("plain", "plain")):
        path = cache / f"{name}.{label}.json"
        if path.exists():
            setattr(data, attr, json.loads(path.read_text()))
    return data


def rankings(data: SetData, scores: np.ndarray, k: int = max(KS)) -> list[list[list[str]]]:
    """Each question's turns by descending score (ties by the order the candidates were read)."""
    out = []
    for (a, b), row in zip(data.bounds, data.rows):
        order = np.argsort(-scores[a:b], kind="stable")[:k]
        out.append([row["dias"][i] for i in order])
    return out


def table(data: SetData, ranked: list[list[list[str]]]) -> dict[str, dict[str, float]]:
    return score([(row, set(row["evidence"]), r) for row, r in zip(data.rows, ranked)])


def fit(sets: list[SetData], features: list[int] | None = None, params: dict[str, Any] | None = None) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    picked = [d.training_rows() for d in sets]
    X = np.vstack([d.X[i] for d, (i, _) in zip(sets, picked)])
    if features is not None:
        X = X[:, features]
    y = np.concatenate([d.y[i] for d, (i, _) in zip(sets, picked)])
    w = np.concatenate([w / len(sets) for _, w in picked])
    w *= len(w) / w.sum()  # mean weight 1: the trees' minimum hessian and L2 penalty are per row
    model = HistGradientBoostingClassifier(**(params or PARAMS))
    model.fit(X, y, sample_weight=w)
    return model


def raw_scores(model: Any, X: np.ndarray, features: list[int] | None = None) -> np.ndarray:
    return np.asarray(model.decision_function(X if features is None else X[:, features]), dtype=np.float64)


def loso(sets: list[SetData], features: list[int] | None = None,
         params: dict[str, Any] | None = None) -> dict[str, tuple[dict[str, dict[str, float]], np.ndarray]]:
    """Each set scored by a model trained on the other five: its table and its raw scores."""
    out = {}
    for held in sets:
        model = fit([d for d in sets if d is not held], features, params)
        raw = raw_scores(model, held.X, features)
        out[held.name] = (table(held, rankings(held, raw)), raw)
    return out


def _hits(t: dict[str, dict[str, float]], key: str = "all") -> tuple[float, float]:
    return t[key]["hit@1"], t[key]["hit@10"]


def fmt(t: dict[str, dict[str, float]]) -> str:
    """hit@1 / hit@10."""
    return "{:.3f} / {:.3f}".format(*_hits(t))


def platt(raw: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``sigmoid(a * raw + b)``: the observed rate of relevant candidates, fitted on held-out scores."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6, max_iter=1000)
    lr.fit(raw.reshape(-1, 1), y)
    return float(lr.coef_[0, 0]), float(lr.intercept_[0])


def export(model: Any, a: float, b: float, features: list[str], path: Path, meta: dict[str, Any]) -> None:
    """The trees as plain arrays (node feature, threshold, children, leaf value) for ``retrieve/ranker.py``."""
    trees = []
    for (predictor,) in model._predictors:
        nodes = predictor.nodes
        trees.append({
            "feature": nodes["feature_idx"].astype(int).tolist(),
            "threshold": [float(x) for x in nodes["num_threshold"]],
            "left": nodes["left"].astype(int).tolist(), "right": nodes["right"].astype(int).tolist(),
            "leaf": nodes["is_leaf"].astype(int).tolist(), "missing_left": nodes["missing_go_to_left"].astype(int).tolist(),
            "value": [round(float(x), 8) for x in nodes["value"]],
        })
    baseline = float(np.ravel(model._baseline_prediction)[0])
    path.write_text(json.dumps({"format": 1, "features": features, "baseline": baseline, "trees": trees,
                                "platt": [a, b], "meta": meta}, separators=(",", ":")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks train-ranker", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", required=True, help="the folder benchmarks.ranker_data wrote")
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--pool", type=int, default=None, help="keep candidates within this rank of either leg")
    parser.add_argument("--loso-only", action="store_true")
    parser.add_argument("--out", default=str(WEIGHTS))
    args = parser.parse_args(argv)
    from agentbase_kernel.retrieve.features import FEATURES

    cache = Path(args.cache)
    t0 = time.perf_counter()
    sets = [load_set(cache, name, args.pool) for name in args.sets]
    print(f"loaded {sum(len(d.y) for d in sets):,} candidates of {sum(len(d.bounds) for d in sets)} questions "
          f"in {time.perf_counter() - t0:.0f} s", flush=True)
    held = loso(sets)
    print("\n| held-out set | previous default | ranker (trained on the other five) | plain dense | plain BM25 |")
    print("|---|---|---|---|---|")
    for d in sets:
        cells = [fmt(table(d, d.old["ranked"])) if d.old else "—", fmt(held[d.name][0])]
        cells += [fmt(table(d, d.plain[k])) if d.plain else "—" for k in ("dense", "bm25")]
        print(f"| {d.name} | " + " | ".join(cells) + " |")
    raw = np.concatenate([held[d.name][1] for d in sets])
    y = np.concatenate([d.y for d in sets])
    a, b = platt(raw, y)
    print(f"platt a={a:.4f} b={b:.4f}")
    if args.loso_only:
        return 0
    model = fit(sets)
    export(model, a, b, list(FEATURES), Path(args.out),
           {"sets": [d.name for d in sets], "questions": sum(len(d.bounds) for d in sets), "params": PARAMS,
            "trained": time.strftime("%Y-%m-%d")})
    print(f"wrote {args.out} ({Path(args.out).stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
