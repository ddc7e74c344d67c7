"""Writing texts the scope already holds, in one tree: seconds for N new texts, the same N again, and 50
single ``add_memory`` calls of held texts (spaCy NER, the packaged MiniLM; docs/house.md).

    python tools/house/duplicate_writes.py TREE [N]     # run it for each tree, in turn
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

if __name__ == "__main__":
    tree = os.path.abspath(sys.argv[1])
    sys.path.insert(0, tree)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import agentbase_kernel
    from agentbase_kernel import Kernel
    from benchmarks import synthetic

    assert agentbase_kernel.__file__ is not None and agentbase_kernel.__file__.startswith(tree)
    items = [{**m, "user_id": "u"} for m in synthetic.memories(int(sys.argv[2]) if len(sys.argv) > 2 else 300, 7)]
    with Kernel(os.path.join(tempfile.mkdtemp(), "d.db")) as kernel:
        kernel.add_memories(items[:5])  # models loaded before the clock starts
        t0 = time.perf_counter()
        kernel.add_memories(items)
        t1 = time.perf_counter()
        again = kernel.add_memories(items)
        t2 = time.perf_counter()
        for item in items[:50]:
            kernel.add_memory(item["text"], user_id="u")
        t3 = time.perf_counter()
    print(f"{tree}: {len(items)} new {t1 - t0:.2f} s; the same again {t2 - t1:.2f} s "
          f"(events {sorted({r.event for r in again})}); 50 single add_memory of held texts {t3 - t2:.2f} s")
