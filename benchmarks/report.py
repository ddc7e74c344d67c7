"""Render ``RESULTS.md`` and the PNG charts from the JSON the runs wrote (``results/*.json``).

``python -m benchmarks report`` re-renders without running anything, so a later 1M scaling run
adds its row to the same page.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .locomo import IN_SAMPLE, KS, SAMPLE_NOTES, TITLES

TARGETS = {"p50_100k_ms": 20.0}
SWAP_OF = {"mem0-swap": "mem0", "mem0-swap-exchange": "mem0-exchange", "langgraph-swap": "langgraph",
           "mem0-swap-simple": "mem0-simple", "mem0-swap-simple-exchange": "mem0-simple-exchange"}
SWAP_GAP = 0.02  # every swap path within this much hit@10 of the kernel's session path, on every set


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


def _sets(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The run's dev sets; a run.json from before dev sets were named holds LoCoMo dev only."""
    sets = run["sets"] if "sets" in run else {"locomo": run}
    # whether a set is in-sample is a property of the set, whatever the run recorded
    return {name: {**entry, "note": SAMPLE_NOTES.get(name, entry.get("note", "dev set"))} for name, entry in sets.items()}


def _ms(a: Any, b: Any) -> str:
    return "–" if a is None or b is None else f"{a:,.1f} / {b:,.1f}"


def _scores(s: dict[str, Any]) -> dict[str, Any]:
    return s["rows"][0]["scores"]["all"]


def _short(label: str) -> str:
    return label.replace("↳ ", "").replace("agentbase_adapters.", "")


def set_section(name: str, entry: dict[str, Any], run: dict[str, Any]) -> list[str]:
    systems = entry["systems"]
    by_key = {s["system"]: s for s in systems}
    title = TITLES.get(name, name)
    out = [f"## {title} — {entry['note']}", "",
           f"Data: `{entry['data']}` ({entry['conversations']} conversations"
           + (f" — the first {entry['conversations']} of {entry['of_conversations']} (`--max-turns`)"
              if entry.get("of_conversations", entry["conversations"]) > entry["conversations"] else "")
           + f", {entry['turns']} turns, "
           f"{entry.get('questions', '?')} questions of categories 1-4; malformed or dangling evidence ids: "
           f"{entry.get('malformed_evidence', '?')}). Every system is given the same memory text per turn, "
           "`(<session date>) <Speaker>: <text>` (a photo's caption included), plus the speaker, session and date "
           "in whatever fields its API has; each searches the question's conversation only. hit@k: an evidence turn "
           "is in the top k; recall@k: the share of evidence turns in the top k. Swap rows (↳) sit under the "
           "framework they replace and run the same user code with the same configuration. Add latency is per "
           "call of the system's add API (its unit in the second column); search is per question, top 20.", "",
           "| system | add call | hit@1 | hit@10 | recall@10 | ingest turns/s | add p50 / p95 ms | search p50 / p95 ms "
           "| peak RSS MB |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for s in systems:
        a = _scores(s)
        out.append(f"| {s['label']} | {s.get('unit', 'session')} | {a['hit@1']:.3f} | {a['hit@10']:.3f} "
                   f"| {a['recall@10']:.3f} | {s['ingest_per_s']:,.1f} | {_ms(s.get('add_p50_ms'), s.get('add_p95_ms'))} "
                   f"| {_ms(s['search_p50_ms'], s['search_p95_ms'])} | {s['peak_rss'] / 1e6:,.0f} |")
    session = by_key.get("agentbase")
    swaps = [s for s in systems if s.get("group") == "swap"]
    if swaps:
        out += ["", "Each swap path against the framework it replaces and against the kernel's session "
                "path:", "", "| swap path | hit@10 − framework | hit@10 − session path | ingest × framework "
                "| search p50 × framework |", "|---|---:|---:|---:|---:|"]
        for s in swaps:
            base = by_key.get(s.get("replaces") or "")
            a = _scores(s)["hit@10"]
            vs_base = f"{a - _scores(base)['hit@10']:+.3f}" if base else "– (replaces no library run here)"
            vs_session = f"{a - _scores(session)['hit@10']:+.3f}" if session else "–"
            out.append(f"| {_short(s['label'])} | {vs_base} | {vs_session} "
                       f"| {_ratio(s['ingest_per_s'], base['ingest_per_s']) if base else '–'} "
                       f"| {_ratio(s['search_p50_ms'], base['search_p50_ms']) if base else '–'} |")
    out += ["", "All k:", "", "| system | " + " | ".join(f"hit@{k}" for k in KS) + " | "
            + " | ".join(f"recall@{k}" for k in KS) + " | n |", "|---|" + "---:|" * (2 * len(KS) + 1)]
    for s in systems:
        a = _scores(s)
        out.append(f"| {s['label']} | " + " | ".join(f"{a[f'hit@{k}']:.3f}" for k in KS) + " | "
                   + " | ".join(f"{a[f'recall@{k}']:.3f}" for k in KS) + f" | {a['n']} |")
    for group, caption in (("scores", "category (LoCoMo's numbering; the names are disputed: 1 multi-hop, "
                                      "2 temporal, 3 open-domain, 4 single-hop)"), ("kinds", "kind")):
        keys = sorted({k for s in systems for k in s["rows"][0].get(group, {}) if k != "all"}, key=str)
        if not keys:
            continue
        first = next(s["rows"][0][group] for s in systems if s["rows"][0].get(group))
        out += ["", f"Per {caption}: hit@1 / hit@10 / recall@10", "",
                "| system | " + " | ".join(f"{k} (n = {first.get(k, {}).get('n', '?')})" for k in keys) + " |",
                "|---|" + "---:|" * len(keys)]
        for s in systems:
            cells = []
            for k in keys:
                c = s["rows"][0].get(group, {}).get(k)
                cells.append(f"{c['hit@1']:.2f} / {c['hit@10']:.2f} / {c['recall@10']:.2f}" if c else "–")
            out.append(f"| {s['label']} | " + " | ".join(cells) + " |")
    if entry.get("failed"):
        out += ["", "**Failed in this run (no row):** " + ", ".join(entry["failed"]) + "."]
    from .systems import DEFAULT

    missing = [n for n in DEFAULT if n not in by_key and n not in entry.get("failed", [])]
    if missing and not run.get("quick") and not run.get("smoke"):
        out += ["", "**Not measured in this run:** " + ", ".join(missing) + "."]
    out += ["", "Engines (and the agentbase code each process ran):", ""]
    out += [f"- {s['label']}: {s['engine']}; {s['speed_label']}" + (f"; code {s['code']}" if s.get("code") else "")
            for s in systems]
    return out + [""]


# -- across the six sets ---------------------------------------------------------------------------

# each embedder measured: its plain-dense row and, when run, the kernel's session path on it
EMBEDDER_ROWS = {"minilm-int8": ("dense-minilm-int8", "agentbase"), "minilm-torch": ("dense", None),
                 "e5-small-q4": ("dense-e5", "agentbase-e5")}
SHORT_SETS = ("locomo", "realtalk", "assistant")  # chat turns (~100-150 characters)
LONG_SETS = ("beam", "prefeval-explicit", "prefeval-choice")  # long assistant answers (~600-2,000 characters)


def _by_set(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: {s["system"]: s for s in entry["systems"]} for name, entry in _sets(run).items()}


def _cell(s: dict[str, Any] | None, metric: str = "hit@10") -> str:
    return f"{_scores(s)[metric]:.3f}" if s else "–"


def overview_section(run: dict[str, Any]) -> list[str]:
    """One table over the six sets: hit@1 / hit@10 of every system, and each swap path's gap to the session path."""
    sets = _by_set(run)
    names = list(sets)
    order: dict[str, str] = {}
    for entry in _sets(run).values():
        for s in entry["systems"]:
            order.setdefault(s["system"], s["label"])
    out = ["## All six dev sets at a glance (in-sample)", "",
           "hit@1 / hit@10 per set, same text for every system (the per-set sections below have recall, every k, "
           "per kind or category, and speed).", "",
           "| system | " + " | ".join(TITLES.get(n, n) for n in names) + " |", "|---|" + "---:|" * len(names)]
    for key, label in order.items():
        cells = [f"{_cell(sets[n].get(key), 'hit@1')} / {_cell(sets[n].get(key))}" if sets[n].get(key) else "–"
                 for n in names]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    swaps = [k for k in order if any(sets[n].get(k, {}).get("group") == "swap" for n in names)]
    if swaps and any("agentbase" in sets[n] for n in names):
        out += ["", f"Each swap path's hit@10 minus the kernel's session path on the same set (target: ≥ −{SWAP_GAP} "
                "on every set):", "",
                "| swap path | " + " | ".join(TITLES.get(n, n) for n in names) + " | worst |",
                "|---|" + "---:|" * (len(names) + 1)]
        for key in swaps:
            gaps = [_scores(sets[n][key])["hit@10"] - _scores(sets[n]["agentbase"])["hit@10"]
                    if key in sets[n] and "agentbase" in sets[n] else None for n in names]
            known = [g for g in gaps if g is not None]
            worst = min(known) if known else None
            out.append(f"| {_short(order[key])} | " + " | ".join("–" if g is None else f"{g:+.3f}" for g in gaps)
                       + " | " + ("–" if worst is None else f"{worst:+.3f}"
                                  + (" ✓" if worst >= -SWAP_GAP - 1e-9 else " ✗")) + " |")
    return out + [""]


def embedder_section(run: dict[str, Any]) -> list[str]:
    """The embedder table: quality (plain dense and in the kernel), cost, size, licence, source."""
    from .embedders import EMBEDDERS

    sets = _by_set(run)
    names = list(sets)
    rows = [(key, dense, kernel) for key, (dense, kernel) in EMBEDDER_ROWS.items()
            if any(dense in sets[n] or (kernel and kernel in sets[n]) for n in names)]
    if not rows:
        return []
    out = ["## Embedders (weights shipped inside a package; in-sample)", "",
           "Quality: hit@1 / hit@10 of plain dense cosine with the embedder alone (`dense*` rows) and of the kernel's "
           "session path on it (`agentbase*` rows). Cost: the embedder's own batch throughput on each set's turns "
           "(the dense row's ingest: one batch per session, one thread) and its query latency (the dense row's "
           "search p50: one query embedding plus a matrix product).", "",
           "| embedder | package (licence) | weights | runtime | size MB |", "|---|---|---|---|---:|"]
    for key, dense, _ in rows:
        info = EMBEDDERS[key]
        size = next((sets[n][dense].get("weights_bytes") for n in names if dense in sets[n]
                     and sets[n][dense].get("weights_bytes")), None)
        out.append(f"| {info.label} | {info.package} ({info.licence}) | {info.weights} | {info.runtime} | "
                   + (f"{size / 1e6:,.1f}" if size else "–") + " |")
    out += ["", "| embedder | " + " | ".join(f"{TITLES.get(n, n)} dense" for n in names) + " | "
            + " | ".join(f"{TITLES.get(n, n)} kernel" for n in names) + " |", "|---|" + "---:|" * (2 * len(names))]
    for key, dense, kernel in rows:
        cells = [f"{_cell(sets[n].get(dense), 'hit@1')} / {_cell(sets[n].get(dense))}" if dense in sets[n] else "–"
                 for n in names]
        cells += [f"{_cell(sets[n].get(kernel), 'hit@1')} / {_cell(sets[n].get(kernel))}"
                  if kernel and kernel in sets[n] else "–" for n in names]
        out.append(f"| {EMBEDDERS[key].label} | " + " | ".join(cells) + " |")
    out += ["", "| embedder | " + " | ".join(f"{TITLES.get(n, n)} texts/s" for n in names)
            + " | query p50 / p95 ms (first set) |", "|---|" + "---:|" * (len(names) + 1)]
    for key, dense, _ in rows:
        rates = [f"{sets[n][dense]['ingest_per_s']:,.1f}" if dense in sets[n] else "–" for n in names]
        first = next((sets[n][dense] for n in names if dense in sets[n]), None)
        out.append(f"| {EMBEDDERS[key].label} | " + " | ".join(rates) + " | "
                   + (_ms(first["search_p50_ms"], first["search_p95_ms"]) if first else "–") + " |")
    return out + [""]


def ingest_ratio_section(run: dict[str, Any]) -> list[str]:
    """Ingest rate of the kernel and the swap paths against the default embedder's own batch throughput."""
    sets = _by_set(run)
    names = [n for n in sets if "dense-minilm-int8" in sets[n]]
    if not names:
        return []
    keys = [k for k in ("agentbase", "mem0-swap-simple", "mem0-swap-simple-exchange", "minimal-bare",
                        "langgraph-swap-bare") if any(k in sets[n] for n in names)]
    out = ["## Ingest rate against the embedder's own throughput", "",
           "Turns per second of each path over the whole timed ingest (until every vector is stored), divided by the "
           "default embedder's (MiniLM int8 ONNX) batch throughput on the same turns in the same run "
           f"(the `dense-minilm-int8` row). Short turns: {', '.join(SHORT_SETS)}; long: {', '.join(LONG_SETS)}. "
           "Target ≥ 0.8×. Timings are from one shared 2-core machine: read them as ratios within a set.", "",
           "| path | " + " | ".join(TITLES.get(n, n) for n in names) + " |", "|---|" + "---:|" * len(names)]
    base = {n: sets[n]["dense-minilm-int8"]["ingest_per_s"] for n in names}
    out.append("| MiniLM int8 ONNX alone, texts/s | " + " | ".join(f"{base[n]:,.1f}" for n in names) + " |")
    for key in keys:
        cells = [f"{sets[n][key]['ingest_per_s']:,.1f} ({sets[n][key]['ingest_per_s'] / base[n]:.2f}×)"
                 if key in sets[n] else "–" for n in names]
        label = next(sets[n][key]["label"] for n in names if key in sets[n])
        out.append(f"| {_short(label)} | " + " | ".join(cells) + " |")
    return out + [""]


def scale_section(scale: dict[str, Any]) -> list[str]:
    rows = sorted(_one_scope(scale), key=lambda r: r["size"])
    legs = list(dict.fromkeys(leg for r in rows for leg in r["search"]))  # runs of older code timed other legs
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
                       f"{r['search'][leg]['p50_ms']:.1f} / {r['search'][leg]['p95_ms']:.1f}" if leg in r["search"]
                       else "–" for leg in legs) + " |")
    if len(rows) > 1:
        out += ["", "Growth exponents (log-log slope of p50 between consecutive sizes; 1.0 = linear in the number "
                "of memories):", ""]
        for leg in legs:
            parts = []
            for a, b in zip(rows, rows[1:]):
                if leg not in a["search"] or leg not in b["search"]:
                    continue
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


def _one_scope(scale: dict[str, Any]) -> list[dict[str, Any]]:
    """The curve's rows with every memory in one scope (``--scopes N`` rows are shown in the PostgreSQL table)."""
    return [r for r in scale["sizes"].values() if r.get("scopes", 1) == 1]


def postgres_searches_section(doc: dict[str, Any]) -> list[str]:
    """Searches run again on a database an earlier PostgreSQL run loaded, one row per run in time order."""
    legs = ("find", "find, fts only", "find, vectors only")
    out = ["### Searches again on a loaded PostgreSQL database", "",
           "`python -m benchmarks scale --backend postgres --postgres-url URL --searches-only`: the same questions "
           "on the database an earlier `--postgres-url` run loaded (and its live writes), each run a new process "
           "(an empty full-text cache), to compare kernels on the same rows; the kernel column names the "
           "`agentbase_kernel` that searched. Rows in time order: the first run after a load or a restart reads "
           "the HNSW index from disk.", "",
           "| memories | kernel | " + " | ".join(f"{leg} p50 / p95 ms" for leg in legs)
           + " | recall_fts mean ms | recall_vector mean ms | measured |", "|---:|---|" + "---:|" * (len(legs) + 2) + "---|"]
    for run in sorted(doc.get("runs", []), key=lambda r: str(r.get("finished", ""))):
        steps = run.get("find_steps_mean_ms", {})
        out.append(f"| {run['entries_u0']:,} | {run.get('kernel', run.get('code', '?'))} | " + " | ".join(
            f"{run['search'][leg]['p50_ms']:.1f} / {run['search'][leg]['p95_ms']:.1f}" for leg in legs)
            + f" | {steps.get('recall_fts', float('nan')):.1f} | {steps.get('recall_vector', float('nan')):.1f}"
            + f" | {run.get('finished', '?')} |")
    return out + [""]


def postgres_section(pg: dict[str, Any], sqlite: dict[str, Any] | None) -> list[str]:
    """The Postgres rows of the curve beside SQLite's at the same sizes (docs/postgres.md reads them)."""
    legs = ("find", "find, fts only", "find, vectors only")
    out = ["## Scaling on PostgreSQL + pgvector (synthetic memories)", "",
           "The same memories, batches and queries as the curve above, on PostgreSQL "
           "(`python -m benchmarks scale --backend postgres --sizes ...`: a throwaway PostgreSQL 18 + pgvector 0.8 "
           "server with its default durable settings, on the same machine). Size is `pg_database_size` "
           "(7.8 MB of it is an empty database's catalogue). Each load runs inside `Kernel.bulk_load()`: on PostgreSQL "
           "the HNSW index is built once when the load ends (its time is the `hnsw` figure of the index build column; "
           "rows measured before 2026-12-02 06:20 kept it up per write instead), `fts` is a `REINDEX` of the "
           "full-text GIN index; on SQLite the vector index is built in RAM by the first `find`. Live writes are 1,000 "
           "more memories added after the searches in batches of 100, once every index exists. The fts-only and "
           "vectors-only legs run right after the full `find` of the same query, whose terms the full-text cache "
           "then holds: they show the warm cost, `find` itself the first ranking of each new term. SQLite rows are from `results/scale.json` at the same size "
           "(their run time in the last column); a \"SQLite, same hour\" row is SQLite measured right after the "
           "PostgreSQL row on the same loaded machine (`python -m benchmarks scale --sizes N --results-dir DIR`, "
           "stored under `same_hour_sqlite` in `results/scale-postgres.json`): compare those two as a ratio.", "",
           "| memories | backend | ingest /s | live writes /s | MB | bytes / memory | "
           + " | ".join(f"{leg} p50 / p95 ms" for leg in legs)
           + " | index build s | measured |", "|---:|---|---:|---:|---:|---:|" + "---:|" * len(legs) + "---:|---|"]
    for key, r in sorted(pg["sizes"].items(), key=lambda kv: (kv[1]["size"], kv[1].get("scopes", 1))):
        twin = (sqlite or {}).get("sizes", {}).get(key)
        same_hour = pg.get("same_hour_sqlite", {}).get(key)
        for backend, row in (("PostgreSQL", r), ("SQLite, same hour", same_hour), ("SQLite", twin)):
            if row is None:
                continue
            build = row.get("index_build_s")
            built = (", ".join(f"{k.split('_')[-1]} {v:.1f}" for k, v in build.items()) if build
                     else f"{row['vector_index']['first_find_ms'] / 1000:.1f} (RAM index, first find)")
            live = f"{row['live_ingest_per_s']:,.0f}" if "live_ingest_per_s" in row else "–"
            scopes = row.get("scopes", 1)
            size = f"{row['size']:,}" + (f" over {scopes:,} users (searched: {row['stored']:,})" if scopes > 1 else "")
            out.append(f"| {size} | {backend} | {row['ingest_per_s']:,.0f} | {live} | {_mb(row['bytes'])} | "
                       f"{row['bytes_per_memory']:,.0f} | " + " | ".join(
                           f"{row['search'][leg]['p50_ms']:.1f} / {row['search'][leg]['p95_ms']:.1f}"
                           if leg in row["search"] else "–" for leg in legs)
                       + f" | {built} | {row.get('finished', '?')} |")
    return out + [""]


def store_scale_section(doc: dict[str, Any]) -> list[str]:
    rows = sorted(doc["sizes"].values(), key=lambda r: r["size"])
    out = ["## LangGraph store search at scale (synthetic items)", "",
           "`store.search((\"memories\", \"u\"), query=q, limit=10)` on `AgentBaseStore` and on LangGraph's "
           "`InMemoryStore`, both holding the same items in one namespace with the same MiniLM vectors "
           "(`benchmarks/store_scale.py`). The items are seeded synthetic short memories (`benchmarks/synthetic.py`, "
           "~12 words each), not dev-set turns: embedding 100k real turns with MiniLM on 2 shared cores takes hours, "
           "so the stored texts are short and batch-embedded once (cached between sizes), and each store is handed "
           "those vectors; the queries (synthetic questions in the same vocabulary) are embedded live by the same "
           "model in both, so every timed search includes one query embedding. `InMemoryStore` is loaded with one "
           "`put` per item; `AgentBaseStore` with the records its own `put` writes, through the kernel's bulk "
           "`add_memories` (a 100k `put` loop would outlast the measurement; `put` latency per turn is in the "
           "dev-set tables). Command: `python -m benchmarks store-scale --sizes 10000,100000`.", "",
           "| items | queries | InMemoryStore search p50 / p95 ms | AgentBaseStore search p50 / p95 ms "
           "| p50 AgentBaseStore ÷ InMemoryStore | load s, InMemoryStore / AgentBaseStore |",
           "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        a, b = r["InMemoryStore"], r["AgentBaseStore"]
        out.append(f"| {r['size']:,} | {r['queries']} | {_ms(a['search']['p50_ms'], a['search']['p95_ms'])} "
                   f"| {_ms(b['search']['p50_ms'], b['search']['p95_ms'])} "
                   f"| {_ratio(b['search']['p50_ms'], a['search']['p50_ms'])} | {a['load_s']:,.0f} / {b['load_s']:,.0f} |")
    reused = [r for r in rows if r.get("embedded", r["size"]) < r["size"]]
    if reused:
        out += ["", "Vectors: " + "; ".join(
            f"at {r['size']:,} items only the first {r['embedded']:,} texts were embedded and item i holds the "
            f"MiniLM vector of item i mod {r['embedded']:,}" for r in reused)
            + " (`--embed-at-most`; embedding every text on this shared machine would outlast the run). What a search "
            "costs does not depend on which vector an item holds: `InMemoryStore` scores every item of the "
            "namespace, and the kernel's vector index ranks a matrix of the same size; the FTS leg sees every "
            "item's own text. Rankings are not scored in this table."]
    regex = [r for r in rows if r["AgentBaseStore"].get("load_ner", "").startswith("regex")]
    if regex:
        out += ["", "NER while loading: at " + ", ".join(f"{r['size']:,}" for r in regex) + " items `AgentBaseStore` "
                "was loaded with the regex NER stage (`--load-ner regex`, spaCy on 100k texts here would take most "
                "of an hour) and then reopened with the default (spaCy) for the searches: every timed query runs "
                "what a user's does; only the entity tags of the stored items differ."]
    out += ["", "Engines: " + rows[-1]["engine"] + ". agentbase code per size: "
            + "; ".join(f"{r['size']:,}: {r.get('code', '?')} ({r.get('finished', '?')} UTC)" for r in rows) + ".", ""]
    return out


def _quality_targets(name: str, systems: dict[str, Any]) -> list[str]:
    """The quality targets for the kernel's session path (its defaults) on each dev set."""
    ours = systems.get("agentbase")
    if ours is None:
        return []
    a = _scores(ours)
    where = name + (" (in-sample)" if name in IN_SAMPLE else "")
    out = []
    if name == "locomo":
        for metric, floor, goal in (("hit@10", 0.86, 0.90), ("recall@10", 0.79, 0.82)):
            out.append(f"| agentbase {metric} ≥ {floor} (goal {goal}) | {where} | {a[metric]:.3f} | "
                       + ("yes" if a[metric] >= floor else "no") + (", goal met" if a[metric] >= goal else "") + " |")
        return out
    if name != "assistant":
        return out
    kinds = ours["rows"][0].get("kinds", {})
    update = kinds.get("knowledge-update")
    if update:
        out.append(f"| agentbase knowledge-update hit@1 ≥ 0.80 | {where} | {update['hit@1']:.3f} | "
                   + ("yes" if update["hit@1"] >= 0.80 else "no") + " |")
    out.append(f"| agentbase hit@10 ≥ 0.92 | {where} | {a['hit@10']:.3f} | " + ("yes" if a["hit@10"] >= 0.92 else "no")
               + " |")
    plain = [systems[k] for k in ("dense", "fts5") if k in systems]
    if plain and kinds:
        below = []
        for kind, k in sorted(kinds.items()):
            best = max(p["rows"][0]["kinds"].get(kind, {}).get("hit@10", 0.0) for p in plain)
            if k["hit@10"] < best:
                below.append(f"{kind} {k['hit@10']:.3f} < {best:.3f}")
        out.append(f"| agentbase hit@10 per kind ≥ max(plain dense, plain FTS5) | {where} | "
                   + ("; ".join(below) if below else f"all {len(kinds)} kinds") + " | " + ("no" if below else "yes")
                   + " |")
    return out


def targets_section(run: dict[str, Any] | None, scale: dict[str, Any] | None,
                    store_scale: dict[str, Any] | None = None) -> list[str]:
    out = ["## Targets", "", "| target | dev set | measured | met? |", "|---|---|---|---|"]
    for name, entry in (_sets(run) if run else {}).items():
        systems = {s["system"]: s for s in entry["systems"]}
        where = name + (" (in-sample)" if name in IN_SAMPLE else "")
        session = systems.get("agentbase")
        for s in entry["systems"]:
            if s.get("group") != "swap" or not session:
                continue
            gap = _scores(session)["hit@10"] - _scores(s)["hit@10"]
            out.append(f"| {_short(s['label'])} hit@10 within {SWAP_GAP} of the session path | {where} | "
                       f"{_scores(s)['hit@10']:.3f} vs {_scores(session)['hit@10']:.3f} | "
                       + ("yes" if gap <= SWAP_GAP + 1e-9 else f"no, {gap:.3f} below") + " |")
        for swap in ("mem0-swap", "mem0-swap-exchange", "mem0-swap-simple", "mem0-swap-simple-exchange"):
            ours, theirs = systems.get(swap), systems.get(SWAP_OF.get(swap, ""))
            if ours and theirs:
                r = ours["ingest_per_s"] / theirs["ingest_per_s"]
                out.append(f"| {_short(ours['label'])} ingest ≥ Mem0's (goal 10×) | {where} | {r:.2f}× "
                           f"({ours['ingest_per_s']:,.1f} vs {theirs['ingest_per_s']:,.1f} turns/s) | "
                           + ("yes" if r >= 1 else "no") + (", goal met" if r >= 10 else "") + " |")
        ours, theirs = systems.get("langgraph-swap"), systems.get("langgraph")
        if ours and theirs:
            p, q = ours["search_p50_ms"], theirs["search_p50_ms"]
            out.append(f"| AgentBaseStore search p50 ≤ InMemoryStore's | {where} | {p:.1f} vs {q:.1f} ms | "
                       + ("yes" if p <= q else f"no, {p / q:.1f}× slower") + " |")
    for name, entry in (_sets(run) if run else {}).items():
        out += _quality_targets(name, {s["system"]: s for s in entry["systems"]})
    for r in sorted((store_scale or {}).get("sizes", {}).values(), key=lambda r: r["size"]):
        p, q = r["AgentBaseStore"]["search"]["p50_ms"], r["InMemoryStore"]["search"]["p50_ms"]
        out.append(f"| AgentBaseStore search p50 ≤ InMemoryStore's at {r['size']:,} items | synthetic | "
                   f"{p:.1f} vs {q:.1f} ms | " + ("yes" if p <= q else f"no, {p / q:.1f}× slower") + " |")
    if scale and "100000" in scale["sizes"]:
        p = scale["sizes"]["100000"]["search"]["find"]["p50_ms"]
        out.append(f"| search p50 ≤ 20 ms at 100k memories (full `find`) | synthetic | {p:.1f} ms | "
                   + ("yes" if p <= TARGETS["p50_100k_ms"] else f"no, {p / TARGETS['p50_100k_ms']:.1f}× over") + " |")
    return out + [""]


def charts(run: dict[str, Any] | None, scale: dict[str, Any] | None, outdir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if run:
        sets = _sets(run)
        fig, axes = plt.subplots(1, len(sets), figsize=(7 * len(sets), 5), squeeze=False)
        for ax, (name, entry) in zip(axes[0], sets.items()):
            systems = entry["systems"]
            labels = [_short(s["label"]) for s in systems]
            width = 0.38
            xs = range(len(systems))
            for off, metric in ((-width / 2, "hit@10"), (width / 2, "recall@10")):
                ax.bar([x + off for x in xs], [_scores(s)[metric] for s in systems], width, label=metric)
            ax.set_xticks(list(xs), labels, rotation=35, ha="right", fontsize=7)
            ax.set_ylim(0, 1)
            ax.set_title(f"{name}" + (" (in-sample)" if name in IN_SAMPLE else ""))
            ax.legend(fontsize=7)
        fig.suptitle("Retrieval quality, categories 1-4, same text for every system")
        fig.tight_layout()
        fig.savefig(outdir / "quality.png", dpi=110)
        plt.close(fig)

        name, entry = next(iter(sets.items()))
        systems = entry["systems"]
        labels = [_short(s["label"]) for s in systems]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 5))
        a1.barh(labels, [s["ingest_per_s"] for s in systems], color="C2")
        a1.set_xscale("log")
        a1.set_xlabel("ingest, turns/s (log)")
        a1.invert_yaxis()
        a2.barh(labels, [s["search_p50_ms"] for s in systems], color="C3")
        a2.set_xscale("log")
        a2.set_xlabel("search p50, ms (log)")
        a2.set_yticks([])
        a2.invert_yaxis()
        a1.tick_params(axis="y", labelsize=7)
        fig.suptitle(f"{name}: same machine, same run")
        fig.tight_layout()
        fig.savefig(outdir / "speed.png", dpi=110)
        plt.close(fig)

    if scale and scale["sizes"]:
        rows = sorted(_one_scope(scale), key=lambda r: r["size"])
        sizes = [r["size"] for r in rows]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
        for leg in dict.fromkeys(leg for r in rows for leg in r["search"]):
            have = [r for r in rows if leg in r["search"]]
            a1.plot([r["size"] for r in have], [r["search"][leg]["p50_ms"] for r in have], marker="o", label=f"{leg} p50")
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


def readme_table(outdir: Path) -> str:
    """The README's results table: hit@1 / hit@10 per dev set and speed, one row per system, from run.json."""
    run = _load(outdir / "results" / "run.json")
    if not run:
        raise SystemExit(f"no run in {outdir / 'results' / 'run.json'}: python -m benchmarks run first")
    sets = _sets(run)
    order: dict[str, str] = {}
    for entry in sets.values():
        for s in entry["systems"]:
            order.setdefault(s["system"], s["label"])
    head = "| same text for every system | " + " | ".join(
        f"{name} hit@1 / hit@10" + (" (in-sample)" if name in IN_SAMPLE else "") for name in sets) + " | " + " | ".join(
        f"{name} ingest turns/s, search p50 ms" for name in sets) + " |"
    lines = [head, "|---|" + "---:|" * (2 * len(sets))]
    for key, label in order.items():
        cells, speed = [], []
        for entry in sets.values():
            s = next((x for x in entry["systems"] if x["system"] == key), None)
            cells.append(f"{_scores(s)['hit@1']:.3f} / {_scores(s)['hit@10']:.3f}" if s else "–")
            speed.append(f"{s['ingest_per_s']:,.1f}, {s['search_p50_ms']:,.0f}" if s else "–")
        lines.append(f"| {label} | " + " | ".join(cells + speed) + " |")
    return "\n".join(lines)


def render(outdir: Path) -> Path:
    """Write ``RESULTS.md`` and the charts into ``outdir`` from ``outdir/results/*.json``."""
    run = _load(outdir / "results" / "run.json")
    scale = _load(outdir / "results" / "scale.json")
    store_scale = _load(outdir / "results" / "store_scale.json")
    charts(run, scale, outdir)
    lines = ["# agentbase benchmarks", "",
             "Generated by `python -m benchmarks run` (quality, speed and memory of every system and swap path on the "
             "dev sets, all in one run), "
             "`python -m benchmarks store-scale` (LangGraph store search at 10k and 100k items) and "
             "`python -m benchmarks scale` (the scaling curve); `python -m benchmarks report` re-renders this "
             "page from `benchmarks/results/*.json`. Do not edit by hand: notes go in `benchmarks/analysis.md`.", ""]
    if run:
        lines.append("Dev-set runs: " + "; ".join(
            f"{n} ({e['note']}) {e.get('started', '?')} to {e.get('finished', run['finished'])} UTC"
            for n, e in _sets(run).items()) + ". Each system ran in its own process; the rows of a set may come from "
                     "several invocations of `run` on the same code (a run of some systems keeps the others' rows; each "
                     "row's code commit is under Engines)"
                     + (f" ({run['jobs']} worker processes at once)" if run.get("jobs", 1) > 1 else "")
                     + "".join(f"; rows merged from a concurrent run {m['started']} to {m['finished']} UTC"
                               + (f" ({m['jobs']} worker processes at once)" if m.get("jobs", 1) > 1 else "")
                               for m in run.get("merged", []))
                     + (" — **smoke run (stand-in embedder), not a result**" if run.get("smoke") else "")
                     + (" — quick run (one conversation per set, few questions)" if run.get("quick") else "") + ".")
    lines += ["", "The machine is 2 shared CPU cores; other jobs may run beside a benchmark, so absolute times are noisy. "
              "The ratios compare systems measured in the same run, one after another. Every worker runs with one "
              "BLAS/OpenMP thread (`OMP_NUM_THREADS=1`): on oversubscribed cores torch's two OpenMP threads made one "
              "MiniLM query embedding ~10× slower (1,430 ms vs 151 ms, measured here).", ""]
    lines += targets_section(run, scale, store_scale)
    notes = Path(__file__).with_name("analysis.md")
    if notes.exists() and outdir.resolve() == Path(__file__).resolve().parent:
        lines += [notes.read_text().rstrip(), ""]
    if run:
        lines += overview_section(run)
        lines += embedder_section(run)
        lines += ingest_ratio_section(run)
        for name, entry in _sets(run).items():
            lines += set_section(name, entry, run)
        lines += ["![Quality](quality.png)", "", "![Speed](speed.png)", ""]
    if store_scale and store_scale["sizes"]:
        lines += store_scale_section(store_scale)
    if scale and scale["sizes"]:
        lines += scale_section(scale)
    pg_scale = _load(outdir / "results" / "scale-postgres.json")
    if pg_scale and pg_scale["sizes"]:
        lines += postgres_section(pg_scale, scale)
    pg_searches = _load(outdir / "results" / "scale-postgres-searches.json")
    if pg_searches:
        lines += postgres_searches_section(pg_searches)
    versions = (run or scale or {}).get("versions", {})
    if versions:
        lines += ["## Versions", "", "| package | version |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in versions.items()] + [""]
    path = outdir / "RESULTS.md"
    path.write_text("\n".join(lines))
    return path
