"""Mem0 user code against ours: mem0's exception classes catch our errors; entry-field filters."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from agentbase_kernel import InvalidArgument

_ROOT = Path(__file__).resolve().parents[3]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    env_setup = "import os, tempfile; os.environ['MEM0_TELEMETRY'] = 'False'; os.environ['MEM0_DIR'] = tempfile.mkdtemp()\n"
    return subprocess.run([sys.executable, "-c", env_setup + textwrap.dedent(code)], cwd=_ROOT, capture_output=True,
                          text=True, timeout=180)


def test_mem0_user_code_catches_our_validation_error_with_mem0s_class() -> None:
    done = _run("""
        import mem0.exceptions
        from agentbase_adapters.mem0 import Memory
        m = Memory({"embedder": {"provider": "agentbase", "config": {"spec": "none"}}, "vector_store": {"config": {"path": ":memory:"}}})
        try:
            m.add("I like pizza", infer=False)
        except mem0.exceptions.ValidationError as exc:
            print("caught", exc.error_code, isinstance(exc, mem0.exceptions.MemoryError), isinstance(exc, ValueError))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["caught", "VALIDATION_001", "True", "True"]


def test_our_errors_import_and_raise_without_mem0_installed() -> None:
    done = _run("""
        import sys
        sys.modules["mem0"] = None  # as if mem0ai were not installed
        from agentbase_adapters.mem0 import Memory, ValidationError
        m = Memory({"embedder": {"provider": "agentbase", "config": {"spec": "none"}}, "vector_store": {"config": {"path": ":memory:"}}})
        try:
            m.add("I like pizza", infer=False)
        except ValidationError as exc:
            print(type(exc) is ValidationError, [c.__module__ for c in type(exc).__mro__ if c.__module__.startswith("mem0")])
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True []"


def test_actor_id_filters_inside_logical_operators(m0):
    m0.add([{"role": "user", "content": "I like pizza", "name": "bob"},
            {"role": "user", "content": "I like tea", "name": "carol"},
            {"role": "user", "content": "I like soup"}], user_id="alice", infer=False)
    rows = m0.get_all(filters={"user_id": "alice", "OR": [{"actor_id": "bob"}, {"actor_id": {"in": ["carol"]}}]})["results"]
    assert sorted(r["memory"] for r in rows) == ["I like pizza", "I like tea"]
    rows = m0.get_all(filters={"user_id": "alice", "NOT": [{"actor_id": {"in": ["bob", "carol"]}}]})["results"]
    assert [r["memory"] for r in rows] == ["I like soup"]
    assert all(r["metadata"] is None for r in m0.get_all(filters={"user_id": "alice"})["results"])


def test_created_at_range_is_the_kernels_since_until(m0):
    base = datetime(2024, 5, 1, tzinfo=timezone.utc)
    for day in range(3):
        m0.add(f"note of day {day}", user_id="alice", timestamp=(base + timedelta(days=day)).isoformat(), infer=False)
    start = (base + timedelta(days=1)).isoformat()
    assert [r["memory"] for r in m0.get_all(filters={"user_id": "alice", "created_at": {"gte": start}})["results"]] == [
        "note of day 1", "note of day 2"]
    assert [r["memory"] for r in m0.get_all(filters={"user_id": "alice", "created_at": {"gt": start}})["results"]] == [
        "note of day 2"]
    found = m0.search("note", filters={"user_id": "alice", "created_at": {"lt": start}}, threshold=0)["results"]
    assert [r["memory"] for r in found] == ["note of day 0"]


@pytest.mark.parametrize("flt", [{"attributed_to": "user"}, {"OR": [{"role": "user"}, {"topic": "x"}]},
                                 {"updated_at": {"gte": "2024-01-01"}}], ids=["attributed_to", "role-in-or", "updated_at"])
def test_filters_on_other_entry_fields_are_refused_clearly(m0, flt):
    with pytest.raises(InvalidArgument, match="cannot filter on '(attributed_to|role|updated_at)' this way"):
        m0.get_all(filters={"user_id": "alice", **flt})
