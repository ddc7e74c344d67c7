"""find p50/p95 with no tracer provider vs an SDK provider (in-memory exporter), on one LoCoMo conversation.

The two modes alternate per query (order flipped each round) so machine noise hits both alike.
Run: ``python benchmarks/otel_find_overhead.py`` (needs the ``otel`` extra and opentelemetry-sdk).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentbase_kernel import Kernel

LOCOMO = Path("/work/shared/data/locomo_dev.json")


def _conversation() -> tuple[list[dict[str, str]], list[str]]:
    conv = json.loads(LOCOMO.read_text())[0]
    sessions = conv["conversation"]
    turns = [{"role": "user", "content": t["text"], "name": t["speaker"]}
             for key in sorted(k for k in sessions if k.startswith("session_") and not k.endswith("date_time"))
             for t in sessions[key]]
    return turns, [q["question"] for q in conv["qa"]][:60]


def main() -> None:
    turns, questions = _conversation()
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    times: dict[str, list[float]] = {"off": [], "sdk": []}
    with tempfile.TemporaryDirectory() as tmp, Kernel(Path(tmp) / "bench.db", embedder="minilm", ner="auto") as k:
        k.add_messages("s", turns, user_id="u")
        k.wait_embedded()
        for q in questions[:10]:
            k.find(q, user_id="u")  # warm up
        for rnd in range(3):
            for q in questions:
                for mode in ("off", "sdk") if rnd % 2 == 0 else ("sdk", "off"):
                    # the API's global, swapped directly: set_tracer_provider() may run only once
                    trace_api._TRACER_PROVIDER = provider if mode == "sdk" else None  # type: ignore[attr-defined]
                    t = time.perf_counter()
                    k.find(q, user_id="u")
                    times[mode].append((time.perf_counter() - t) * 1000)
                    memory.clear()
        trace_api._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    print(f"entries={len(turns)} finds/mode={len(times['off'])}")
    for mode, xs in times.items():
        xs.sort()
        print(f"{mode}: p50={statistics.median(xs):.2f} ms p95={xs[int(0.95 * len(xs)) - 1]:.2f} ms")
    print(f"ratio p50 sdk/off = {statistics.median(times['sdk']) / statistics.median(times['off']):.3f}")


if __name__ == "__main__":
    main()
