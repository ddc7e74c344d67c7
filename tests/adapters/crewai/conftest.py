"""CrewAI offline: no telemetry, no version check, no tracing prompt; LanceDB (CrewAI's default storage) and
agentbase side by side on the same embedder, so their answers compare."""

from __future__ import annotations

import importlib.util
import os

if importlib.util.find_spec("crewai") is not None:  # only where CrewAI runs: the flags are process-wide
    for _flag in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED", "CREWAI_DISABLE_VERSION_CHECK"):
        os.environ.setdefault(_flag, "true")
    os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
