"""Export / import throughput and peak memory (docs/export-format.md, "Figures").

    python benchmarks/portable_export_import.py all 10000 /tmp/portable    # populate, export, import
    TRACE=1 python benchmarks/portable_export_import.py all 10000 /tmp/portable   # + tracemalloc heap

N entries in 50 users (plus two messages per 100 entries, ingested as turns) are written with a
384-dimension stand-in embedder (no model time counted), then exported and imported, each step in
a fresh process so its peak RSS (VmHWM) is its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from agentbase_kernel import Embedder, Kernel


class Fake384(Embedder):
    """Deterministic unit vectors of the MiniLM size, so vectors weigh what real ones weigh."""

    name = "bench-hash-384"
    dim = 384

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), 384), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


def populate(path: Path, n: int) -> None:
    with Kernel(path, embedder=Fake384(), ner=None) as k:
        items = [{"text": f"Memory number {i}: user {i % 50} likes topic {i * 7 % 997} and city {i % 131}",
                  "user_id": f"u{i % 50}", "metadata": {"i": i, "tag": f"t{i % 10}"}} for i in range(n)]
        for j in range(0, n, 2000):
            k.add_memories(items[j:j + 2000])
        for s in range(n // 100):
            k.add_messages(f"s{s}", [{"role": "user", "content": f"hello {s} I live in city {s % 131}"},
                                     {"role": "assistant", "content": f"noted {s}"}], user_id=f"u{s % 50}")


def measure(mode: str, src: str, out: str, target: str) -> None:
    traced = os.environ.get("TRACE") == "1"
    if traced:
        tracemalloc.start()
    start = time.perf_counter()
    if mode == "export":
        with Kernel(src, embedder=Fake384(), ner=None) as k:
            n = k.export(out)["entry"]
    else:
        with Kernel(target, embedder=Fake384(), ner=None) as k:
            n = k.import_(out)["by_type"]["entry"]["inserted"]
    seconds = time.perf_counter() - start
    with open("/proc/self/status") as status:  # ru_maxrss would carry the parent's peak across exec
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
    print(json.dumps({"mode": mode, "entries": n, "seconds": round(seconds, 2), "entries_per_s": round(n / seconds),
                      "peak_rss_mb": round(rss, 1),
                      "peak_heap_mb": round(tracemalloc.get_traced_memory()[1] / 2**20, 1) if traced else None,
                      "file_mb": round(os.path.getsize(out) / 2**20, 1)}))


def main() -> None:
    if sys.argv[1] != "all":
        measure(*sys.argv[1:5])
        return
    n, folder = int(sys.argv[2]), Path(sys.argv[3])
    folder.mkdir(parents=True, exist_ok=True)
    src, out, target = folder / f"src{n}.db", folder / f"export{n}.jsonl", folder / f"target{n}.db"
    for path in (src, out, target):
        path.unlink(missing_ok=True)
    start = time.perf_counter()
    populate(src, n)
    print(f"populated {n} entries in {time.perf_counter() - start:.1f} s")
    target.unlink(missing_ok=True)
    for mode in ("export", "import"):
        subprocess.run([sys.executable, __file__, mode, str(src), str(out), str(target)], check=True)


if __name__ == "__main__":
    main()
