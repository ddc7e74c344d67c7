"""agentbase benchmarks: one entry point.

Usage::

    python -m benchmarks run                      # every system on the six dev sets, writes RESULTS.md + PNGs
    python -m benchmarks run --set locomo,beam    # some dev sets (all | both | a list of set names)
    python -m benchmarks run --data A.json --data B.json   # any LoCoMo-format files
    python -m benchmarks run --quick              # one conversation per set, small: a smoke run
    python -m benchmarks scale --sizes 10000,100000
    python -m benchmarks store-scale --sizes 10000,100000   # LangGraph store search: AgentBaseStore vs InMemoryStore
    python -m benchmarks run --jobs 3             # three worker processes at once (noisier timings, sooner)
    python -m benchmarks merge OTHER/run.json     # add the rows of another run of the same kind
    python -m benchmarks report                   # re-render RESULTS.md from benchmarks/results/*.json
    python -m benchmarks train-ranker --cache DIR # the learned ranker and score calibration (benchmarks/train_ranker.py)

``system``, ``scale-one`` and ``store-scale-one`` are the per-process workers ``run``, ``scale`` and
``store-scale`` start (one process per
system, dev set or size, so peak RSS and caches never mix).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from . import locomo
from .common import ROOT, offline_env, run_worker, versions

# One BLAS/OpenMP thread in every worker. On 2 shared, oversubscribed cores, torch's 2 OpenMP threads
# spin at every barrier waiting for a descheduled sibling: one MiniLM query took 1,430 ms with 2 threads
# and 151 ms with 1 (measured here). Every system embeds with the same MiniLM, so all get the same setting.
SINGLE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
QUICK_QUESTIONS = 40  # --quick: the first conversation, its first questions


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M")


def _quick(data: list[dict]) -> list[dict]:
    first = dict(data[0])
    first["qa"] = [q for q in first["qa"] if q.get("category") in (1, 2, 3, 4)][:QUICK_QUESTIONS]
    return [first]


def _load(path: str, quick: bool, max_turns: int | None = None) -> list[dict]:
    data = locomo.load(Path(path))
    return _quick(data) if quick else _first_turns(data, max_turns) if max_turns else data


def _first_turns(data: list[dict], max_turns: int) -> list[dict]:
    """--max-turns: whole conversations in file order while their turns add up to at most N (at least one)."""
    kept: list[dict] = []
    total = 0
    for conv in data:
        n = len(locomo.turns_of([conv]))
        if kept and total + n > max_turns:
            break
        kept.append(conv)
        total += n
    return kept


def _datasets(args: argparse.Namespace) -> list[Path]:
    """--data files if given, else the --set's files (``all``: the six dev sets; ``both``: LoCoMo and assistant)."""
    if args.data:
        paths = [Path(p) for p in args.data]
    else:
        names = {"all": list(locomo.DATASETS), "both": ["locomo", "assistant"]}.get(args.set, args.set.split(","))
        unknown = [n for n in names if n not in locomo.DATASETS]
        if unknown:
            raise SystemExit(f"unknown dev sets {unknown}; choose from all, both, {', '.join(locomo.DATASETS)}")
        paths = [locomo.DATASETS[n] for n in names]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise SystemExit(f"dev set not found: {', '.join(missing)}")
    return paths


def _summary(result: dict) -> str:
    row = result["rows"][0]
    s = row["scores"]["all"]
    line = (f"   hit@1={s['hit@1']:.3f} hit@10={s['hit@10']:.3f} recall@10={s['recall@10']:.3f} n={s['n']} "
            f"ingest={result['ingest_per_s']:,.1f} turns/s add p50/p95={result['add_p50_ms']}/{result['add_p95_ms']} ms "
            f"search p50/p95={result['search_p50_ms']}/{result['search_p95_ms']} ms rss={result['peak_rss'] / 1e6:,.0f} MB")
    for kind, k in sorted(row.get("kinds", {}).items()):
        line += f"\n     kind {kind}: n={k['n']} hit@1={k['hit@1']:.3f} hit@10={k['hit@10']:.3f} recall@10={k['recall@10']:.3f}"
    return line


def _merge(run: dict, other: dict) -> dict:
    """``run`` with ``other``'s rows added: per set, a system measured in both keeps ``run``'s row."""
    from .systems import SYSTEMS

    order = {name: i for i, name in enumerate(SYSTEMS)}
    for name, theirs in other.get("sets", {}).items():
        ours = run["sets"].setdefault(name, {**theirs, "systems": []})
        have = {s["system"] for s in ours["systems"]}
        ours["systems"] = sorted(ours["systems"] + [s for s in theirs["systems"] if s["system"] not in have],
                                 key=lambda s: order.get(s["system"], len(order)))
        ours["failed"] = [f for f in {*ours.get("failed", []), *theirs.get("failed", [])}
                          if f not in {s["system"] for s in ours["systems"]}]
        ours["started"] = min(ours.get("started", "~"), theirs.get("started", "~"))
        ours["finished"] = max(ours.get("finished", ""), theirs.get("finished", ""))
    return run


def _installed(names: list[str], smoke: bool) -> list[str]:
    """``names`` less the systems whose optional package is not installed (said once each)."""
    import importlib.util

    from .systems import OPTIONAL

    keep = []
    for name in names:
        package = OPTIONAL.get(name)
        if package and not smoke and importlib.util.find_spec(package) is None:
            print(f"note: {name} skipped: it needs `pip install {package}`", flush=True)
            continue
        keep.append(name)
    return keep


def cmd_run(args: argparse.Namespace) -> int:
    from .systems import DEFAULT, SYSTEMS

    outdir = Path(args.results_dir)
    (outdir / "results").mkdir(parents=True, exist_ok=True)
    names = args.systems.split(",") if args.systems else list(DEFAULT)
    unknown = set(names) - set(SYSTEMS)
    if unknown:
        raise SystemExit(f"unknown systems {sorted(unknown)}; choose from {', '.join(SYSTEMS)}")
    names = _installed(names, args.smoke)
    paths = _datasets(args)
    started = time.perf_counter()
    run: dict = {"started": _now(), "quick": args.quick, "smoke": args.smoke, "jobs": args.jobs, "sets": {},
                 "versions": versions()}
    out = outdir / "results" / "run.json"
    previous = json.loads(out.read_text()) if out.exists() else {}
    if not (previous.get("sets") and (previous.get("quick"), previous.get("smoke")) == (args.quick, args.smoke)):
        previous = {}
    lock = threading.Lock()
    entries: dict[str, dict] = {}
    for path in paths:
        name = locomo.set_name(path)
        data = _load(str(path), args.quick, args.max_turns)
        entries[name] = {"data": str(path), "note": locomo.SAMPLE_NOTES.get(name, "dev set"), "started": _now(),
                         "of_conversations": len(locomo.load(path)),
                         "conversations": len(data), "turns": len(locomo.turns_of(data)),
                         "questions": len(locomo.questions_of(data)), "systems": []}

    def save() -> None:
        with lock:  # saved after each system: a long run that dies keeps what it measured
            run["finished"], run["wall_s"] = _now(), round(time.perf_counter() - started, 1)
            run["sets"] = json.loads(json.dumps(entries))
            # rows of systems or sets this run did not measure stay, from their own run of the same kind
            _merge(run, previous)
            out.write_text(json.dumps(run, indent=1, default=str))

    def measure(path: Path, system: str, tmp: Path) -> None:
        name = locomo.set_name(path)
        print(f"== {name} / {system}", flush=True)
        extra = ["--quick"] if args.quick else []
        extra += ["--max-turns", str(args.max_turns)] if args.max_turns else []
        extra += ["--smoke"] if args.smoke else []
        extra += ["--no-progress"] if args.no_progress else []
        try:
            result = run_worker(["system", system, "--data", str(path), *extra], tmp / f"{name}-{system}.json",
                                env=SINGLE_THREAD)
        except RuntimeError as exc:  # one system's crash is reported, the others still run
            print(f"== {name} / {system} FAILED: {exc}", flush=True)
            with lock:
                entries[name].setdefault("failed", []).append(system)
            return
        print(f"== {name} / {system} done\n" + _summary(result), flush=True)
        with lock:
            entry = entries[name]
            entry["systems"] = sorted([*entry["systems"], result], key=lambda s: list(SYSTEMS).index(s["system"]))
            entry["malformed_evidence"] = result["rows"][0]["malformed_evidence"]
            entry["finished"] = _now()
        save()

    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        # --jobs N: N worker processes at once (each still measures one system on one set)
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            # in --systems order, each system on every set before the next: a run stopped early has whole rows
            # (--by-set: every system on the first set before the next set: a run stopped early has whole sets)
            order = ([(path, system) for path in paths for system in names] if args.by_set
                     else [(path, system) for system in names for path in paths])
            futures = [pool.submit(measure, path, system, Path(tmp)) for path, system in order]
            for future in futures:
                future.result()
    save()
    from .report import render

    print(f"wrote {render(outdir)}")
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    """Add the rows of another run.json (same code, same kind of run) to this results dir's run."""
    outdir = Path(args.results_dir)
    out = outdir / "results" / "run.json"
    run, other = json.loads(out.read_text()), json.loads(Path(args.other).read_text())
    if (run.get("quick"), run.get("smoke")) != (other.get("quick"), other.get("smoke")):
        raise SystemExit("cannot merge a quick or smoke run with a full one")
    run = _merge(run, other)
    run["merged"] = [*run.get("merged", []), {"from": args.other, "started": other.get("started"),
                                              "finished": other.get("finished"), "jobs": other.get("jobs", 1)}]
    out.write_text(json.dumps(run, indent=1, default=str))
    from .report import render

    print(f"wrote {render(outdir)}")
    return 0


def cmd_system(args: argparse.Namespace) -> int:
    offline_env()
    from .systems import run_system

    code = versions()["agentbase commit"]  # at start: the kernel may change on disk during a long run
    with tempfile.TemporaryDirectory(prefix=f"bench-{args.name}-") as tmp:
        result = run_system(args.name, _load(args.data, args.quick, args.max_turns), Path(tmp),
                            progress=not args.no_progress,
                            smoke=args.smoke)
    result["code"] = code
    Path(args.out).write_text(json.dumps(result, default=str))
    return 0


def _postgres_server(args: argparse.Namespace) -> Any:
    """The server the Postgres rows run on: ``--postgres-url`` (an admin URL; one database per size is
    created on it), else a throwaway PostgreSQL + pgvector with durable settings (tests/postgres/server.py)."""
    if args.postgres_url:
        return None
    from tests.postgres.server import ThrowawayServer

    return ThrowawayServer.start(durable=True)


def row_key(size: int, scopes: int) -> str:
    """The row's key in the results file: the size, with ``xN`` when spread over N scopes."""
    return str(size) if scopes == 1 else f"{size}x{scopes}"


def _size_database(args: argparse.Namespace, server: Any, key: str) -> str:
    name = f"agentbase_scale_{key}"
    if server is not None:
        server.drop_database(name)
        return str(server.create_database(name))
    import psycopg

    with psycopg.connect(args.postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(args.postgres_url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


def cmd_scale(args: argparse.Namespace) -> int:
    outdir = Path(args.results_dir)
    (outdir / "results").mkdir(parents=True, exist_ok=True)
    postgres = args.backend == "postgres"
    path = outdir / "results" / ("scale-postgres.json" if postgres else "scale.json")
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",")]
    if args.searches_only:
        if not (postgres and args.postgres_url):
            raise SystemExit("--searches-only needs --backend postgres and the --postgres-url an earlier run loaded")
        _scale_searches(args, sizes, outdir / "results" / "scale-postgres-searches.json")
        return 0
    server = _postgres_server(args) if postgres else None
    try:
        _scale_sizes(args, sizes, path, server)
    finally:
        if server is not None:
            server.stop()
    from .report import render

    print(f"wrote {render(outdir)}")
    return 0


def _scale_sizes(args: argparse.Namespace, sizes: list[int], path: Path, server: Any) -> None:
    postgres = args.backend == "postgres"
    with tempfile.TemporaryDirectory(prefix="bench-scale-", dir=args.tmp) as tmp:
        for size in sizes:
            print(f"== {size:,} memories ({args.backend})", flush=True)
            extra = ["--queries", str(args.queries)] if args.queries else []
            extra += ["--no-progress"] if args.no_progress else []
            extra += ["--tmp", tmp, "--scopes", str(args.scopes)]
            key = row_key(size, args.scopes)
            if postgres:
                extra += ["--backend", "postgres", "--postgres-url", _size_database(args, server, key)]
            row = run_worker(["scale-one", str(size), *extra], Path(tmp) / f"scale-{key}.json", env=SINGLE_THREAD)
            row["finished"] = _now()
            find = row["search"]["find"]
            print(f"   ingest={row['ingest_per_s']:,.0f}/s file={row['bytes'] / 1e6:,.1f} MB "
                  f"find p50={find['p50_ms']} ms p95={find['p95_ms']} ms", flush=True)
            # re-read before saving: another scale run (say the long 1M one) may have added its size meanwhile;
            # saved after each size, so a long run that dies keeps what it measured
            scale = json.loads(path.read_text()) if path.exists() else {"sizes": {}}
            scale["sizes"][key] = row
            scale["versions"] = versions()
            path.write_text(json.dumps(scale, indent=1, default=str))
            if server is not None:
                server.drop_database(f"agentbase_scale_{key}")


def _scale_searches(args: argparse.Namespace, sizes: list[int], path: Path) -> None:
    """The searches again on databases an earlier ``--postgres-url`` run left, one entry per run appended
    to ``path`` (code commit and time with each)."""
    parts = urlsplit(args.postgres_url)
    with tempfile.TemporaryDirectory(prefix="bench-scale-", dir=args.tmp) as tmp:
        for size in sizes:
            key = row_key(size, args.scopes)
            url = urlunsplit((parts.scheme, parts.netloc, f"/agentbase_scale_{key}", parts.query, ""))
            print(f"== searches on {size:,} memories already loaded (postgres)", flush=True)
            extra = ["--queries", str(args.queries)] if args.queries else []
            extra += ["--no-progress"] if args.no_progress else []
            extra += ["--tmp", tmp, "--scopes", str(args.scopes), "--backend", "postgres", "--postgres-url", url,
                      "--searches-only"]
            row = run_worker(["scale-one", str(size), *extra], Path(tmp) / f"searches-{key}.json", env=SINGLE_THREAD)
            row["key"], row["finished"] = key, _now()
            find = row["search"]["find"]
            print(f"   find p50={find['p50_ms']} ms p95={find['p95_ms']} ms", flush=True)
            runs = json.loads(path.read_text()) if path.exists() else {"runs": []}
            runs["runs"].append(row)
            path.write_text(json.dumps(runs, indent=1, default=str))


def cmd_scale_one(args: argparse.Namespace) -> int:
    offline_env()
    from .scale import run_size, searches_only

    code = versions()["agentbase commit"]
    with tempfile.TemporaryDirectory(prefix="size-", dir=args.tmp) as tmp:
        if args.searches_only:
            row = searches_only(args.size, args.postgres_url, n_queries=args.queries, scopes=args.scopes,
                                progress=not args.no_progress)
        else:
            row = run_size(args.size, Path(tmp), n_queries=args.queries, progress=not args.no_progress,
                           backend=args.backend, url=args.postgres_url, scopes=args.scopes)
    row["code"] = code
    Path(args.out).write_text(json.dumps(row, default=str))
    return 0


def cmd_store_scale(args: argparse.Namespace) -> int:
    outdir = Path(args.results_dir)
    (outdir / "results").mkdir(parents=True, exist_ok=True)
    path = outdir / "results" / "store_scale.json"
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-store-scale-", dir=args.tmp) as tmp:
        # the MiniLM vectors are cached (in --tmp itself when given, so a later run reuses them): a larger
        # size embeds only its new items
        cache = args.tmp or tmp
        for size in sizes:
            print(f"== LangGraph store, {size:,} items", flush=True)
            extra = ["--queries", str(args.queries), "--tmp", tmp, "--cache", cache]
            extra += ["--no-progress"] if args.no_progress else []
            extra += ["--embed-at-most", str(args.embed_at_most)] if args.embed_at_most else []
            extra += ["--load-ner", args.load_ner] if args.load_ner else []
            row = run_worker(["store-scale-one", str(size), *extra], Path(tmp) / f"store-{size}.json",
                             env=SINGLE_THREAD)
            row["finished"] = _now()
            for name in ("InMemoryStore", "AgentBaseStore"):
                s = row[name]["search"]
                print(f"   {name}: load {row[name]['load_s']} s, search p50/p95={s['p50_ms']}/{s['p95_ms']} ms",
                      flush=True)
            doc = json.loads(path.read_text()) if path.exists() else {"sizes": {}}
            doc["sizes"][str(size)] = row
            doc["versions"] = versions()
            path.write_text(json.dumps(doc, indent=1, default=str))
    from .report import render

    print(f"wrote {render(outdir)}")
    return 0


def cmd_store_scale_one(args: argparse.Namespace) -> int:
    offline_env()
    from .store_scale import run_size

    code = versions()["agentbase commit"]
    with tempfile.TemporaryDirectory(prefix="store-", dir=args.tmp) as tmp:
        row = run_size(args.size, Path(tmp), Path(args.cache or tmp), n_queries=args.queries,
                       embed_at_most=args.embed_at_most, load_ner=args.load_ner, progress=not args.no_progress)
    row["code"] = code
    Path(args.out).write_text(json.dumps(row, default=str))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from .report import readme_table, render

    if args.readme_table:
        print(readme_table(Path(args.results_dir)))
        return 0
    print(f"wrote {render(Path(args.results_dir))}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["train-ranker"]:  # its own options (benchmarks/train_ranker.py)
        from .train_ranker import main as train_ranker

        return train_ranker(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, results: bool = True) -> None:
        p.add_argument("--no-progress", action="store_true")
        if results:
            p.add_argument("--results-dir", default=str(ROOT), help="where RESULTS.md, PNGs and results/ go")

    p = sub.add_parser("run", help="quality + speed for every system on the dev sets")
    p.add_argument("--data", action="append", help="a LoCoMo-format file (repeatable); overrides --set")
    p.add_argument("--set", default="all",
                   help="which dev sets: all (default: the six), both (LoCoMo and assistant), or a comma-separated "
                        f"list of {', '.join(locomo.DATASETS)}")
    p.add_argument("--quick", action="store_true",
                   help=f"first conversation and its first {QUICK_QUESTIONS} questions of each set")
    p.add_argument("--systems", help="comma-separated subset (default: every non-ablation system)")
    p.add_argument("--max-turns", type=int,
                   help="per set, only its first whole conversations that add up to at most N turns (a cheaper run; "
                        "the report says how many conversations of how many)")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes at once (default 1: every system measured alone, one after another)")
    p.add_argument("--smoke", action="store_true", help="stand-in embedder and regex NER: for tests, not results")
    p.add_argument("--by-set", action="store_true",
                   help="every system on one set before the next set (default: each system on every set in turn)")
    common(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("system", help="(worker) one system on one dev set, in this process")
    p.add_argument("name")
    p.add_argument("--data", default=str(locomo.DEFAULT_DATA))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--max-turns", type=int)
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--out", required=True)
    common(p, results=False)
    p.set_defaults(func=cmd_system)

    p = sub.add_parser("scale", help="the scaling curve")
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--queries", type=int, help="queries per size (default 200, 50 from 1M)")
    p.add_argument("--tmp", help="directory for the scratch databases (default: the system temp dir)")
    p.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite",
                   help="postgres: the same loads on PostgreSQL + pgvector (results/scale-postgres.json)")
    p.add_argument("--scopes", type=int, default=1,
                   help="spread the memories over this many user scopes (memory i to user i mod N); searches stay in "
                        "one of them (default 1: every search sees every memory)")
    p.add_argument("--postgres-url", help="with --backend postgres: a server to use (a database per size is created "
                                          "and dropped on it); default: a throwaway server started for the run")
    p.add_argument("--searches-only", action="store_true",
                   help="with --postgres-url: time the searches again on the databases an earlier run there loaded "
                        "(appended to results/scale-postgres-searches.json), to compare code on the same rows")
    common(p)
    p.set_defaults(func=cmd_scale)

    p = sub.add_parser("scale-one", help="(worker) one size, in this process")
    p.add_argument("size", type=int)
    p.add_argument("--queries", type=int)
    p.add_argument("--tmp")
    p.add_argument("--out", required=True)
    p.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--postgres-url", help="the (empty) database to fill, with --backend postgres")
    p.add_argument("--scopes", type=int, default=1)
    p.add_argument("--searches-only", action="store_true", help="search the database --postgres-url already holds")
    common(p, results=False)
    p.set_defaults(func=cmd_scale_one)

    p = sub.add_parser("store-scale", help="LangGraph store search: AgentBaseStore vs InMemoryStore, same MiniLM")
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--queries", type=int, default=100, help="timed searches per store and size (default 100)")
    p.add_argument("--tmp", help="directory for the scratch databases; the MiniLM vector cache stays there for "
                                 "later runs (default: a system temp dir, removed after the run)")
    p.add_argument("--embed-at-most", type=int,
                   help="embed only the first N texts; later items reuse vector i mod N (latency only)")
    p.add_argument("--load-ner", help="NER stage while loading AgentBaseStore (e.g. regex); searched with the default")
    common(p)
    p.set_defaults(func=cmd_store_scale)

    p = sub.add_parser("store-scale-one", help="(worker) one size, in this process")
    p.add_argument("size", type=int)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--tmp")
    p.add_argument("--embed-at-most", type=int)
    p.add_argument("--cache", help="directory of the MiniLM vector cache")
    p.add_argument("--load-ner")
    p.add_argument("--out", required=True)
    common(p, results=False)
    p.set_defaults(func=cmd_store_scale_one)

    p = sub.add_parser("merge", help="add another run.json's rows (systems or sets this run lacks) and re-render")
    p.add_argument("other")
    common(p)
    p.set_defaults(func=cmd_merge)

    sub.add_parser("train-ranker", help="train the learned ranker and the score calibration (--help for its options)")

    p = sub.add_parser("report", help="re-render RESULTS.md and the charts from results/*.json")
    p.add_argument("--readme-table", action="store_true", help="print the README's results table instead")
    common(p)
    p.set_defaults(func=cmd_report)

    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
