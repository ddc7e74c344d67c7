"""Ingest speed on LoCoMo: turns/s for store only, + NER, + NER + embeddings, and peak memory.

Usage::

    python -m benchmarks.ingest [DATA_FILE]

Each mode runs in its own process (so peak RSS is its own) and ingests every conversation
through the public session API, one ``add_messages`` call (one transaction) per session.
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
        turns = 0
        started = time.perf_counter()
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
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob("ingest.db-*"))
    return {"turns": turns, "seconds": round(seconds, 2), "turns_per_s": round(turns / seconds, 1),
            "peak_rss_mib": round(peak_mib, 1), "bytes_per_turn": round(size / max(turns, 1))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--mode", choices=list(MODES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.mode:
        print(json.dumps(run_mode(args.mode, args.data)))
        return 0
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    print(f"| mode | turns | seconds | turns/s | peak RSS MiB | bytes/turn |\n|---|---|---|---|---|---|")
    for name in MODES:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.ingest", args.data, "--mode", name],
                              capture_output=True, text=True, env=env, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"| {name} | {row['turns']} | {row['seconds']} | {row['turns_per_s']} | {row['peak_rss_mib']} | "
              f"{row['bytes_per_turn']} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
