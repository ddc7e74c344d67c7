"""agentbase benchmarks: one entry point.

Usage::

    python -m benchmarks run                      # LoCoMo quality + speed, every system, writes RESULTS.md + PNGs
    python -m benchmarks run --quick              # first conversation only
    python -m benchmarks scale --sizes 10000,100000
    python -m benchmarks scale --sizes 1000000    # the long one
    python -m benchmarks report                   # re-render RESULTS.md from benchmarks/results/*.json

``system`` and ``scale-one`` are the per-process workers ``run`` and ``scale`` start (one process per
system or size, so peak RSS and caches never mix).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from . import locomo
from .common import ROOT, offline_env, run_worker, versions

# One BLAS/OpenMP thread in every worker. On 2 shared, oversubscribed cores, torch's 2 OpenMP threads
# spin at every barrier waiting for a descheduled sibling: one MiniLM query took 1,430 ms with 2 threads
# and 151 ms with 1 (measured here). Every system embeds with the same MiniLM, so all get the same setting.
SINGLE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
ORDER = ("agentbase", "agentbase-deferred", "agentbase-no-vectors", "agentbase-no-ner", "agentbase-store", "fts5", "dense", "langgraph", "mem0",
         "mem0-own-embedder")


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")


def _data(args: argparse.Namespace) -> list[dict]:
    data = locomo.load(Path(args.data))
    return data[:1] if args.quick else data


def cmd_run(args: argparse.Namespace) -> int:
    outdir = Path(args.results_dir)
    (outdir / "results").mkdir(parents=True, exist_ok=True)
    names = args.systems.split(",") if args.systems else list(ORDER)
    unknown = set(names) - set(ORDER)
    if unknown:
        raise SystemExit(f"unknown systems {sorted(unknown)}; choose from {', '.join(ORDER)}")
    started = time.perf_counter()
    systems = []
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        for name in names:
            print(f"== {name}", flush=True)
            extra = ["--quick"] if args.quick else []
            extra += ["--smoke"] if args.smoke else []
            extra += ["--no-progress"] if args.no_progress else []
            result = run_worker(["system", name, "--data", args.data, *extra], Path(tmp) / f"{name}.json",
                                env=SINGLE_THREAD)
            s = result["rows"][0]["scores"]["all"]
            print(f"   hit@10={s['hit@10']:.3f} recall@10={s['recall@10']:.3f} n={s['n']} "
                  f"ingest={result['ingest_per_s']:,.1f} turns/s p50={result['search_p50_ms']} ms "
                  f"rss={result['peak_rss'] / 1e6:,.0f} MB bytes/memory={result['bytes_per_memory']:,.0f}", flush=True)
            systems.append(result)
    data = _data(args)
    run = {"finished": _now(), "wall_s": round(time.perf_counter() - started, 1), "data": args.data,
           "quick": args.quick, "smoke": args.smoke, "conversations": len(data),
           "turns": systems[0]["turns"], "malformed_evidence": systems[0]["rows"][0]["malformed_evidence"],
           "systems": systems, "versions": versions()}
    (outdir / "results" / "run.json").write_text(json.dumps(run, indent=1, default=str))
    from .report import render

    print(f"wrote {render(outdir)}")
    return 0


def cmd_system(args: argparse.Namespace) -> int:
    offline_env()
    from .systems import run_system

    code = versions()["agentbase commit"]  # at start: the kernel may change on disk during a long run
    with tempfile.TemporaryDirectory(prefix=f"bench-{args.name}-") as tmp:
        result = run_system(args.name, _data(args), Path(tmp), progress=not args.no_progress, smoke=args.smoke)
    result["code"] = code
    Path(args.out).write_text(json.dumps(result, default=str))
    return 0


def cmd_scale(args: argparse.Namespace) -> int:
    outdir = Path(args.results_dir)
    (outdir / "results").mkdir(parents=True, exist_ok=True)
    path = outdir / "results" / "scale.json"
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-scale-", dir=args.tmp) as tmp:
        for size in sizes:
            print(f"== {size:,} memories", flush=True)
            extra = ["--queries", str(args.queries)] if args.queries else []
            extra += ["--no-progress"] if args.no_progress else []
            extra += ["--tmp", tmp]
            row = run_worker(["scale-one", str(size), *extra], Path(tmp) / f"scale-{size}.json", env=SINGLE_THREAD)
            row["finished"] = _now()
            find = row["search"]["find"]
            print(f"   ingest={row['ingest_per_s']:,.0f}/s file={row['bytes'] / 1e6:,.1f} MB "
                  f"find p50={find['p50_ms']} ms p95={find['p95_ms']} ms", flush=True)
            # re-read before saving: another scale run (say the long 1M one) may have added its size meanwhile;
            # saved after each size, so a long run that dies keeps what it measured
            scale = json.loads(path.read_text()) if path.exists() else {"sizes": {}}
            scale["sizes"][str(size)] = row
            scale["versions"] = versions()
            path.write_text(json.dumps(scale, indent=1, default=str))
    from .report import render

    print(f"wrote {render(outdir)}")
    return 0


def cmd_scale_one(args: argparse.Namespace) -> int:
    offline_env()
    from .scale import run_size

    code = versions()["agentbase commit"]
    with tempfile.TemporaryDirectory(prefix="size-", dir=args.tmp) as tmp:
        row = run_size(args.size, Path(tmp), n_queries=args.queries, progress=not args.no_progress)
    row["code"] = code
    Path(args.out).write_text(json.dumps(row, default=str))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import render

    print(f"wrote {render(Path(args.results_dir))}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, results: bool = True) -> None:
        p.add_argument("--no-progress", action="store_true")
        if results:
            p.add_argument("--results-dir", default=str(ROOT), help="where RESULTS.md, PNGs and results/ go")

    p = sub.add_parser("run", help="LoCoMo quality + speed for every system")
    p.add_argument("--data", default=str(locomo.DEFAULT_DATA))
    p.add_argument("--quick", action="store_true", help="first conversation only")
    p.add_argument("--systems", help=f"comma-separated subset of {','.join(ORDER)}")
    p.add_argument("--smoke", action="store_true", help="stand-in embedder and regex NER: for tests, not results")
    common(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("system", help="(worker) one system, in this process")
    p.add_argument("name", choices=ORDER)
    p.add_argument("--data", default=str(locomo.DEFAULT_DATA))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--out", required=True)
    common(p, results=False)
    p.set_defaults(func=cmd_system)

    p = sub.add_parser("scale", help="the scaling curve")
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--queries", type=int, help="queries per size (default 200, 50 from 1M)")
    p.add_argument("--tmp", help="directory for the scratch databases (default: the system temp dir)")
    common(p)
    p.set_defaults(func=cmd_scale)

    p = sub.add_parser("scale-one", help="(worker) one size, in this process")
    p.add_argument("size", type=int)
    p.add_argument("--queries", type=int)
    p.add_argument("--tmp")
    p.add_argument("--out", required=True)
    common(p, results=False)
    p.set_defaults(func=cmd_scale_one)

    p = sub.add_parser("report", help="re-render RESULTS.md and the charts from results/*.json")
    common(p)
    p.set_defaults(func=cmd_report)

    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
