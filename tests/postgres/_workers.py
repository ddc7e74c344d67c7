"""Process entry points for the Postgres fault tests (spawned children import this module by name).

Each child opens its own ``AgentBase`` on the URL and reports every outcome to the parent; nothing here asserts.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path
from typing import Any


def write_through_faults(url: str, worker: int, flags: str) -> dict[str, Any]:
    """Add memories until the parent creates ``flags/stop``, while it drops connections or restarts the server.

    Returns the texts whose ``add_memory`` returned (they must be stored, whole), the texts whose call
    raised, the type of every exception (only our own errors may appear), and how many writes succeeded
    after the parent created ``flags/calm`` (the faults are over: the writer must have recovered).
    """
    from agentbase_kernel import AgentBase, AgentBaseError
    from tests.conftest import HashEmbedder

    folder = Path(flags)
    acked: list[str] = []
    failed: list[str] = []
    raised: list[str] = []
    late_ok = 0
    deadline = time.monotonic() + 600  # never hang the suite if the parent dies
    db = AgentBase(url, embedder=HashEmbedder(), ner="regex")
    try:
        i = 0
        while not (folder / "stop").exists() and time.monotonic() < deadline:
            text = f"worker {worker} fact {i} about the harbour crane w{worker}n{i}"
            i += 1
            calm = (folder / "calm").exists()
            try:
                db.sync.add_memory(text, user_id=f"u{worker}", tags=["fault"])
                acked.append(text)
                late_ok += calm
            except AgentBaseError as exc:
                failed.append(text)
                raised.append(type(exc).__name__)
                time.sleep(0.05)
            except Exception as exc:  # a raw driver error escaped: the test reports it
                failed.append(text)
                raised.append(f"RAW {type(exc).__module__}.{type(exc).__name__}: {exc}")
                time.sleep(0.05)
    except Exception:
        raised.append("RAW " + traceback.format_exc())
    finally:
        try:
            db.sync.close()
        except Exception as exc:
            raised.append(f"close: {type(exc).__name__}: {exc}")
    return {"acked": acked, "failed": failed, "raised": raised, "late_ok": late_ok}
