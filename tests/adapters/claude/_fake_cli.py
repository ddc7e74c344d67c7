"""The Claude Code CLI's side of the Agent SDK's control protocol, scripted and offline.

``ClaudeSDKClient(options, transport=FakeClaudeCLI(turns))`` runs the real SDK - its ``Query`` registers the
hook callbacks in ``initialize``, answers ``hook_callback`` and ``mcp_message`` control requests, parses the
messages - while this transport plays the CLI: for each prompt it fires UserPromptSubmit, then for each
scripted tool call PreToolUse, the call itself (an SDK MCP tool through ``mcp_message``), PostToolUse,
then the assistant's answer, Stop and the result. Hook inputs are the SDK's own TypedDicts. Everything
the SDK answered is recorded for the test.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from claude_agent_sdk import (
    PostToolUseHookInput,
    PreToolUseHookInput,
    StopHookInput,
    Transport,
    UserPromptSubmitHookInput,
)


@dataclass
class ToolCall:
    name: str
    input: dict[str, Any]
    agent_id: str | None = None  # set: the call happens inside a subagent
    response: Any = "ok"


@dataclass
class Turn:
    answer: str
    tools: list[ToolCall] = field(default_factory=list)


class FakeClaudeCLI(Transport):
    """Plays ``turns`` in order, one per prompt the client sends, in session ``session_id`` under ``cwd``."""

    def __init__(self, turns: list[Turn], *, session_id: str = "sess-1", cwd: str = "/repo") -> None:
        self.turns = list(turns)
        self.session_id = session_id
        self.cwd = cwd
        self.hooks: dict[str, list[dict[str, Any]]] = {}
        self.hook_outputs: list[tuple[str, dict[str, Any]]] = []
        self.hook_errors: list[tuple[str, str]] = []
        self.tool_results: list[dict[str, Any]] = []
        self.denied: list[str] = []
        self._out: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._mcp_ready: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._ready = False

    # -- Transport --------------------------------------------------------------------------------
    async def connect(self) -> None:
        self._ready = True

    def is_ready(self) -> bool:
        return self._ready

    async def end_input(self) -> None:
        pass

    async def close(self) -> None:
        self._ready = False
        for task in self._tasks:
            task.cancel()
        await self._out.put(None)

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:  # type: ignore[override]
        while True:
            message = await self._out.get()
            if message is None:
                return
            yield message

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            if line.strip():
                await self._receive(json.loads(line))

    # -- the CLI's side ---------------------------------------------------------------------------
    async def _receive(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "control_request":
            request = message["request"]
            if request.get("subtype") == "initialize":
                self.hooks = request.get("hooks") or {}
            await self._out.put({"type": "control_response", "response": {
                "subtype": "success", "request_id": message["request_id"], "response": {"commands": []}}})
        elif kind == "control_response":
            response = message["response"]
            future = self._pending.pop(response["request_id"], None)
            if future is not None and not future.done():
                future.set_result(response)
        elif kind == "user":
            content = message["message"]["content"]
            prompt = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
            self._tasks.append(asyncio.create_task(self._play(prompt)))

    async def _request(self, request: dict[str, Any]) -> dict[str, Any]:
        request_id = f"cli_{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        await self._out.put({"type": "control_request", "request_id": request_id, "request": request})
        return await asyncio.wait_for(future, timeout=60)

    async def _fire(self, event: str, hook_input: dict[str, Any], tool_name: str | None = None) -> list[dict[str, Any]]:
        outputs = []
        for matcher in self.hooks.get(event, []):
            pattern = matcher.get("matcher")
            if tool_name is not None and pattern not in (None, "", "*") and not re.fullmatch(pattern, tool_name):
                continue
            for callback_id in matcher["hookCallbackIds"]:
                response = await self._request({"subtype": "hook_callback", "callback_id": callback_id,
                                                 "input": hook_input, "tool_use_id": hook_input.get("tool_use_id")})
                if response["subtype"] == "error":
                    self.hook_errors.append((event, response["error"]))
                    continue
                output = response.get("response") or {}
                self.hook_outputs.append((event, output))
                outputs.append(output)
        return outputs

    async def _mcp(self, server: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if server not in self._mcp_ready:
            await self._request({"subtype": "mcp_message", "server_name": server, "message": {
                "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "fake-claude-cli", "version": "0"}}}})
            await self._request({"subtype": "mcp_message", "server_name": server, "message": {
                "jsonrpc": "2.0", "method": "notifications/initialized"}})
            self._mcp_ready.add(server)
        response = await self._request({"subtype": "mcp_message", "server_name": server, "message": {
            "jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}})
        return response["response"]["mcp_response"]

    async def _play(self, prompt: str) -> None:
        turn = self.turns.pop(0) if self.turns else Turn("OK.")
        base = {"session_id": self.session_id, "transcript_path": f"/tmp/{self.session_id}.jsonl", "cwd": self.cwd}
        await self._fire("UserPromptSubmit", dict(UserPromptSubmitHookInput(
            **base, hook_event_name="UserPromptSubmit", prompt=prompt)))
        for i, call in enumerate(turn.tools):
            tool_use_id = f"toolu_{i}"
            extra = {"agent_id": call.agent_id, "agent_type": "general-purpose"} if call.agent_id else {}
            decisions = await self._fire("PreToolUse", dict(PreToolUseHookInput(
                **base, **extra, hook_event_name="PreToolUse", tool_name=call.name, tool_input=call.input,
                tool_use_id=tool_use_id)), call.name)
            if any(d.get("hookSpecificOutput", {}).get("permissionDecision") == "deny" for d in decisions):
                self.denied.append(call.name)  # the CLI does not run a denied tool
                continue
            response = call.response
            if call.name.startswith("mcp__"):
                _, server, short = call.name.split("__", 2)
                result = await self._mcp(server, "tools/call", {"name": short, "arguments": call.input})
                self.tool_results.append(result)
                response = result.get("result")
            await self._fire("PostToolUse", dict(PostToolUseHookInput(
                **base, **extra, hook_event_name="PostToolUse", tool_name=call.name, tool_input=call.input,
                tool_response=response, tool_use_id=tool_use_id)), call.name)
        await self._out.put({"type": "assistant", "session_id": self.session_id, "parent_tool_use_id": None,
                             "message": {"role": "assistant", "model": "claude-test",
                                         "content": [{"type": "text", "text": turn.answer}]}})
        await self._fire("Stop", dict(StopHookInput(**base, hook_event_name="Stop", stop_hook_active=False,
                                                    last_assistant_message=turn.answer)))
        await self._out.put({"type": "result", "subtype": "success", "duration_ms": 1, "duration_api_ms": 1,
                             "is_error": False, "num_turns": 1, "session_id": self.session_id,
                             "result": turn.answer})

    def context(self, event: str) -> list[str]:
        """The ``additionalContext`` texts the SDK returned for ``event``'s hooks."""
        return [o["hookSpecificOutput"]["additionalContext"] for e, o in self.hook_outputs
                if e == event and "additionalContext" in o.get("hookSpecificOutput", {})]
