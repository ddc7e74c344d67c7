"""find p50 at SIZE memories, old code against new code, paired in one run (docs/house.md).

    python tools/house/find_pair.py OLD_TREE NEW_TREE sqlite|postgres OUT [SIZE] [QUERIES] [--from FILE]

Each tree loads the same seeded synthetic memories (benchmarks/synthetic.py, one user scope, regex NER,
the deterministic ProjectionEmbedder, batches of 2,000 inside bulk_load - as benchmarks/scale.py does)
into its own file/database with its own code; then both keep their kernel open in a worker process and
the driver alternates blocks of 10 queries between them (which one goes first alternates too), so
both see the same machine load. Reports ingest time, find p50/p95 for each (wall and the worker's
process CPU), the ratios, and whether both return the same top-10 texts, and the same scores, for each
query (OUT/report.json). ``--from FILE`` (SQLite) copies a file an earlier load wrote (e.g. OUT/old.db
of a run on the same SIZE) to both places instead of loading twice: the two trees then search the
same rows, so only code that reads the same schema can be paired this way.
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def worker(tree: str, backend: str, where: str, size: int, n_queries: int) -> None:
    sys.path.insert(0, tree)
    import agentbase_kernel
    from agentbase_kernel import Config, Kernel
    from benchmarks import synthetic
    from benchmarks.common import SEED, ProjectionEmbedder

    assert agentbase_kernel.__file__.startswith(tree), agentbase_kernel.__file__
    embedder, config = ProjectionEmbedder(), Config()
    qs = synthetic.queries(n_queries, SEED + 1)
    kernel = None

    def say(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "load":
            items = iter(synthetic.memories(size, SEED))
            t_all = time.perf_counter()
            ingest = 0.0
            with Kernel(where, embedder=embedder, ner="regex", config=config) as k:
                with k.bulk_load():
                    while True:
                        chunk = [item for _, item in zip(range(2000), items)]
                        if not chunk:
                            break
                        t0 = time.perf_counter()
                        k.add_memories(chunk)
                        ingest += time.perf_counter() - t0
                stored = k.count(user_id="u0")
            say({"ingest_s": round(ingest, 1), "load_s": round(time.perf_counter() - t_all, 1), "stored": stored})
        elif cmd[0] == "open":
            kernel = Kernel(where, embedder=embedder, ner="regex", config=config).__enter__()
            t0 = time.perf_counter()
            kernel.find(qs[0], top_k=10, user_id="u0")
            say({"first_find_ms": round((time.perf_counter() - t0) * 1000, 1)})
        elif cmd[0] == "find":
            i, j = int(cmd[1]), int(cmd[2])
            ms, cpu, tops, scores = [], [], [], []
            for q in qs[i:j]:
                c0, t0 = time.process_time(), time.perf_counter()
                hits = kernel.find(q, top_k=10, user_id="u0")
                ms.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
                tops.append([h.entry.l2_full for h in hits])
                scores.append([[h.score, h.similarity] for h in hits])
            say({"ms": ms, "cpu": cpu, "tops": tops, "scores": scores})
        elif cmd[0] == "quit":
            if kernel is not None:
                kernel.__exit__(None, None, None)
            say({"bye": True})
            return


def pct(xs, p):
    s = sorted(xs)
    k = (len(s) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def main() -> None:
    argv = sys.argv[1:]
    source = None
    if "--from" in argv:
        at = argv.index("--from")
        source = argv[at + 1]
        del argv[at : at + 2]
    old, new, backend, out = argv[:4]
    size = int(argv[4]) if len(argv) > 4 else 100_000
    n_queries = int(argv[5]) if len(argv) > 5 else 200
    if source is not None and backend != "sqlite":
        raise SystemExit("--from copies a SQLite file")
    work = Path(out)
    work.mkdir(parents=True, exist_ok=True)
    server = None
    if backend == "postgres":
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from tests.postgres.server import ThrowawayServer
        server = ThrowawayServer.start(durable=True)
        places = {"old": server.create_database(), "new": server.create_database()}
    else:
        places = {name: str(work / f"{name}.db") for name in ("old", "new")}
        for p in places.values():
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(p + suffix):
                    os.remove(p + suffix)
            if source is not None:
                shutil.copyfile(source, p)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    procs = {}
    trees = {"old": old, "new": new}
    try:
        for name in ("old", "new"):
            procs[name] = subprocess.Popen(
                [sys.executable, __file__, "worker", trees[name], backend, places[name], str(size), str(n_queries)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/tmp", env=env)

        def ask(name, cmd):
            procs[name].stdin.write(cmd + "\n")
            procs[name].stdin.flush()
            return json.loads(procs[name].stdout.readline())

        report = {"size": size, "queries": n_queries, "backend": backend, "trees": trees, "started": time.strftime("%H:%M:%S")}
        for name in ("old", "new"):  # one load at a time, so neither loads beside the other
            report[f"{name}_load"] = ask(name, "load") if source is None else {"copied_from": source}
            print(name, report[f"{name}_load"], flush=True)
        for name in ("old", "new"):
            report[f"{name}_open"] = ask(name, "open")
        ms = {"old": [], "new": []}
        cpu = {"old": [], "new": []}
        tops = {"old": [], "new": []}
        scores = {"old": [], "new": []}
        for b, i in enumerate(range(0, n_queries, 10)):
            order = ("old", "new") if b % 2 == 0 else ("new", "old")
            for name in order:
                got = ask(name, f"find {i} {i + 10}")
                ms[name].extend(got["ms"])
                cpu[name].extend(got["cpu"])
                tops[name].extend(got["tops"])
                scores[name].extend(got["scores"])
        for name in ("old", "new"):
            ask(name, "quit")
        for name in ("old", "new"):
            report[f"{name}_find"] = {"p50": round(pct(ms[name], 0.5), 2), "p95": round(pct(ms[name], 0.95), 2),
                                      "mean": round(sum(ms[name]) / len(ms[name]), 2)}
            report[f"{name}_find_cpu"] = {"p50": round(pct(cpu[name], 0.5), 2), "p95": round(pct(cpu[name], 0.95), 2),
                                          "mean": round(sum(cpu[name]) / len(cpu[name]), 2)}
        for what in ("find", "find_cpu"):
            for p in ("p50", "p95"):
                report[f"{what}_{p}_ratio_new_over_old"] = round(
                    report[f"new_{what}"][p] / report[f"old_{what}"][p], 3)
        report["p50_ratio_new_over_old"] = report["find_p50_ratio_new_over_old"]
        report["same_top10"] = sum(a == b for a, b in zip(tops["old"], tops["new"]))
        report["same_scores"] = sum(a == b for a, b in zip(scores["old"], scores["new"]))
        report["finished"] = time.strftime("%H:%M:%S")
        print(json.dumps(report, indent=1))
        (work / "report.json").write_text(json.dumps(report, indent=1))
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        if server is not None:
            server.stop()


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    else:
        main()
