"""Ingest speed on LoCoMo: turns/s for store only, + NER, + NER + embeddings, and peak memory.

Usage::

    python -m benchmarks.ingest [DATA_FILE]

Each mode runs in its own process (so peak RSS is its own) and ingests every conversation
through the public session API, one ``add_messages`` call (one transaction) per session, with the
memory text every system of ``python -m benchmarks run`` is given.

The deferred mode embeds in a background thread (``Ingestor.defer_embedding``): its "turns/s" is
when the last ``add_messages`` returned (every turn stored and searchable by full text and
entities), "embedded turns/s" is when the last vector was written. "turns per caller CPU-s"
divides by the CPU time of the thread that called ``add_messages``: on a shared machine it is
steadier than wall time, and it is what a caller would get with a core of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.kernel_paths import session_ingest
from benchmarks.locomo import DEFAULT_DATA, chunks, load, turns_of

MODES = {
    "store only": {"embedder": None, "ner": None, "ingest": {"ner": False, "facts": False, "dates": False}},
    "+ NER (+ dates, facts)": {"embedder": None, "ner": "auto", "ingest": {}},
    "+ NER + embeddings": {"embedder": "auto", "ner": "auto", "ingest": {}},
    "+ NER + embeddings, deferred": {"embedder": "auto", "ner": "auto", "ingest": {}, "defer": True},
}


def run_mode(name: str, data_file: str) -> dict[str, float]:
    """Ingest in this process and report turns/s and peak RSS."""
    from agentbase_kernel import Config, Kernel

    spec = MODES[name]
    sessions = list(chunks(turns_of(load(Path(data_file))), "session"))
    config = Config().with_(ingest={**spec["ingest"], "defer_embedding": bool(spec.get("defer"))})
    path = Path(tempfile.mkdtemp()) / "ingest.db"
    with Kernel(path, embedder=spec["embedder"], ner=spec["ner"], config=config) as kernel:
        kernel.find("warm up the model", user_id="warm-up")
        turns = 0
        started = time.perf_counter()
        cpu_started = time.thread_time()
        for session in sessions:
            session_ingest(kernel, session)
            turns += len(session)
        seconds = time.perf_counter() - started
        caller_cpu = time.thread_time() - cpu_started
        assert kernel.wait_embedded(), "the background embedder stopped before every vector was stored"
        embedded_seconds = time.perf_counter() - started
        without_vector = kernel.verify()["texts_without_vector"]
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob("ingest.db-*"))
    return {"turns": turns, "seconds": round(seconds, 2), "turns_per_s": round(turns / seconds, 1),
            "embedded_turns_per_s": round(turns / embedded_seconds, 1) if spec["embedder"] else None,
            "turns_per_caller_cpu_s": round(turns / caller_cpu, 1),
            "texts_without_vector": without_vector if spec["embedder"] else None,
            "peak_rss_mib": round(peak_mib, 1), "bytes_per_turn": round(size / max(turns, 1)),
            "load_1min": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--mode", choices=list(MODES), help=argparse.SUPPRESS)
    parser.add_argument("--only", dest="modes", action="append", choices=list(MODES),
                        help="run only this mode (repeatable)")
    args = parser.parse_args(argv)
    if args.mode:
        print(json.dumps(run_mode(args.mode, args.data)))
        return 0
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    modes = args.modes or list(MODES)
    print("| mode | turns | seconds | turns/s | embedded turns/s | turns per caller CPU-s "
          "| peak RSS MiB | bytes/turn | load (1 min) |\n|---|---|---|---|---|---|---|---|---|")
    for name in modes:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.ingest", args.data, "--mode", name],
                              capture_output=True, text=True, env=env, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"| {name} | {row['turns']} | {row['seconds']} | {row['turns_per_s']} | "
              f"{row['embedded_turns_per_s'] or '-'} | {row['turns_per_caller_cpu_s']} | "
              f"{row['peak_rss_mib']} | "
              f"{row['bytes_per_turn']} | {row['load_1min']} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
