"""Ingest speed on LoCoMo: turns/s for store only, + NER, + NER + embeddings, and peak memory.

Usage::

    python -m benchmarks.ingest [DATA_FILE]

Each mode runs in its own process (so peak RSS is its own) and ingests every conversation
through the public session API, one ``add_messages`` call (one transaction) per session.

The deferred mode embeds in a background thread (``Ingestor.defer_embedding``): its "turns/s" is
when the last ``add_messages`` returned (every turn stored and searchable by full text and
entities), "embedded turns/s" is when the last vector was written. "turns per caller CPU-s"
divides by the CPU time of the thread that called ``add_messages``: on a shared machine it is
steadier than wall time, and it is what a caller would get with a core of its own. "texts
embedded/turn" counts what the embedder was given (turns, derived facts), to show the ingest
path embeds each new text once.
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

from benchmarks.locomo import DEFAULT_DATA, load, sessions_of, turn_text

MODES = {
    "store only": {"embedder": None, "ner": None, "ingest": {"ner": False, "facts": False, "dates": False}},
    "+ NER (+ dates, facts)": {"embedder": None, "ner": "auto", "ingest": {}},
    "+ NER + embeddings": {"embedder": "auto", "ner": "auto", "ingest": {}},
    "+ NER + embeddings, deferred": {"embedder": "auto", "ner": "auto", "ingest": {}, "defer": True},
}


def run_mode(name: str, data_file: str) -> dict[str, float]:
    """Ingest in this process and report turns/s and peak RSS."""
    from agentbase_kernel import Config, Kernel
    from agentbase_kernel.text.dates import parse_datetime

    spec = MODES[name]
    data = load(Path(data_file))
    config = Config().with_(ingest=spec["ingest"]) if spec["ingest"] else Config()
    path = Path(tempfile.mkdtemp()) / "ingest.db"
    with Kernel(path, embedder=spec["embedder"], ner=spec["ner"], config=config) as kernel:
        kernel.initialize()
        if kernel.embedder is not None:
            kernel.embedder.embed_batch(["warm up the model"] * 8)
        kernel.ingestor.defer_embedding = bool(spec.get("defer"))
        turns = 0
        started = time.perf_counter()
        cpu_started = time.thread_time()
        for conv in data:
            for n, when, session in sessions_of(conv["conversation"]):
                sid = f"{conv['sample_id']}:s{n}"
                kernel.create_session(sid, user_id=conv["sample_id"])
                messages = [{"role": "user", "name": t.get("speaker"), "content": turn_text(t),
                             "metadata": {"dia_id": t.get("dia_id")}, "created_at": parse_datetime(when)}
                            for t in session if turn_text(t)]
                kernel.add_messages(sid, messages)
                turns += len(messages)
        seconds = time.perf_counter() - started
        caller_cpu = time.thread_time() - cpu_started
        assert kernel.ingestor.wait_embedded(), kernel.ingestor.embed_error
        embedded_seconds = time.perf_counter() - started
        kernel.ingestor.close()
        texts_embedded = kernel.ingestor.texts_embedded
        without_vector = kernel.verify()["texts_without_vector"]
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob("ingest.db-*"))
    return {"turns": turns, "seconds": round(seconds, 2), "turns_per_s": round(turns / seconds, 1),
            "embedded_turns_per_s": round(turns / embedded_seconds, 1) if texts_embedded else None,
            "texts_embedded_per_turn": round(texts_embedded / max(turns, 1), 2),
            "turns_per_caller_cpu_s": round(turns / caller_cpu, 1),
            "texts_without_vector": without_vector if texts_embedded else None,
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
    print("| mode | turns | seconds | turns/s | embedded turns/s | turns per caller CPU-s | texts embedded/turn "
          "| peak RSS MiB | bytes/turn | load (1 min) |\n|---|---|---|---|---|---|---|---|---|---|")
    for name in modes:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.ingest", args.data, "--mode", name],
                              capture_output=True, text=True, env=env, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"| {name} | {row['turns']} | {row['seconds']} | {row['turns_per_s']} | "
              f"{row['embedded_turns_per_s'] or '-'} | {row['turns_per_caller_cpu_s']} | {row['texts_embedded_per_turn']} | "
              f"{row['peak_rss_mib']} | "
              f"{row['bytes_per_turn']} | {row['load_1min']} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
