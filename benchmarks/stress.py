"""The long reliability run: the bounded tests of ``tests/reliability`` at full size.

    python -m benchmarks.stress                 # 8 writers x 1,000, 100 SIGKILLs, 150 examples per property
    python -m benchmarks.stress --quick         # a smoke run of the same code paths

1. every hypothesis property of ``tests/reliability`` (hostile input through the kernel, the five
   adapters and the OpenAI server; isolation; poisoning; the no-network workout) with many more
   examples, in a pytest subprocess that writes its tally;
2. 8 spawned writers x 1,000 writes rotating through every adapter, plus readers, on one file;
3. 100 SIGKILLs of a bulk-ingesting writer, checking the file after each.

Prints one JSON object with the figures ``docs/reliability.md`` quotes; exits 1 if anything failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_properties(examples: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tally = Path(tmp) / "tally.json"
        env = {**os.environ, "AGENTBASE_RELIABILITY_EXAMPLES": str(examples), "AGENTBASE_RELIABILITY_TALLY": str(tally)}
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/reliability",
             "-k", "not concurrency and not sigkill"], cwd=ROOT, env=env, capture_output=True, text=True)
        figures = json.loads(tally.read_text()) if tally.exists() else {}
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    return {"ok": proc.returncode == 0, "pytest": summary, "seconds": round(time.monotonic() - started), **figures}


def run_concurrency(writers: int, writes: int) -> dict:
    from tests.reliability.test_concurrency import run_workload

    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        try:
            figures = run_workload(Path(tmp) / "stress.db", writers, writes, readers=2, shared=50, read_seconds=60.0)
            ok, error = True, None
        except AssertionError as exc:
            figures, ok, error = {}, False, str(exc)[:500]
    return {"ok": ok, "error": error, "writers": writers, "writes_per_writer": writes, **figures,
            "seconds": round(time.monotonic() - started)}


def run_crashes(kills: int, seed: int) -> dict:
    from tests.conftest import HashEmbedder
    from tests.reliability.test_crash_safety import kill_and_check

    rng = random.Random(seed)
    started = time.monotonic()
    survived, acked, error = 0, 0, None
    with tempfile.TemporaryDirectory() as tmp:
        path, ack = Path(tmp) / "crash.db", Path(tmp) / "ack.txt"
        for i in range(kills):
            try:
                acked += kill_and_check(path, ack, ("memories", "messages")[i % 2], i * 1_000_000, rng, HashEmbedder())
                survived += 1
            except AssertionError as exc:
                error = f"kill {i}: {str(exc)[:500]}"
                break
    return {"ok": error is None, "error": error, "kills": kills, "kills_survived": survived,
            "acked_writes_checked": acked, "seconds": round(time.monotonic() - started)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--out", type=Path, help="also write the JSON figures here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    import tests.conftest  # noqa: F401 - sets the offline environment the workers inherit

    size = {"examples": 20, "writers": 4, "writes": 70, "kills": 5} if args.quick else \
        {"examples": 150, "writers": 8, "writes": 1000, "kills": 100}
    report = {"size": size, "properties": run_properties(size["examples"]),
              "concurrency": run_concurrency(size["writers"], size["writes"]),
              "crashes": run_crashes(size["kills"], args.seed)}
    report["ok"] = all(part["ok"] for part in (report["properties"], report["concurrency"], report["crashes"]))
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
