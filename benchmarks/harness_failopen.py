"""Fail-open figures for the harness adapters: PostgreSQL killed mid-run under a running agent.

Usage (from the repo root)::

    .venv-hermes/bin/python -m benchmarks.harness_failopen --harness hermes    # Hermes' provider
    .venv/bin/python -m benchmarks.harness_failopen --harness claude           # the Claude Agent SDK hooks
    .venv/bin/python -m benchmarks.harness_failopen --harness deepagents       # a deep agent's /memories/ route
    .venv-crewai/bin/python -m benchmarks.harness_failopen --harness crewai    # a crew's unified Memory
    .venv/bin/python -m benchmarks.harness_failopen --harness pydantic_ai      # the harness's Memory capability

A throwaway PostgreSQL (tests/postgres/server.py) sits behind a counting TCP proxy (tests/adapters/_tcp_proxy.py).
Turns run before the kill, while the server is down (``pg_ctl stop -m immediate``) and after it is started
again. Each turn is what the harness does: Hermes - ``on_turn_start``, ``prefetch``, the model's
``agentbase_search`` call, ``sync_turn``; Claude - a whole ``ClaudeSDKClient`` turn (UserPromptSubmit,
PreToolUse on a file, an ``mcp__agentbase__memory_search`` call, PostToolUse, Stop) against a scripted CLI;
deepagents - a ``create_deep_agent`` run (scripted fake chat model) whose ``/memories/`` route is agentbase:
``write_file``, ``read_file``, ``grep`` there, then its answer; CrewAI - a ``Crew.kickoff`` with
``memory=Memory(storage=AgentBaseStorage(...))`` (scripted CrewAI LLM): recall before the task, the extracted
memory saved after it; Pydantic AI - an ``Agent.run`` (``FunctionModel``) with the ``Memory`` capability
injecting the notebook. Reported: turns completed, exceptions that reached the agent, turn time while down, requests sent while the
breaker was open (the guard's count, and connection attempts seen by the proxy), and turns lost (written
after recovery: the Hermes and Claude writers wait out the outage; deepagents, CrewAI and the Pydantic AI
harness write synchronously, so a write while the store is down is reported failed to the harness instead:
the model reads a tool error, CrewAI logs it).
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

__all__ = ["run_claude", "run_crewai", "run_deepagents", "run_hermes", "run_pydantic_ai"]


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


def _synchronous(result: dict[str, Any], attempted: int, stored: int) -> dict[str, Any]:
    """A harness that writes synchronously: no queue, so what counts is how many writes made it."""
    for key in ("turn_writes_queued", "turn_writes_stored_after_recovery", "writes_dropped"):
        result.pop(key)
    return {**result, "memory_writes_attempted": attempted, "memory_writes_stored": stored}


def _turn_loop(server: Any, before: int, down: int, after: int, pace: float, mark: Callable[[], dict[str, int]],
               turn: Callable[[int], bool]) -> tuple[dict[str, dict[str, int]], list[float], int, int]:
    """Run the turns, killing the server after ``before`` and starting it after ``down`` more; ``turn(i)``
    says whether the turn completed, and any exception it raises is one that reached the agent's caller."""
    marks: dict[str, dict[str, int]] = {}
    times: list[float] = []
    exceptions = completed = 0
    for i in range(before + down + after):
        if i == before:
            server.kill()
            marks["kill"] = mark()
        if i == before + down:
            marks["revive"] = mark()
            server.start_again()
        started = time.perf_counter()
        try:
            completed += bool(turn(i))
        except Exception:
            exceptions += 1
        if before <= i < before + down:
            times.append(time.perf_counter() - started)
        time.sleep(pace)
    return marks, times, exceptions, completed


def run_deepagents(server: Any, proxy: Any, db: AgentBase, *, before: int = 10, down: int = 30, after: int = 10,
                   cooldown: float = 2.0, threshold: int = 5, pace: float = 0.1) -> dict[str, Any]:
    """A deep agent (``create_deep_agent``, scripted fake model) with ``/memories/`` on ``db``."""
    from deepagents import create_deep_agent
    from deepagents.backends import CompositeBackend, StateBackend
    from langchain_core.messages import AIMessage

    from agentbase_adapters._failopen import FailOpen
    from agentbase_adapters.deepagents import AgentBaseBackend
    from tests.adapters.deepagents._fake_model import ToolCallingFakeModel, tool_call

    guard = FailOpen(threshold=threshold, cooldown=cooldown, name="deepagents")
    memories = AgentBaseBackend(db, user_id="alice", guard=guard, defer_embedding=False)
    memories.write("/decisions.md", "- the database migration keeps PostgreSQL\n")

    def turn(i: int) -> bool:
        script = [tool_call("write_file", file_path=f"/memories/turns/t{i}.md", content=f"turn {i}: migration\n"),
                  tool_call("read_file", file_path="/memories/decisions.md"),
                  tool_call("grep", pattern="migration", path="/memories"), AIMessage(content=f"answer {i}")]
        agent = create_deep_agent(model=ToolCallingFakeModel(messages=iter(script)),
                                  backend=CompositeBackend(default=StateBackend(), routes={"/memories/": memories}))
        result = agent.invoke({"messages": [{"role": "user", "content": f"turn {i}: what about the migration?"}]})
        return bool(result["messages"][-1].content == f"answer {i}")

    marks, times, exceptions, completed = _turn_loop(server, before, down, after, pace,
                                                     lambda: _phase_counts(proxy, guard), turn)
    total = before + down + after
    result = _summary(marks["kill"], marks["revive"], times, exceptions, completed, total, 0, total, guard)
    result["breaker_state_at_end"] = guard.breaker.state
    stored = len(memories.glob("/turns/*.md").matches or [])
    memories.close()
    return _synchronous(result, total, stored)


def run_crewai(server: Any, proxy: Any, db: AgentBase, *, before: int = 10, down: int = 30, after: int = 10,
               cooldown: float = 2.0, threshold: int = 5, pace: float = 0.1) -> dict[str, Any]:
    """A crew (scripted CrewAI LLM) whose unified ``Memory`` is ``AgentBaseStorage`` on ``db``."""
    import os

    for flag in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED", "CREWAI_DISABLE_VERSION_CHECK"):
        os.environ.setdefault(flag, "true")
    from crewai import Agent, Crew, Task
    from crewai.memory.unified_memory import Memory

    from agentbase_adapters._failopen import FailOpen
    from agentbase_adapters.crewai import AgentBaseStorage
    from tests.adapters.crewai._fake_llm import ScriptedLLM

    guard = FailOpen(threshold=threshold, cooldown=cooldown, name="crewai")
    storage = AgentBaseStorage(db, user_id="alice", guard=guard, defer_embedding=False)
    memory = Memory(storage=storage, embedder=storage.embedder, llm=ScriptedLLM())

    def turn(i: int) -> bool:
        llm = ScriptedLLM([f"answer {i}: we keep PostgreSQL"])
        agent = Agent(role="assistant", goal="help Alice", backstory="A helpful assistant.", llm=llm)
        task = Task(description=f"Turn {i}: what did we decide about the database migration?",
                    expected_output="the decision", agent=agent)
        raw = Crew(agents=[agent], tasks=[task], memory=memory).kickoff().raw
        memory.drain_writes()
        return bool(raw == f"answer {i}: we keep PostgreSQL")

    marks, times, exceptions, completed = _turn_loop(server, before, down, after, pace,
                                                     lambda: _phase_counts(proxy, guard), turn)
    total = before + down + after
    result = _summary(marks["kill"], marks["revive"], times, exceptions, completed, total, 0, total, guard)
    result["breaker_state_at_end"] = guard.breaker.state
    answers = {e.l2_full for e in db.sync.list(user_id="alice", limit=None)}
    stored = sum(f"answer {i}: we keep PostgreSQL" in answers for i in range(total))
    memory.close()
    storage.close()
    return _synchronous(result, total, stored)


def run_pydantic_ai(server: Any, proxy: Any, db: AgentBase, *, before: int = 10, down: int = 30, after: int = 10,
                    cooldown: float = 2.0, threshold: int = 5, pace: float = 0.1) -> dict[str, Any]:
    """A Pydantic AI agent (``FunctionModel``) with the harness's ``Memory`` capability on ``db``."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai_harness import Memory

    from agentbase_adapters._failopen import FailOpen
    from agentbase_adapters.pydantic_ai import AgentBaseMemoryStore

    guard = FailOpen(threshold=threshold, cooldown=cooldown, name="pydantic-ai")
    store = AgentBaseMemoryStore(db, guard=guard, defer_embedding=False)
    asyncio.run(store.write("alice/main/MEMORY.md", "- the database migration keeps PostgreSQL\n",
                            expected_version=None))
    injected: list[bool] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        injected.append("keeps PostgreSQL" in str(messages))
        return ModelResponse(parts=[TextPart("answer")])

    agent = Agent(FunctionModel(model), deps_type=str, capabilities=[Memory(store, namespace=lambda c: c.deps)])

    def turn(i: int) -> bool:
        output = agent.run_sync(f"turn {i}: what about the migration?", deps="alice").output
        return bool(output == "answer")

    marks, times, exceptions, completed = _turn_loop(server, before, down, after, pace,
                                                     lambda: _phase_counts(proxy, guard), turn)
    total = before + down + after
    result = _summary(marks["kill"], marks["revive"], times, exceptions, completed, total, 0, 0, guard)
    for key in ("turn_writes_queued", "turn_writes_stored_after_recovery", "writes_dropped"):
        result.pop(key)
    result["breaker_state_at_end"] = guard.breaker.state
    result["turns_with_memory_injected"] = {"before": sum(injected[:before]),
                                            "down": sum(injected[before:before + down]),
                                            "after": sum(injected[before + down:])}
    store.close()
    return result


RUNS: dict[str, Callable[..., dict[str, Any]]] = {"claude": run_claude, "crewai": run_crewai,
                                                  "deepagents": run_deepagents, "pydantic_ai": run_pydantic_ai}


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
    parser.add_argument("--harness", choices=sorted([*RUNS, "hermes"]), required=True)
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
        result = _with_postgres(RUNS[args.harness], **options)
    print(json.dumps({"harness": args.harness, **result}, indent=2))


if __name__ == "__main__":
    main()
