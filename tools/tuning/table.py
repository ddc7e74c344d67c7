"""Markdown rows for docs/retrieval.md: the kernel's own ``find`` on both dev sets, one row per configuration.

    python tools/tuning/table.py /tmp/tune/assistant.db /tmp/tune/locomo.db [fourth-b]

Both files are made by ``harness.py ingest`` (main's benchmark ingest: session API, speaker, date).
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness

CONFIGS = {
    "default": {},
    "no latest first": {"latest_first": False},
    "no first-person boost": {"self_boost": 1.0},
    "fixed vector weight 0.5 (no unseen-word shift)": {"unseen_vector_shift": 0.0},
    "context cosine 0.75 (previous default)": {"context_vector_weight": 0.75},
    "no missed words (the defaults before the third round)": {"missed_words": False},
    "no reply read with its question": {"reply_question_cosine": 0.0},
    "no self boost for replies to the user's questions": {"self_boost_replies": False},
    "no dense quota": {"dense_quota": 0},
    "third-round defaults (the three steps of round 4b off)": {"reply_question_cosine": 0.0,
                                                               "self_boost_replies": False, "dense_quota": 0},
    "first-round defaults (all eight off)": {"latest_first": False, "self_boost": 1.0, "unseen_vector_shift": 0.0,
                                             "context_vector_weight": 0.75, "missed_words": False,
                                             "reply_question_cosine": 0.0, "self_boost_replies": False,
                                             "dense_quota": 0},
}
# "Fourth round (b): paraphrase": the steps adopted and the dense quota variants tried
FOURTH_B = {
    "default": {},
    "third-round defaults": {"reply_question_cosine": 0.0, "self_boost_replies": False, "dense_quota": 0},
    "+ reply read with its question": {"self_boost_replies": False, "dense_quota": 0},
    "+ self boost for replies to the user's questions": {"dense_quota": 0},
    "dense quota for every question, not only first-person ones": {"dense_quota_self_only": False},
    "dense quota 2 (first-person)": {"dense_quota": 2},
    "dense quota 4 (first-person)": {"dense_quota": 4},
}
KINDS = ["knowledge-update", "preference", "aggregation", "multi-session", "temporal", "single-session-user",
         "single-session-assistant", "paraphrase"]


def main(assistant_db: str, locomo_db: str, rows: str = "ablation") -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agentbase_kernel import Kernel

    rows_a, rows_l = [], []
    for name, db, out in (("assistant", assistant_db, rows_a), ("locomo", locomo_db, rows_l)):
        data = harness.load(name)
        with Kernel(db) as kernel:
            for label, change in (FOURTH_B if rows == "fourth-b" else CONFIGS).items():
                table, _ = harness.run(kernel, data, replace(kernel.config.retrieval, **change))
                out.append((label, table))
                print(f"{name} {label}: done", file=sys.stderr)
    print("| assistant dev (hit@1 / hit@10) | all | " + " | ".join(KINDS) + " | superseded first |")
    print("|---|" + "---|" * (len(KINDS) + 2))
    for label, t in rows_a:
        cells = [f"{t[k]['hit@1']:.2f} / {t[k]['hit@10']:.2f}" for k in ["all", *KINDS]]
        print(f"| {label} | " + " | ".join(cells) + f" | {t['knowledge-update']['old-first']:.2f} |")
    print()
    print("| LoCoMo dev (hit@10 / recall@10) | all | hit@1 | 1 multi-hop | 2 temporal | 3 open-domain | 4 single-hop |")
    print("|---|---|---|---|---|---|---|")
    for label, t in rows_l:
        cells = [f"{t[k]['hit@10']:.3f} / {t[k]['recall@10']:.3f}" for k in ("all",)] + [f"{t['all']['hit@1']:.3f}"]
        cells += [f"{t[k]['hit@10']:.3f} / {t[k]['recall@10']:.3f}" for k in ("cat1", "cat2", "cat3", "cat4")]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(*sys.argv[1:4])
