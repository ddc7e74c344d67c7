"""Fail-open figures for the harness adapters: PostgreSQL killed mid-run under a running agent.

Usage (from the repo root)::

    .venv-hermes/bin/python -m benchmarks.harness_failopen --harness hermes    # Hermes' provider
    .venv/bin/python -m benchmarks.harness_failopen --harness claude           # the Claude Agent SDK hooks

A throwaway PostgreSQL (tests/postgres/server.py) sits behind a counting TCP proxy (tests/adapters/_tcp_proxy.py).
Turns run before the kill, while the server is down (``pg_ctl stop -m immediate``) and after it is started
again. Each turn is what the harness does: Hermes - ``on_turn_start``, ``prefetch``, the model's
``agentbase_search`` call, ``sync_turn``; Claude - a whole ``ClaudeSDKClient`` turn (UserPromptSubmit,
PreToolUse on a file, an ``mcp__agentbase__memory_search`` call, PostToolUse, Stop) against a scripted CLI.
Reported: turns completed, exceptions that reached the agent, turn time while down, requests sent while the
breaker was open (the guard's count, and connection attempts seen by the proxy), and turns lost (written
after recovery: the writer waits out the outage).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from agentbase_kernel import AgentBase, Config

__all__ = ["run_claude", "run_hermes"]


def _phase_counts(proxy: Any, guard: Any) -> dict[str, int]:
    connections, sends = proxy.counts()
    s = guard.stats
    return {"connections": connections, "sends": sends, "sent": s.sent, "refused": s.refused, "trials": s.trials,
            "sent_while_open": s.sent_while_open, "trips": s.trips}


def _summary(before: dict[str, int], after: dict[str, int], times: list[float], exceptions: int, completed: int,
             planned: int, stored: int, written: int, guard: Any) -> dict[str, Any]:
    return {
        "turns_planned": planned, "turns_completed": completed, "exceptions_reaching_agent": exceptions,
        "down_turn_ms_p50": round(statistics.median(times) * 1000, 1),
        "down_turn_ms_max": round(max(times) * 1000, 1),
        "breaker_trips": after["trips"] - before["trips"],
        "requests_refused_while_open": after["refused"] - before["refused"],
        "requests_sent_while_open": after["sent_while_open"] - before["sent_while_open"],
        "adapter_requests_sent_while_down": after["sent"] - before["sent"],
        "proxy_connection_attempts_while_down": after["connections"] - before["connections"],
        "turn_writes_queued": written, "turn_writes_stored_after_recovery": stored,
        "writes_dropped": guard.stats.writes_dropped,
    }


def run_hermes(server: Any, proxy: Any, db: AgentBase, hermes_home: str, *, before: int = 10, down: int = 30,
               after: int = 10, cooldown: float = 2.0, threshold: int = 5, pace: float = 0.1) -> dict[str, Any]:
    """Hermes' provider on ``db`` (a PostgreSQL URL through ``proxy``); ``server`` is killed after ``before`` turns."""
    from agentbase_adapters.hermes import AgentBaseMemoryProvider

    provider = AgentBaseMemoryProvider(db, user_id="alice", breaker_threshold=threshold, breaker_cooldown=cooldown)
    provider.initialize("fail-open", hermes_home=hermes_home, platform="cli", agent_context="primary")
    assert provider.wait_ready(120)
    guard = provider.guard
    exceptions = completed = 0
    times: list[float] = []

    def turn(i: int) -> float:
        nonlocal exceptions, completed
        message = f"turn {i}: what did we decide about the database migration?"
        started = time.perf_counter()
        try:
            provider.on_turn_start(i, message)
            provider.prefetch(message)
            json.loads(provider.handle_tool_call("agentbase_search", {"query": "database migration"}))
            provider.sync_turn(message, f"answer {i}: we keep PostgreSQL", session_id="fail-open")
        except Exception:
            exceptions += 1
        completed += 1
        return time.perf_counter() - started

    for i in range(before):
        turn(i)
    provider.flush(60)
    server.kill()
    at_kill = _phase_counts(proxy, guard)
    for i in range(before, before + down):
        times.append(turn(i))
        time.sleep(pace)
    at_revive = _phase_counts(proxy, guard)
    server.start_again()
    for i in range(before + down, before + down + after):
        turn(i)
        time.sleep(pace)
    provider.flush(120)
    stored = db.sync.count_messages("fail-open") // 2
    result = _summary(at_kill, at_revive, times, exceptions, completed, before + down + after, stored,
                      before + down + after, guard)
    result["breaker_state_at_end"] = guard.breaker.state
    provider.shutdown()
    return result


def run_claude(server: Any, proxy: Any, db: AgentBase, *, before: int = 10, down: int = 30, after: int = 10,
               cooldown: float = 2.0, threshold: int = 5, pace: float = 0.1) -> dict[str, Any]:
    """The Claude Agent SDK (real ``ClaudeSDKClient``, scripted CLI) with the hooks and tools on ``db``."""
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage

    from agentbase_adapters.claude import AgentBaseMemory
    from tests.adapters.claude._fake_cli import FakeClaudeCLI, ToolCall, Turn

    memory = AgentBaseMemory(db, user_id="alice", breaker_threshold=threshold, breaker_cooldown=cooldown)
    assert memory.wait_ready(120)
    guard = memory.guard
    total = before + down + after
    turns = [Turn(f"answer {i}", [ToolCall("Edit", {"file_path": "/repo/src/db.py", "old_string": "a",
                                                     "new_string": "b"}),
                                  ToolCall("mcp__agentbase__memory_search", {"query": "database migration"})])
             for i in range(total)]
    cli = FakeClaudeCLI(turns, session_id="fail-open")
    times: list[float] = []
    results: list[str] = []
    marks: dict[str, dict[str, int]] = {}

    async def play() -> int:
        exceptions = 0
        async with ClaudeSDKClient(options=memory.attach(ClaudeAgentOptions(cwd="/repo")), transport=cli) as client:
            for i in range(total):
                if i == before:
                    memory.flush(60)
                    await asyncio.to_thread(server.kill)
                    marks["kill"] = _phase_counts(proxy, guard)
                if i == before + down:
                    marks["revive"] = _phase_counts(proxy, guard)
                    await asyncio.to_thread(server.start_again)
                started = time.perf_counter()
                try:
                    await client.query(f"turn {i}: what did we decide about the database migration in src/db.py?")
                    async for message in client.receive_response():
                        if isinstance(message, ResultMessage):
                            results.append(message.result or "")
                except Exception:
                    exceptions += 1
                if before <= i < before + down:
                    times.append(time.perf_counter() - started)
                await asyncio.sleep(pace)
        return exceptions + len(cli.hook_errors)

    exceptions = asyncio.run(play())
    memory.flush(120)
    stored = db.sync.count_messages("fail-open") // 2
    result = _summary(marks["kill"], marks["revive"], times, exceptions,
                      sum(r == f"answer {i}" for i, r in enumerate(results)), total, stored, total, guard)
    result["breaker_state_at_end"] = guard.breaker.state
    memory.close()
    return result


def _with_postgres(fn: Callable[..., dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    from tests.adapters._tcp_proxy import TcpProxy
    from tests.postgres.server import ThrowawayServer

    with ThrowawayServer.start(durable=True) as server:  # fsync and synchronous_commit on: a kill loses no commit
        url = server.create_database()
        proxy = TcpProxy(server.port)
        try:
            # synchronous FULL: a commit is on disk before it returns (the default NORMAL, like SQLite's, may lose
            # the last commits when the server dies - the kernel's durability setting, not the adapter's)
            with AgentBase(proxy.url(url), ner="regex", config=Config.load().with_(storage={"synchronous": "FULL"})) as db:
                return fn(server, proxy, db, **kwargs)
        finally:
            proxy.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--harness", choices=["hermes", "claude"], required=True)
    parser.add_argument("--before", type=int, default=10)
    parser.add_argument("--down", type=int, default=30)
    parser.add_argument("--after", type=int, default=10)
    parser.add_argument("--cooldown", type=float, default=2.0)
    parser.add_argument("--threshold", type=int, default=5)
    args = parser.parse_args()
    options = {"before": args.before, "down": args.down, "after": args.after, "cooldown": args.cooldown,
               "threshold": args.threshold}
    if args.harness == "hermes":
        with tempfile.TemporaryDirectory() as home:
            result = _with_postgres(run_hermes, hermes_home=home, **options)
    else:
        result = _with_postgres(run_claude, **options)
    print(json.dumps({"harness": args.harness, **result}, indent=2))


if __name__ == "__main__":
    main()
