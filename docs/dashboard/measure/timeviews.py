"""p50 server time of each dashboard view on the 100k file: cache off (cold) and on (warm).

The machine is shared (load average printed), so each cold figure is also given as a ratio to
a bare ``kernel.list(limit=None)`` of the whole file timed in the same run.
"""
import os
import statistics
import sys
import time

from starlette.testclient import TestClient

from agentbase_adapters.web import create_app
from agentbase_kernel import Kernel

path = sys.argv[1]
reps_cold = int(sys.argv[2]) if len(sys.argv) > 2 else 3
with Kernel(path, embedder=None, ner="regex", create=False) as k:
    entry = k.list(limit=1, offset=5000)[0].id
    upd = k.list(limit=1, offset=1500)[0].id
    trace = k.trace_session(limit=1)[0]["id"]
    views = ["/", "/timeline", "/heatmap", "/sunburst", "/freshness", "/tags", "/activity", "/memories",
             "/memories?page=200", "/memories?q=green+tea+Alice", f"/memories/{entry}", "/traces",
             f"/traces/{trace}", f"/traces/{trace}?replay=1", "/entities", "/sessions", "/sessions/bench-session",
             "/timeline?user_id=user3"]
    print(f"entries: {k.count(include_invalid=True, include_expired=True)}; file {os.path.getsize(path) >> 20} MiB;"
          f" load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    bare = []
    for label, cache, reps in (("warm (cache on, after one load)", 3600, 5), ("cold (cache off)", 0, reps_cold)):
        app = create_app(k, cache_seconds=cache)
        c = TestClient(app, base_url="http://127.0.0.1:8080", client=("127.0.0.1", 1))
        if cache:
            c.get("/")
            for v in views:
                c.get(v)
        print(f"## {label}", flush=True)
        for v in views:
            times = []
            for _ in range(reps):
                t = time.perf_counter()
                r = c.get(v)
                times.append((time.perf_counter() - t) * 1000)
                assert r.status_code == 200, (v, r.status_code, r.text[:300])
            if not cache and v in ("/", "/timeline", "/memories"):
                t = time.perf_counter()
                k.list(limit=None, include_invalid=True, include_expired=True)
                bare.append((time.perf_counter() - t) * 1000)
            name = v.split("?")[0] + ("?replay=1" if "replay" in v else "") if "/memories/" in v or "/traces/" in v else v
            print(f"{name[:44]:44s} p50 {statistics.median(times):9.1f} ms  (n={reps})", flush=True)
    t = time.perf_counter()
    k.entity_graph(limit=60)
    print(f"bare kernel.entity_graph(limit=60): {(time.perf_counter()-t)*1000:.0f} ms")
    print(f"bare kernel.list(limit=None) of the whole file: p50 {statistics.median(bare):.0f} ms (n={len(bare)})")
    t = time.perf_counter()
    k.verify()
    print(f"kernel.verify() (overview runs it in the background every 5 min): {(time.perf_counter()-t)*1000:.0f} ms")
    print(f"load average at end {os.getloadavg()[0]:.1f}")
