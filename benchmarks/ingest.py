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

"embedder alone" is the floor the others are read against: the kernel's default embedder given the
same texts, one session at a time, in the runs the ingest itself makes (shortest first, 64 at a
time), and nothing else. ``ingest / embedder`` in the table is each mode's turns/s (the deferred
mode: embedded turns/s) over that rate, from the same invocation. ``--max-turns N`` keeps the
first whole conversations up to N turns (long sets such as BEAM-100K).
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
from typing import Any

from benchmarks.kernel_paths import session_ingest
from benchmarks.locomo import DEFAULT_DATA, chunks, load, turns_of

EMBEDDER_ALONE = "embedder alone"
EMBED_BATCH = 64  # the ingest pipeline's own run length
MODES: dict[str, dict[str, Any]] = {
    "store only": {"embedder": None, "ner": None, "ingest": {"ner": False, "facts": False, "dates": False}},
    "+ NER (+ dates, facts)": {"embedder": None, "ner": "auto", "ingest": {}},
    "+ NER + embeddings": {"embedder": "auto", "ner": "auto", "ingest": {}},
    "+ NER + embeddings, deferred": {"embedder": "auto", "ner": "auto", "ingest": {}, "defer": True},
    "+ NER + embeddings, facts from user turns": {"embedder": "auto", "ner": "auto", "ingest": {"facts_from": "user"}},
    "+ NER + embeddings, deferred, facts from user turns": {"embedder": "auto", "ner": "auto",
                                                           "ingest": {"facts_from": "user"}, "defer": True},
    EMBEDDER_ALONE: {"embedder": "auto"},
}


def _sessions(data_file: str, max_turns: int | None) -> list[list[Any]]:
    data = load(Path(data_file))
    if max_turns:
        kept, total = [], 0
        for conv in data:
            n = len(turns_of([conv]))
            if kept and total + n > max_turns:
                break
            kept.append(conv)
            total += n
        data = kept
    return list(chunks(turns_of(data), "session"))


def embed_only(sessions: list[list[Any]]) -> dict[str, Any]:
    """The default embedder alone on the same texts, per session, sorted and in runs of 64 as the ingest does."""
    from agentbase_kernel.text.embedders import default_embedder

    embedder = default_embedder()
    assert embedder is not None, "no default embedder installed"
    embedder.embed_batch(["warm up the model"])
    turns = 0
    started = time.perf_counter()
    cpu_started, process_started = time.thread_time(), time.process_time()
    for session in sessions:
        texts = sorted({t.memory for t in session}, key=len)
        for i in range(0, len(texts), EMBED_BATCH):
            embedder.embed_batch(texts[i:i + EMBED_BATCH])
        turns += len(session)
    seconds = time.perf_counter() - started
    caller_cpu = time.thread_time() - cpu_started
    process_cpu = time.process_time() - process_started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"turns": turns, "seconds": round(seconds, 2), "turns_per_s": round(turns / seconds, 1),
            "embedded_turns_per_s": round(turns / seconds, 1), "turns_per_caller_cpu_s": round(turns / caller_cpu, 1),
            "turns_per_process_cpu_s": round(turns / process_cpu, 1),
            "texts_without_vector": None, "texts_embedded": turns, "peak_rss_mib": round(peak_mib, 1), "bytes_per_turn": 0,
            "load_1min": round(os.getloadavg()[0], 2), "embedder": embedder.name}


def run_mode(name: str, data_file: str, max_turns: int | None = None) -> dict[str, Any]:
    """Ingest in this process and report turns/s and peak RSS."""
    from agentbase_kernel import Config, Kernel

    spec = MODES[name]
    sessions = _sessions(data_file, max_turns)
    if name == EMBEDDER_ALONE:
        return embed_only(sessions)
    config = Config().with_(ingest={**spec["ingest"], "defer_embedding": bool(spec.get("defer"))})
    path = Path(tempfile.mkdtemp()) / "ingest.db"
    with Kernel(path, embedder=spec["embedder"], ner=spec["ner"], config=config) as kernel:
        kernel.find("warm up the model", user_id="warm-up")
        turns = 0
        started = time.perf_counter()
        cpu_started, process_started = time.thread_time(), time.process_time()
        for session in sessions:
            session_ingest(kernel, session)
            turns += len(session)
        seconds = time.perf_counter() - started
        caller_cpu = time.thread_time() - cpu_started
        assert kernel.wait_embedded(), "the background embedder stopped before every vector was stored"
        embedded_seconds = time.perf_counter() - started
        process_cpu = time.process_time() - process_started
        without_vector = kernel.verify()["texts_without_vector"]
        embedded_texts = kernel.ingestor.texts_embedded if spec["embedder"] else None
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob("ingest.db-*"))
    return {"turns": turns, "seconds": round(seconds, 2), "turns_per_s": round(turns / seconds, 1),
            "embedded_turns_per_s": round(turns / embedded_seconds, 1) if spec["embedder"] else None,
            "turns_per_caller_cpu_s": round(turns / caller_cpu, 1),
            "turns_per_process_cpu_s": round(turns / process_cpu, 1),
            "texts_without_vector": without_vector if spec["embedder"] else None, "texts_embedded": embedded_texts,
            "peak_rss_mib": round(peak_mib, 1), "bytes_per_turn": round(size / max(turns, 1)),
            "load_1min": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--mode", choices=list(MODES), help=argparse.SUPPRESS)
    parser.add_argument("--only", dest="modes", action="append", choices=list(MODES),
                        help="run only this mode (repeatable)")
    parser.add_argument("--max-turns", type=int, help="the first whole conversations up to N turns")
    args = parser.parse_args(argv)
    if args.mode:
        print(json.dumps(run_mode(args.mode, args.data, args.max_turns)))
        return 0
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    modes = args.modes or list(MODES)
    # the floor first, so every other row can be read against it
    modes = sorted(modes, key=lambda m: m != EMBEDDER_ALONE)
    extra = ["--max-turns", str(args.max_turns)] if args.max_turns else []
    print("| mode | turns | seconds | turns/s | embedded turns/s | ingest / embedder | turns per caller CPU-s "
          "| turns per process CPU-s | ingest / embedder, CPU | texts embedded | peak RSS MiB | bytes/turn "
          "| load (1 min) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    floor: float | None = None
    cpu_floor: float | None = None
    for name in modes:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.ingest", args.data, "--mode", name, *extra],
                              capture_output=True, text=True, env=env, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        if name == EMBEDDER_ALONE:
            floor, cpu_floor = row["turns_per_s"], row["turns_per_process_cpu_s"]
        rate = row["embedded_turns_per_s"] if MODES[name].get("defer") else row["turns_per_s"]
        ratio = f"{rate / floor:.2f}x" if floor and MODES[name].get("embedder") else "-"
        cpu_ratio = (f"{row['turns_per_process_cpu_s'] / cpu_floor:.2f}x" if cpu_floor and MODES[name].get("embedder")
                     else "-")
        print(f"| {name} | {row['turns']} | {row['seconds']} | {row['turns_per_s']} | "
              f"{row['embedded_turns_per_s'] or '-'} | {ratio} | {row['turns_per_caller_cpu_s']} | "
              f"{row['turns_per_process_cpu_s']} | {cpu_ratio} | {row.get('texts_embedded') or '-'} | "
              f"{row['peak_rss_mib']} | "
              f"{row['bytes_per_turn']} | {row['load_1min']} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
