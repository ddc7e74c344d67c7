"""Each hand rule of the default judged leave-one-set-out, from ``ranker_data variants`` rankings.

    python -m benchmarks.judge_rules DIR [--report out.md] [--variants facts_user,...]

For a rule (``no_X``: the default with it switched off) and each held-out set: the choice made on
the other five (keep the rule if its mean hit@1 + hit@10 there is at least that without it) must
not lose on the sixth to the other choice, at hit@1 and at hit@10. The rule passes (kept or removed)
when the choice is the same in every rotation and never loses.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .ranker_data import SETS, VARIANTS, load, questions, score


def hits(folder: Path, name: str, variant: str) -> tuple[float, float] | None:
    path = folder / f"{name}.{variant}.json"
    if not path.exists():
        return None
    ranked = json.loads(path.read_text())["ranked"]
    qs = questions(load(name))
    t = score([(qa | {"category": qa.get("category")}, ev, r) for (_, qa, ev), r in zip(qs, ranked)])["all"]
    return t["hit@1"], t["hit@10"]


def judge(folder: Path, variant: str, sets: list[str]) -> tuple[list[str], str]:
    on = {s: hits(folder, s, "default") for s in sets}
    off = {s: hits(folder, s, variant) for s in sets}
    sets = [s for s in sets if on[s] is not None and off[s] is not None]
    cells, choices, choice_losses, keep_losses, drop_losses = [], set(), 0, 0, 0
    for held in sets:
        rest = [s for s in sets if s != held]
        gain = sum(sum(on[s]) - sum(off[s]) for s in rest) / len(rest)  # type: ignore[arg-type]
        a, b = on[held], off[held]
        assert a is not None and b is not None
        keep_loses = a[0] < b[0] or a[1] < b[1]
        drop_loses = b[0] < a[0] or b[1] < a[1]
        keep_losses += keep_loses
        drop_losses += drop_loses
        chosen = "keep" if gain >= 0 else "drop"
        choices.add(chosen)
        loses = keep_loses if chosen == "keep" else drop_loses
        choice_losses += loses
        cells.append(f"{a[0]:.3f}/{a[1]:.3f} vs {b[0]:.3f}/{b[1]:.3f} ({chosen}{', loses' if loses else ''})")
    if not choice_losses and choices == {"keep"}:
        verdict = "passes: kept"
    elif not choice_losses and choices == {"drop"}:
        verdict = "passes: removed"
    else:
        verdict = (f"does not pass (the five-set choice loses in {choice_losses} of {len(sets)}; keeping the rule "
                   f"loses on {keep_losses} held-out sets, removing it on {drop_losses})")
    return cells, verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir")
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--report")
    parser.add_argument("--variants", help="judge these variants (DIR/<set>.<variant>.json, e.g. an ingest setting's "
                                           "rankings) instead of every retrieval variant of ranker_data.VARIANTS")
    args = parser.parse_args(argv)
    folder = Path(args.dir)
    lines = ["| rule switched off | " + " | ".join(args.sets) + " | verdict |",
             "|---|" + "---|" * len(args.sets) + "---|"]
    variants = args.variants.split(",") if args.variants else [v for v in VARIANTS if v not in ("default", "ranker")]
    for variant in variants:
        cells, verdict = judge(folder, variant, list(args.sets))
        if cells:
            lines.append(f"| {variant} | " + " | ".join(cells) + f" | {verdict} |")
    text = "\n".join(lines)
    print(text)
    if args.report:
        Path(args.report).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
