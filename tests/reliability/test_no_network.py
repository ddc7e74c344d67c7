"""No network and no telemetry by default: a full adapter workout in a fresh process with every
non-loopback socket connect refused and recorded.

The child runs with the offline switches the rest of the suite sets (HF_HUB_OFFLINE, MEM0_TELEMETRY
...) removed, so it proves the defaults, not the test environment.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ._inputs import TALLY

SCRIPT = Path(__file__).with_name("_network_workout.py")
OFFLINE_SWITCHES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "MEM0_TELEMETRY", "MEM0_DIR", "OPENAI_API_KEY",
                    "HF_DATASETS_OFFLINE", "DO_NOT_TRACK", "ANONYMIZED_TELEMETRY")


def test_full_adapter_workout_opens_no_socket_beyond_loopback(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in OFFLINE_SWITCHES}
    env["HOME"] = str(tmp_path)  # no cached config of the developer's leaks in
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "net.db")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["probe"] == ["create_connection 203.0.113.7"]  # the guard does catch a real connect
    assert report["done"] == ["kernel", "mem0", "minimal", "langchain", "langgraph", "llamaindex", "openai"]
    assert report["blocked"] == []
    TALLY["network_workouts"] += 1
