"""Train the learned second stage and the score calibration on the six development sets, judged leave-one-set-out.

    python -m benchmarks train-ranker --cache DIR            # LOSO tables, then fit on all six, write both files
    python -m benchmarks train-ranker --cache DIR --loso-only --report out.md

``DIR`` holds what ``python -m benchmarks.ranker_data ingest|dump|baselines|kernel DIR`` wrote: each set's
candidates with their signals (``<set>.cands.pkl``), the plain baselines (``<set>.plain.json``) and the
default's rankings and scores (``<set>.old.json``). Two files are written beside ``retrieve/ranker.py``:

- ``ranker.json``: scikit-learn's histogram gradient boosting (log loss; every question weighs the
  same within its set and every set the same; monotone in the BM25, cosine and coverage features)
  as plain arrays of trees, and a Platt scaling fitted on the leave-one-set-out scores of each
  question's best 20, so ``find`` scores with numpy alone and the score is a probability.
- ``calibration.json``: the logistic map from the default's fused score, the hit's place and the
  question's absolute signals (best cosine, best BM25, unseen and lacked word shares) to the
  probability that a hit is relevant, fitted on the default's best 20 per question (each weight's
  sign fixed: a stronger match never scores lower, a lower place never higher).

The report gives, per held-out set, hit@1/hit@10 of the ranker trained on the other five against
the default and the plain baselines, and both reliability tables (predicted vs observed per bin,
each set's predictions from a model fitted without it).
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

HERE = Path(__file__).resolve().parents[1] / "agentbase_kernel" / "retrieve"
WEIGHTS = HERE / "ranker.json"
CALIBRATION = HERE / "calibration.json"
PARAMS: dict[str, Any] = {"max_iter": 300, "learning_rate": 0.05, "max_leaf_nodes": 15, "min_samples_leaf": 40,
                          "l2_regularization": 1.0, "random_state": 0}
# the ranker's score never falls as one of these rises (or, for the leg ranks, falls)
RISING = ("bm25_norm", "bm25_log", "cos_own", "cos_ctx", "cos_own_gap", "cos_ctx_gap", "coverage", "coverage_idf",
          "cos_own_norm", "cos_ctx_norm", "prior")
FALLING = ("fts_rank_log", "vec_rank_log")
HEAD = 20  # calibrations are fitted on each question's best this many (what callers see)
BINS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0001)


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
    foreign: list[dict[str, Any]] = field(default_factory=list)  # questions asked in another conversation

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
    for label, attr in (("old", "old"), ("plain", "plain"), ("foreign", "foreign")):
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


def constraints() -> list[int]:
    from agentbase_kernel.retrieve.features import FEATURES

    return [1 if f in RISING else -1 if f in FALLING else 0 for f in FEATURES]


def fit(sets: list[SetData], params: dict[str, Any] | None = None) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    picked = [d.training_rows() for d in sets]
    X = np.vstack([d.X[i] for d, (i, _) in zip(sets, picked)])
    y = np.concatenate([d.y[i] for d, (i, _) in zip(sets, picked)])
    w = np.concatenate([w / len(sets) for _, w in picked])
    w *= len(w) / w.sum()  # mean weight 1: the trees' minimum hessian and L2 penalty are per row
    model = HistGradientBoostingClassifier(**(params or PARAMS), monotonic_cst=constraints())
    model.fit(X, y, sample_weight=w)
    return model


def loso(sets: list[SetData], params: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
    """Each set's raw scores from a model trained on the other five."""
    return {held.name: np.asarray(fit([d for d in sets if d is not held], params).decision_function(held.X))
            for held in sets}


def head(data: SetData, raw: np.ndarray, k: int = HEAD) -> tuple[np.ndarray, np.ndarray]:
    """The raw scores and labels of each question's best ``k`` by ``raw``."""
    xs, ys = [], []
    for a, b in data.bounds:
        order = np.argsort(-raw[a:b], kind="stable")[:k]
        xs.append(raw[a:b][order])
        ys.append(data.y[a:b][order])
    return np.concatenate(xs), np.concatenate(ys)


def platt(raw: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``sigmoid(a * raw + b)``: the observed rate of relevant hits, fitted on held-out scores."""
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e6, max_iter=1000)
    lr.fit(raw.reshape(-1, 1), y)
    return float(lr.coef_[0, 0]), float(lr.intercept_[0])


def sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-z))
    return out


# -- the default's calibration ----------------------------------------------------------------------
def calibration_rows(data: SetData, k: int = HEAD) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(inputs, labels, question weights) of the default's best ``k`` per question (``CALIBRATION_INPUTS``)."""
    from agentbase_kernel.retrieve.signals import CANDIDATE_SIGNALS, QUERY_SIGNALS

    cos, bm25 = CANDIDATE_SIGNALS.index("cos_own"), CANDIDATE_SIGNALS.index("bm25")
    unseen, lacked = QUERY_SIGNALS.index("unseen_share"), QUERY_SIGNALS.index("lacked_share")
    xs, ys, ws = [], [], []
    for row, ranked, scores in zip(data.rows, data.old["ranked"], data.old["scores"]):
        ev = set(row["evidence"])
        values, query = row["values"], row["query"]
        top_cos = float(values[:, cos].max()) if len(values) else 0.0
        top_bm25 = float(values[:, bm25].max()) if len(values) else 0.0
        n = min(k, len(ranked))
        for rank, (ids, fused) in enumerate(zip(ranked[:n], scores[:n])):
            xs.append([fused, top_cos, np.log1p(max(top_bm25, 0.0)), query[unseen], query[lacked], np.log1p(rank)])
            ys.append(bool(ev & set(ids)))
            ws.append(1.0 / (n * len(data.rows)))
    return np.array(xs, dtype=np.float64), np.array(ys, dtype=np.int8), np.array(ws)


# the sign each calibration input's weight may take: a stronger match never lowers the score
SIGNS = (1, 1, 1, -1, -1, -1)  # fused, top cosine, top BM25 (log), unseen share, lacked share, rank (log)


def foreign_rows(data: SetData, k: int = HEAD) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same inputs for questions asked in another conversation's scope: every hit is a miss."""
    xs, ws = [], []
    for row in data.foreign:
        n = min(k, len(row["scores"]))
        for rank, fused in enumerate(row["scores"][:n]):
            xs.append([fused, row["top_cosine"], np.log1p(max(row["top_bm25"], 0.0)), row["unseen_share"],
                       row["lacked_share"], np.log1p(rank)])
            ws.append(1.0 / (n * len(data.foreign)))
    return np.array(xs, dtype=np.float64).reshape(-1, len(SIGNS)), np.zeros(len(xs), dtype=np.int8), np.array(ws)


# the share of all training weight on questions with no answer in the scope (one set's worth in seven)
FOREIGN_SHARE = 1 / 7


def fit_calibration(sets: list[SetData], l2: float = 1e-3) -> tuple[np.ndarray, float]:
    """Weighted logistic regression with each weight's sign fixed by ``SIGNS`` (L-BFGS-B bounds).

    Each set's answerable questions weigh the same; the questions asked in another conversation
    (``ranker_data foreign``), when there are any, weigh ``FOREIGN_SHARE`` of the whole.
    """
    from scipy.optimize import minimize

    parts = [calibration_rows(d) for d in sets]
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts]).astype(np.float64)
    w = np.concatenate([p[2] / len(sets) for p in parts])
    w /= w.sum()
    negatives = [foreign_rows(d) for d in sets if d.foreign]
    if negatives:
        X = np.vstack([X, *(n[0] for n in negatives)])
        y = np.concatenate([y, *(n[1] for n in negatives)])
        nw = np.concatenate([n[2] / len(negatives) for n in negatives])
        w = np.concatenate([w * (1 - FOREIGN_SHARE), nw / nw.sum() * FOREIGN_SHARE])
    Xb = np.hstack([X, np.ones((len(X), 1))])

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        z = Xb @ theta
        p = sigmoid(z)
        eps = 1e-12
        value = -float(w @ (y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))) + l2 * float(theta[:-1] @ theta[:-1])
        grad = Xb.T @ (w * (p - y))
        grad[:-1] += 2 * l2 * theta[:-1]
        return value, grad

    bounds = [(0.0, None) if sign > 0 else (None, 0.0) for sign in SIGNS] + [(None, None)]
    bounds[0] = (1e-3, None)  # the fused score's weight stays positive: the order within a question is kept
    start = np.zeros(Xb.shape[1])
    start[0] = 1.0
    theta = minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 2000}).x
    return theta[:-1], float(theta[-1])


def reliability(predicted: np.ndarray, observed: np.ndarray) -> list[tuple[str, int, float, float]]:
    """(bin, hits in it, mean predicted, observed rate) per score bin."""
    out = []
    for lo, hi in zip(BINS, BINS[1:]):
        inside = (predicted >= lo) & (predicted < hi)
        if inside.any():
            out.append((f"{lo:.2f}-{min(hi, 1.0):.2f}", int(inside.sum()), float(predicted[inside].mean()),
                        float(observed[inside].mean())))
    return out


def reliability_md(title: str, rows: list[tuple[str, int, float, float]]) -> list[str]:
    lines = [f"**{title}**", "", "| score bin | hits | mean score | observed hit rate |", "|---|---:|---:|---:|"]
    lines += [f"| {b} | {n} | {p:.3f} | {o:.3f} |" for b, n, p, o in rows]
    return [*lines, ""]


def _hits(t: dict[str, dict[str, float]], key: str = "all") -> tuple[float, float]:
    return t[key]["hit@1"], t[key]["hit@10"]


def fmt(t: dict[str, dict[str, float]]) -> str:
    """hit@1 / hit@10."""
    return "{:.3f} / {:.3f}".format(*_hits(t))


def export(model: Any, a: float, b: float, features: list[str], path: Path, meta: dict[str, Any]) -> None:
    """The trees as plain arrays (node feature, threshold, children, leaf value) for ``retrieve/ranker.py``."""
    trees = []
    for (predictor,) in model._predictors:
        nodes = predictor.nodes
        trees.append({
            "feature": nodes["feature_idx"].astype(int).tolist(),
            "threshold": [round(float(x), 8) for x in nodes["num_threshold"]],
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
    parser.add_argument("--loso-only", action="store_true", help="tables only; write no weights")
    parser.add_argument("--calibration-only", action="store_true", help="write calibration.json, not ranker.json")
    parser.add_argument("--report", help="also write the markdown tables to this file")
    parser.add_argument("--out", default=str(WEIGHTS))
    parser.add_argument("--calibration-out", default=str(CALIBRATION))
    args = parser.parse_args(argv)
    from agentbase_kernel.retrieve.calibration import CALIBRATION_INPUTS
    from agentbase_kernel.retrieve.features import FEATURES

    cache = Path(args.cache)
    t0 = time.perf_counter()
    sets = [load_set(cache, name, args.pool) for name in args.sets]
    print(f"loaded {sum(len(d.y) for d in sets):,} candidates of {sum(len(d.bounds) for d in sets)} questions "
          f"in {time.perf_counter() - t0:.0f} s", flush=True)
    # the held-out scores are kept in DIR and reused while the features, parameters and sets are the same
    key = json.dumps([list(FEATURES), PARAMS, constraints(), args.pool, [d.name for d in sets]])
    kept = cache / "ranker_loso.pkl"
    stored = pickle.loads(kept.read_bytes()) if kept.exists() else {}
    if stored.get("key") == key:
        held = stored["raw"]
    else:
        held = loso(sets)
        kept.write_bytes(pickle.dumps({"key": key, "raw": held}))
    print(f"leave-one-set-out scores after {time.perf_counter() - t0:.0f} s", flush=True)
    md = ["| held-out set | questions | default | ranker (trained on the other five) | plain dense | plain BM25 "
          "| passes |", "|---|---:|---|---|---|---|---|"]
    passed = 0
    for d in sets:
        mine = table(d, rankings(d, held[d.name]))
        base = table(d, d.old["ranked"]) if d.old else None
        ok = base is not None and all(x >= y for x, y in zip(_hits(mine), _hits(base)))
        passed += ok
        cells = [str(len(d.bounds)), fmt(base) if base else "—", fmt(mine)]
        cells += [fmt(table(d, d.plain[k])) if d.plain else "—" for k in ("dense", "bm25")]
        md.append(f"| {d.name} | " + " | ".join(cells) + f" | {'yes' if ok else 'no'} |")
    md += ["", f"hit@1 / hit@10; passes in {passed} of {len(sets)} rotations.", ""]
    md += ["| set | system | hit@1 | hit@5 | hit@10 | recall@10 |", "|---|---|---:|---:|---:|---:|"]
    for d in sets:
        systems = [("default", d.old.get("ranked")), ("ranker, held out", rankings(d, held[d.name])),
                   ("plain dense", d.plain.get("dense")), ("plain BM25", d.plain.get("bm25"))]
        for label, ranked in systems:
            if ranked is not None:
                t = table(d, ranked)["all"]
                md.append(f"| {d.name} | {label} | {t['hit@1']:.3f} | {t['hit@5']:.3f} | {t['hit@10']:.3f} "
                          f"| {t['recall@10']:.3f} |")
    md.append("")

    # the ranker's Platt scaling: per rotation from the other five's held-out heads (for the table), then all
    heads = {d.name: head(d, held[d.name]) for d in sets}
    pred, seen = [], []
    for d in sets:
        others = [heads[o.name] for o in sets if o is not d]
        a, b = platt(np.concatenate([h[0] for h in others]), np.concatenate([h[1] for h in others]))
        top10 = head(d, held[d.name], 10)
        pred.append(sigmoid(a * top10[0] + b))
        seen.append(top10[1])
    md += reliability_md("Ranker (leave-one-set-out), each question's best 10",
                         reliability(np.concatenate(pred), np.concatenate(seen)))
    a, b = platt(np.concatenate([h[0] for h in heads.values()]), np.concatenate([h[1] for h in heads.values()]))

    # the default's calibration: leave-one-set-out for the table, then fitted on all six
    with_old = [d for d in sets if d.old]
    pred, seen = [], []
    for d in with_old:
        w, bias = fit_calibration([o for o in with_old if o is not d])
        X, y, _ = calibration_rows(d, 10)
        pred.append(sigmoid(X @ w + bias))
        seen.append(y)
    md += reliability_md("Default ranking, calibrated score (leave-one-set-out), each question's best 10",
                         reliability(np.concatenate(pred), np.concatenate(seen)))
    tops = []
    for d in with_old:
        if d.foreign:
            w, bias = fit_calibration([o for o in with_old if o is not d])
            answered = calibration_rows(d, 1)[0]
            unanswered = foreign_rows(d, 1)[0]
            tops.append(f"| {d.name} | {float(sigmoid(answered @ w + bias).mean()):.3f} "
                        f"| {float(sigmoid(unanswered @ w + bias).mean()):.3f} |")
    if tops:
        md += ["Mean calibrated score of the top hit (leave-one-set-out): the set's own questions vs the same "
               "kind of questions asked in another conversation (no answer in the scope)", "",
               "| set | own questions | asked in another conversation |", "|---|---:|---:|", *tops, ""]
    cal_w, cal_b = fit_calibration(with_old)
    md.append(f"Calibration weights ({', '.join(CALIBRATION_INPUTS)}): "
              + ", ".join(f"{x:.3f}" for x in cal_w) + f"; bias {cal_b:.3f}. Ranker Platt: a={a:.4f}, b={b:.4f}.")
    text = "\n".join(md)
    print(text)
    if args.report:
        Path(args.report).write_text(text + "\n")
    if args.loso_only:
        return 0
    stamp = {"sets": [d.name for d in sets], "questions": sum(len(d.bounds) for d in sets)}
    Path(args.calibration_out).write_text(json.dumps({
        "inputs": list(CALIBRATION_INPUTS), "weights": [round(float(x), 6) for x in cal_w], "bias": round(cal_b, 6),
        "meta": stamp}, indent=1) + "\n")
    if args.calibration_only:
        print(f"wrote {args.calibration_out}")
        return 0
    model = fit(sets)
    export(model, a, b, list(FEATURES), Path(args.out), stamp | {"params": PARAMS, "passes_loso": passed == len(sets)})
    print(f"wrote {args.calibration_out} and {args.out} ({Path(args.out).stat().st_size / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
