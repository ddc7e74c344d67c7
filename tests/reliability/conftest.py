"""Reliability suite: write the tally of inputs tried / writes checked / kills survived when asked.

``AGENTBASE_RELIABILITY_TALLY=path.json`` (set by ``benchmarks/stress.py``) makes the session write
the counters it gathered, so the figures in ``docs/reliability.md`` come from a real run.
"""

from __future__ import annotations

import json
import os

from ._inputs import TALLY


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("AGENTBASE_RELIABILITY_TALLY")
    if path:
        with open(path, "w") as fh:
            json.dump(dict(TALLY), fh, indent=2, sort_keys=True)
