"""Render ``RESULTS.md`` and the PNG charts from the JSON the runs wrote (``results/*.json``).

``python -m benchmarks report`` re-renders without running anything, so a later 1M scaling run
adds its row to the same page.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .locomo import KS

TARGETS = {"hit@10": 0.85, "recall@10": 0.75, "ingest_ratio": 10.0, "p50_100k_ms": 20.0}


def _load(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    if not a or not b:
        return "–"
    return f"{a / b:.2f}×"


def _slope(x0: float, y0: float, x1: float, y1: float) -> float:
    return math.log(y1 / y0) / math.log(x1 / x0) if y0 > 0 and y1 > 0 else float("nan")


def quality_section(run: dict[str, Any]) -> list[str]:
    systems = run["systems"]
    out = ["## Quality: LoCoMo dev retrieval", "",
           f"Data: `{run['data']}` ({run['conversations']} conversations, {run['turns']} turns, one memory per turn "
           "with the photo caption, scoped per conversation). Questions of categories 1-4, scored as "
           "`shared/data/README.md` defines (hit@k: an evidence turn is in the top k; recall@k: the share of the "
           f"evidence turns in the top k). Malformed or dangling evidence ids: {run['malformed_evidence']}. "
           "All vectors here come from the real all-MiniLM-L6-v2.", "",
           "| system | " + " | ".join(f"hit@{k}" for k in KS) + " | " + " | ".join(f"recall@{k}" for k in KS)
           + " | n |", "|---|" + "---:|" * (2 * len(KS) + 1)]
    for s in systems:
        a = s["rows"][0]["scores"]["all"]
        out.append(f"| {s['label']} | " + " | ".join(f"{a[f'hit@{k}']:.3f}" for k in KS) + " | "
                   + " | ".join(f"{a[f'recall@{k}']:.3f}" for k in KS) + f" | {a['n']} |")
    cats = sorted({c for s in systems for c in s["rows"][0]["scores"] if c != "all"}, key=str)
    out += ["", "Per category (LoCoMo's numbering; the names are disputed: 1 multi-hop, 2 temporal, "
            "3 open-domain, 4 single-hop):", ""]
    for cat in cats:
        n = next(s["rows"][0]["scores"][cat]["n"] for s in systems if cat in s["rows"][0]["scores"])
        out += [f"Category {cat} (n = {n})", "",
                "| system | " + " | ".join(f"hit@{k}" for k in KS) + " | " + " | ".join(f"recall@{k}" for k in KS)
                + " |", "|---|" + "---:|" * (2 * len(KS))]
        for s in systems:
            c = s["rows"][0]["scores"].get(cat)
            if c:
                out.append(f"| {s['label']} | " + " | ".join(f"{c[f'hit@{k}']:.3f}" for k in KS) + " | "
                           + " | ".join(f"{c[f'recall@{k}']:.3f}" for k in KS) + " |")
        out.append("")
    out += ["![LoCoMo quality](quality.png)", ""]
    return out


def speed_section(run: dict[str, Any]) -> list[str]:
    systems = run["systems"]
    mem0 = next((s for s in systems if s["system"] == "mem0"), None)
    out = ["## Speed and memory: same run, same machine", "",
           "Each system ran in its own process (peak RSS is that process's, model included). Ingest rate is "
           "turns stored per second of ingest, model loading excluded; search latency is per question, "
           "top 20, one conversation's scope; bytes on disk are measured after ingest, before any search. "
           "Ratios are to Mem0 OSS in this run handed the same MiniLM runtime as agentbase (ingest: higher is "
           "better; the rest: lower is better); the second ingest ratio is to Mem0 with its own embedder "
           "(its huggingface provider on torch, the same MiniLM weights), where that row ran.", "",
           "| system | ingest path | turns/s | × Mem0 | × Mem0 own embedder | search p50 ms | p95 ms | p50 × Mem0 "
           "| peak RSS MB | × Mem0 | bytes / memory | × Mem0 | rows stored |", "|---|---|" + "---:|" * 11]
    own = next((s for s in systems if s["system"] == "mem0-own-embedder"), {})
    for s in systems:
        m = mem0 or {}
        out.append(
            f"| {s['label']} | {s['speed_label']} | {s['ingest_per_s']:,.1f} | {_ratio(s['ingest_per_s'], m.get('ingest_per_s'))} "
            f"| {_ratio(s['ingest_per_s'], own.get('ingest_per_s'))} "
            f"| {s['search_p50_ms']:.1f} | {s['search_p95_ms']:.1f} | {_ratio(s['search_p50_ms'], m.get('search_p50_ms'))} "
            f"| {s['peak_rss'] / 1e6:,.0f} | {_ratio(s['peak_rss'], m.get('peak_rss'))} "
            f"| {s['bytes_per_memory']:,.0f} | {_ratio(s['bytes_per_memory'], m.get('bytes_per_memory'))} "
            f"| {s['stored_rows']:,} |")
    out += ["", "Engines (and the agentbase code each process ran):", ""]
    out += [f"- {s['label']}: {s['engine']}" + (f"; code {s['code']}" if s.get("code") else "") for s in systems]
    out += ["", "![Speed](speed.png)", ""]
    return out


def scale_section(scale: dict[str, Any]) -> list[str]:
    rows = sorted(scale["sizes"].values(), key=lambda r: r["size"])
    legs = list(rows[0]["search"])
    out = ["## Scaling curve (synthetic memories)", "",
           "Seeded synthetic memories (`benchmarks/synthetic.py`: Zipf-distributed vocabulary that grows with the "
           "corpus, 50 people, 30 cities, 20 organisations, dates in four written forms), all in **one** user scope "
           "so every search sees every memory, written with `Kernel.add_memories` in batches "
           f"(one transaction per batch of {rows[0]['batch']:,}). Vectors for this curve only come from a fast "
           "deterministic 384-dim projection embedder (MiniLM at 1M on 2 cores would take hours) and NER is the "
           "regex stage: the curve measures storage and search, not the model. "
           "Command: `python -m benchmarks scale --sizes 10000,100000` (1M: `--sizes 1000000`).", "",
           "| memories | ingest /s | file MB | bytes / memory | peak RSS MB | " + " | ".join(
               f"{leg} p50 / p95 ms" for leg in legs) + " |", "|" + "---:|" * (5 + len(legs))]
    codes: list[str] = []
    for r in rows:
        if r.get("code"):
            codes.append(f"{r['size']:,}: {r['code']}")
        out.append(f"| {r['size']:,} | {r['ingest_per_s']:,.0f} | {_mb(r['bytes'])} | {r['bytes_per_memory']:,.0f} "
                   f"| {r['peak_rss'] / 1e6:,.0f} | " + " | ".join(
                       f"{r['search'][leg]['p50_ms']:.1f} / {r['search'][leg]['p95_ms']:.1f}" for leg in legs) + " |")
    if len(rows) > 1:
        out += ["", "Growth exponents (log-log slope of p50 between consecutive sizes; 1.0 = linear in the number "
                "of memories):", ""]
        for leg in legs:
            parts = []
            for a, b in zip(rows, rows[1:]):
                k = _slope(a["size"], a["search"][leg]["p50_ms"], b["size"], b["search"][leg]["p50_ms"])
                parts.append(f"{a['size']:,}→{b['size']:,}: {k:.2f}")
            out.append(f"- {leg}: " + ", ".join(parts))
        parts = [f"{a['size']:,}→{b['size']:,}: {_slope(a['size'], a['bytes'], b['size'], b['bytes']):.2f}"
                 for a, b in zip(rows, rows[1:])]
        out.append("- file size: " + ", ".join(parts))
    kept = [r for r in rows if "exact_top60_kept" in r.get("vector_index", {})]
    if kept:
        out += ["", "How much of the exact vector ranking the index's answer keeps (above "
                f"{kept[0]['vector_index']['shortlist_above']:,} memories it ranks a 1-bit shortlist exactly; "
                "below, it is exact): " + "; ".join(
                    f"{r['size']:,}: top 10 {r['vector_index']['exact_top10_kept']:.3f}, top 60 "
                    f"{r['vector_index']['exact_top60_kept']:.3f}" for r in kept) + "."]
    out += ["", "Queries per size: " + ", ".join(f"{r['size']:,}: {r['queries']}" for r in rows)
            + (". agentbase code per size: " + "; ".join(codes) if codes else "") + "."]
    missing = [s for s in (10_000, 100_000, 1_000_000) if str(s) not in scale["sizes"]]
    if missing:
        out += ["", "Not measured in this page's runs: " + ", ".join(f"{s:,}" for s in missing) + " memories."]
    out += ["", "![Scaling](scale.png)", ""]
    return out


def targets_section(run: dict[str, Any] | None, scale: dict[str, Any] | None) -> list[str]:
    out = ["## Targets", "", "| target | measured | met? |", "|---|---|---|"]
    if run:
        systems = {s["system"]: s for s in run["systems"]}
        ab = systems.get("agentbase")
        mem0 = systems.get("mem0")
        if ab:
            a = ab["rows"][0]["scores"]["all"]
            for metric in ("hit@10", "recall@10"):
                gap = a[metric] - TARGETS[metric]
                out.append(f"| LoCoMo dev {metric} ≥ {TARGETS[metric]} | {a[metric]:.3f} | "
                           + ("yes" if gap >= 0 else f"no, short by {-gap:.3f}") + " |")
        own = systems.get("mem0-own-embedder")
        if ab and mem0:
            r = ab["ingest_per_s"] / mem0["ingest_per_s"]
            also = (f"; {ab['ingest_per_s'] / own['ingest_per_s']:.1f}× Mem0 with its own embedder "
                    f"({own['ingest_per_s']:,.1f} turns/s)" if own else "")
            out.append(f"| ingest with NER + embeddings ≥ 10× Mem0 OSS (infer=False) | {r:.1f}× "
                       f"({ab['ingest_per_s']:,.1f} vs {mem0['ingest_per_s']:,.1f} turns/s, same MiniLM runtime{also}) | "
                       + ("yes" if r >= TARGETS["ingest_ratio"] else f"no, {TARGETS['ingest_ratio'] / r:.1f}× short")
                       + " |")
            p, q = ab["search_p50_ms"], mem0["search_p50_ms"]
            out.append(f"| search p50 no slower than Mem0 OSS on LoCoMo | {p:.1f} ms vs {q:.1f} ms | "
                       + ("yes" if p <= q else f"no, {p / q:.1f}× slower") + " |")
    if scale and "100000" in scale["sizes"]:
        p = scale["sizes"]["100000"]["search"]["find"]["p50_ms"]
        out.append(f"| search p50 ≤ 20 ms at 100k memories (full `find`) | {p:.1f} ms | "
                   + ("yes" if p <= TARGETS["p50_100k_ms"] else f"no, {p / TARGETS['p50_100k_ms']:.1f}× over") + " |")
    return out + [""]


def charts(run: dict[str, Any] | None, scale: dict[str, Any] | None, outdir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if run:
        systems = run["systems"]
        labels = [s["label"] for s in systems]
        fig, ax = plt.subplots(figsize=(9, 4.5))
        width = 0.38
        xs = range(len(systems))
        for off, metric in ((-width / 2, "hit@10"), (width / 2, "recall@10")):
            vals = [s["rows"][0]["scores"]["all"][metric] for s in systems]
            ax.bar([x + off for x in xs], vals, width, label=metric)
        ax.axhline(TARGETS["hit@10"], ls="--", lw=0.8, color="C0")
        ax.axhline(TARGETS["recall@10"], ls=":", lw=0.8, color="C1")
        ax.set_xticks(list(xs), labels, rotation=25, ha="right", fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title("LoCoMo dev retrieval (categories 1-4), dashed: targets")
        ax.legend()
        fig.tight_layout()
        fig.savefig(outdir / "quality.png", dpi=110)
        plt.close(fig)

        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
        a1.barh(labels, [s["ingest_per_s"] for s in systems], color="C2")
        a1.set_xscale("log")
        a1.set_xlabel("ingest, turns/s (log)")
        a2.barh(labels, [s["search_p50_ms"] for s in systems], color="C3", label="p50")
        a2.set_xscale("log")
        a2.set_xlabel("search p50, ms (log)")
        a2.set_yticks([])
        a1.tick_params(axis="y", labelsize=8)
        fig.suptitle("LoCoMo dev, same machine, same run")
        fig.tight_layout()
        fig.savefig(outdir / "speed.png", dpi=110)
        plt.close(fig)

    if scale and scale["sizes"]:
        rows = sorted(scale["sizes"].values(), key=lambda r: r["size"])
        sizes = [r["size"] for r in rows]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
        for leg in rows[0]["search"]:
            a1.plot(sizes, [r["search"][leg]["p50_ms"] for r in rows], marker="o", label=f"{leg} p50")
        a1.axhline(TARGETS["p50_100k_ms"], ls="--", lw=0.8, color="grey")
        a1.set_xscale("log")
        a1.set_yscale("log")
        a1.set_xlabel("memories")
        a1.set_ylabel("ms")
        a1.set_title("search latency")
        a1.legend(fontsize=7)
        a2.plot(sizes, [r["ingest_per_s"] for r in rows], marker="o", label="ingest memories/s")
        a2.plot(sizes, [r["bytes"] / 1e6 for r in rows], marker="s", label="file MB")
        a2.set_xscale("log")
        a2.set_yscale("log")
        a2.set_xlabel("memories")
        a2.set_title("ingest rate and file size")
        a2.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(outdir / "scale.png", dpi=110)
        plt.close(fig)


def render(outdir: Path) -> Path:
    """Write ``RESULTS.md`` and the charts into ``outdir`` from ``outdir/results/*.json``."""
    run = _load(outdir / "results" / "run.json")
    scale = _load(outdir / "results" / "scale.json")
    charts(run, scale, outdir)
    lines = ["# agentbase benchmarks", "",
             "Generated by `python -m benchmarks run` (LoCoMo quality, speed and memory, all systems in one run) "
             "and `python -m benchmarks scale` (the scaling curve); `python -m benchmarks report` re-renders this "
             "page from `benchmarks/results/*.json`. Do not edit by hand: notes go in `benchmarks/analysis.md`.", ""]
    if run:
        lines.append(f"LoCoMo run: {run['finished']} UTC, {run['wall_s'] / 60:.1f} min"
                     + (" — **smoke run (stand-in embedder), not a result**" if run.get("smoke") else "")
                     + (" — quick run (first conversation only)" if run.get("quick") else "") + ".")
    if scale:
        lines.append(f"Scaling run(s): {', '.join(sorted({r['finished'] for r in scale['sizes'].values()}))} UTC.")
    lines += ["", "The machine is 2 shared CPU cores; other jobs may run beside a benchmark, so absolute times are noisy. "
              "The ratios compare systems measured in the same run, one after another. Every worker runs with one "
              "BLAS/OpenMP thread (`OMP_NUM_THREADS=1`): on oversubscribed cores torch's two OpenMP threads made one "
              "MiniLM query embedding ~10× slower (1,430 ms vs 151 ms, measured here).", ""]
    lines += targets_section(run, scale)
    notes = Path(__file__).with_name("analysis.md")
    if notes.exists() and outdir.resolve() == Path(__file__).resolve().parent:
        lines += [notes.read_text().rstrip(), ""]
    if run:
        lines += quality_section(run) + speed_section(run)
    if scale and scale["sizes"]:
        lines += scale_section(scale)
    versions = (run or scale or {}).get("versions", {})
    if versions:
        lines += ["## Versions", "", "| package | version |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in versions.items()] + [""]
    path = outdir / "RESULTS.md"
    path.write_text("\n".join(lines))
    return path
