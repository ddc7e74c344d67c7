"""The aggregate cache: one scan however many pages ask, re-read only after the file changed."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from agentbase_adapters.web.queries import Queries
from agentbase_kernel import Kernel, MissingDependency, Scope


def _counting(queries: Queries) -> list[int]:
    scans: list[int] = []
    real = queries._scan

    def scan(scope: Scope):
        scans.append(1)
        time.sleep(0.2)  # a scan of a big file takes a while: waiters must share it
        return real(scope)

    queries._scan = scan  # type: ignore[method-assign]
    return scans


def test_one_scan_serves_concurrent_pages_and_writes_trigger_a_background_rescan(tmp_path):
    with Kernel(tmp_path / "m.db", embedder=None, ner=None) as k:
        k.add_memory("Alice likes tea", user_id="alice", category="pref")
        q = Queries(k, ttl=0.05)
        scans = _counting(q)
        results: list[int] = []
        pages = [threading.Thread(target=lambda: results.append(q.counts(Scope())["entries"])) for _ in range(4)]
        for p in pages:
            p.start()
        for p in pages:
            p.join()
        assert results == [1, 1, 1, 1] and len(scans) == 1

        time.sleep(0.1)  # older than ttl, but nothing was written: no re-scan
        assert q.counts(Scope())["entries"] == 1 and len(scans) == 1

        k.add_memory("Alice likes coffee", user_id="alice")
        assert q.counts(Scope())["entries"] == 1  # the stale copy, while a thread re-reads
        for _ in range(100):
            if q.counts(Scope())["entries"] == 2:
                break
            time.sleep(0.05)
        assert q.counts(Scope())["entries"] == 2 and len(scans) == 2


def test_cache_off_reads_every_time_and_forget_drops_copies(tmp_path):
    with Kernel(tmp_path / "m.db", embedder=None, ner=None) as k:
        k.add_memory("one", user_id="u")
        off = Queries(k, ttl=0)
        assert off.counts(Scope(user_id="u"))["entries"] == 1
        k.add_memory("two", user_id="u")
        assert off.counts(Scope(user_id="u"))["entries"] == 2
        on = Queries(k, ttl=3600)
        assert on.tag_counts(Scope()) == [] and on.counts(Scope())["entries"] == 2
        k.add_memory("three", user_id="u", tags=["x"])
        on.forget()
        assert on.counts(Scope())["entries"] == 3 and on.tag_counts(Scope()) == [("x", 1)]


@pytest.mark.parametrize("framework", ["starlette", "jinja2"])
def test_missing_web_extra_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path, framework: str) -> None:
    for name in [m for m in sys.modules if m == framework or m.startswith(framework + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, framework, None)
    monkeypatch.delitem(sys.modules, "agentbase_adapters.web.app", raising=False)
    from agentbase_adapters.web import create_app

    with Kernel(tmp_path / "m.db", embedder=None, ner=None) as k, pytest.raises(MissingDependency) as info:
        create_app(k)
    assert "[web]'" in str(info.value)
