"""``AgentBaseMemory``: agentbase as the Claude Agent SDK's memory, through its hooks and an in-process MCP server.

SDK hook event        what it does
--------------------  -------------------------------------------------------------------------------------
UserPromptSubmit      recalls profile + relevant + recent memories for the prompt (``token_budget``) and
                      returns them as ``additionalContext``; waits at most ``prefetch_wait`` seconds
PreToolUse            recalls the memories and skills linked to the files the tool is about to touch
                      (``retrieve_by_entities``, ``tool_token_budget``), as ``additionalContext``; waits at
                      most ``prefetch_wait``;
                      denies a subagent's memory_remember / memory_forget (only the main agent writes)
PostToolUse           notes the files the main agent touched this turn (a subagent's do not count)
Stop                  queues the exchange - the prompt and Claude's last answer - as two session turns
                      carrying the touched files (``claude_entities``, and ``touched_entities`` so the
                      next PreToolUse on those files finds the turn) and tools; no LLM, returns at once

Tools (``mcp__agentbase__memory_search`` / ``_remember`` / ``_forget``) are ``@tool`` functions on a
``create_sdk_mcp_server`` server. Every store call goes through one ``FailOpen`` guard
(``agentbase_adapters._failopen``): a hook never raises and never waits longer than its bound, N failures
in a row pause the store, writes wait out an outage in order.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any, cast

from .._failopen import FailOpen, Prefetcher, StoreUnavailable
from .._harness import open_store, positive_int, rows, seconds
from .._require import require
from ._entities import tool_entities

require("claude_agent_sdk", extra="claude")

from claude_agent_sdk import (  # noqa: E402
    ClaudeAgentOptions,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    McpSdkServerConfig,
    SdkMcpTool,
    create_sdk_mcp_server,
    tool,
)

from agentbase_kernel import AgentBase, InvalidArgument, NotFoundError  # noqa: E402

__all__ = ["AgentBaseMemory"]

logger = logging.getLogger("agentbase_adapters.claude")

ENTITY_KEY = "claude_entities"
_MAX_SESSIONS = 256
_TOP_K = 8


@dataclass
class _Turn:
    """What one session's current turn has done so far (the Stop hook writes it)."""

    prompt: str = ""
    entities: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)


_NO_OPINION = cast(HookJSONOutput, {})


def _context(event: str, text: str) -> HookJSONOutput:
    return cast(HookJSONOutput, {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def _result(payload: dict[str, Any], *, error: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(payload)}]}
    if error:
        out["is_error"] = True
    return out


class AgentBaseMemory:
    """agentbase memory for a Claude agent: hooks that recall and record, and memory tools.

        memory = AgentBaseMemory("memory.db", user_id="alice")
        options = memory.attach(ClaudeAgentOptions(system_prompt="You are a coding assistant"))
        async with ClaudeSDKClient(options) as client: ...

    Args:
        db: An ``AgentBase`` (left open), a file path or a ``postgresql://`` URL (opened and closed here).
        user_id: Whose memories these are (every read and write is in this user's scope).
        agent_id: Written with each turn.
        token_budget: Tokens of memory injected for a prompt.
        tool_token_budget: Tokens of file-targeted memory injected before a tool runs.
        prefetch_wait: Seconds a hook waits for the store before letting Claude go on without memory.
        tool_timeout: Seconds a memory tool waits for the store.
        breaker_threshold: Store failures in a row that pause the store.
        breaker_cooldown: Seconds the store stays paused before one trial request.
        server_name: The MCP server's name (tools are ``mcp__<server_name>__memory_*``).
        **options: ``AgentBase`` options (``embedder=``, ``ner=``) when ``db`` is a path.

    Raises:
        ValueError: A setting of the wrong kind.
        TypeError: ``options`` given together with an open ``AgentBase``.
    """

    def __init__(self, db: AgentBase | str | os.PathLike[str] | None = None, *, user_id: str = "claude-user",
                 agent_id: str = "claude", token_budget: int = 1000, tool_token_budget: int = 400,
                 prefetch_wait: float = 1.0, tool_timeout: float = 10.0, breaker_threshold: int = 5,
                 breaker_cooldown: float = 30.0, server_name: str = "agentbase", **options: Any) -> None:
        for name, value in (("user_id", user_id), ("agent_id", agent_id), ("server_name", server_name)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty string, not {value!r}")
        self.user_id = user_id
        self.agent_id = agent_id
        self.token_budget = positive_int(token_budget, "token_budget")
        self.tool_token_budget = positive_int(tool_token_budget, "tool_token_budget")
        self.prefetch_wait = seconds(prefetch_wait, "prefetch_wait")
        self.tool_timeout = seconds(tool_timeout, "tool_timeout")
        self.server_name = server_name
        self.db, self._owns_db = open_store(db, source="claude", options=options)
        self.guard = FailOpen(threshold=positive_int(breaker_threshold, "breaker_threshold"),
                              cooldown=seconds(breaker_cooldown, "breaker_cooldown"), name="claude", logger=logger)
        self._prefetch: Prefetcher[str] = Prefetcher(self.guard, self._recall, wait=self.prefetch_wait)
        self._lock = threading.Lock()
        self._turns: collections.OrderedDict[str, _Turn] = collections.OrderedDict()
        self._written: set[str] = set()
        self._committed: set[str] = set()
        self._warmup = self.guard.submit(self.db.sync.initialize)  # open and load models off the agent's path

    # -- wiring --------------------------------------------------------------------------------
    def hooks(self) -> dict[str, list[HookMatcher]]:
        """``ClaudeAgentOptions(hooks=...)`` for the four events this memory listens to."""
        return {
            "UserPromptSubmit": [HookMatcher(hooks=[self.on_user_prompt])],
            "PreToolUse": [HookMatcher(hooks=[self.on_pre_tool_use])],
            "PostToolUse": [HookMatcher(hooks=[self.on_post_tool_use])],
            "Stop": [HookMatcher(hooks=[self.on_stop])],
        }

    def tools(self) -> list[SdkMcpTool[Any]]:
        """The memory tools: ``memory_search``, ``memory_remember``, ``memory_forget``."""
        return [tool("memory_search", "Search your long-term memory of this user and project (past sessions, "
                     "preferences, decisions, what was done to which files), best first.",
                     {"type": "object", "properties": {
                         "query": {"type": "string", "description": "What to look for."},
                         "top_k": {"type": "integer", "minimum": 1, "maximum": 50,
                                   "description": "How many memories (default 8)."}},
                      "required": ["query"]})(self.search_tool),
                tool("memory_remember", "Store one durable fact, preference or decision, verbatim.",
                     {"type": "object", "properties": {
                         "content": {"type": "string", "description": "One self-contained sentence."},
                         "category": {"type": "string", "enum": ["preference", "fact", "decision", "note"]}},
                      "required": ["content"]})(self.remember_tool),
                tool("memory_forget", "Delete one memory by the id a memory_search result gave.",
                     {"type": "object", "properties": {"memory_id": {"type": "string"}}, "required": ["memory_id"]}
                     )(self.forget_tool)]

    def mcp_server(self) -> McpSdkServerConfig:
        """The in-process MCP server serving ``tools()``."""
        return create_sdk_mcp_server(self.server_name, tools=self.tools())

    @property
    def _write_tools(self) -> tuple[str, str]:
        return f"mcp__{self.server_name}__memory_remember", f"mcp__{self.server_name}__memory_forget"

    @property
    def allowed_tools(self) -> list[str]:
        """The tools' names as Claude sees them (for ``allowed_tools``)."""
        return [f"mcp__{self.server_name}__{name}" for name in ("memory_search", "memory_remember", "memory_forget")]

    def attach(self, options: ClaudeAgentOptions | None = None) -> ClaudeAgentOptions:
        """``options`` with this memory's hooks, MCP server and allowed tools added (the caller's own kept)."""
        options = options if options is not None else ClaudeAgentOptions()
        hooks: dict[Any, list[HookMatcher]] = {k: list(v) for k, v in (options.hooks or {}).items()}
        for event, matchers in self.hooks().items():
            hooks.setdefault(event, []).extend(matchers)
        options.hooks = hooks
        servers = dict(options.mcp_servers) if isinstance(options.mcp_servers, dict) else {}
        if not isinstance(options.mcp_servers, dict) and options.mcp_servers:
            raise ValueError("attach() needs mcp_servers as a dict (a config file path cannot be extended)")
        servers[self.server_name] = self.mcp_server()
        options.mcp_servers = servers
        options.allowed_tools = [*options.allowed_tools, *[t for t in self.allowed_tools
                                                          if t not in options.allowed_tools]]
        return options

    # -- hooks ---------------------------------------------------------------------------------
    def _recall(self, prompt: str) -> str:
        return self.db.sync.prefetch(prompt, user_id=self.user_id, token_budget=self.token_budget).text()

    async def on_user_prompt(self, input_data: HookInput, tool_use_id: str | None,
                             context: HookContext) -> HookJSONOutput:
        """Start this turn and inject what memory recalls for the prompt (nothing if the store is slow or down)."""
        try:
            prompt = input_data.get("prompt") if isinstance(input_data, dict) else None
            if not isinstance(prompt, str) or not prompt.strip():
                return _NO_OPINION
            self._turn(input_data, new_prompt=prompt)
            text = await self._prefetch.atake(prompt)
            return _context("UserPromptSubmit", "Recalled from agentbase memory (not the user's words):\n" + text) \
                if text else _NO_OPINION
        except Exception as exc:  # a hook must never fail the turn
            logger.warning("claude: UserPromptSubmit hook skipped: %s: %s", type(exc).__name__, exc)
            return _NO_OPINION

    async def on_pre_tool_use(self, input_data: HookInput, tool_use_id: str | None,
                              context: HookContext) -> HookJSONOutput:
        """Inject the memories stored with the files this tool call is about; refuse a subagent's memory writes."""
        try:
            if not isinstance(input_data, dict):
                return _NO_OPINION
            if input_data.get("agent_id") and input_data.get("tool_name") in self._write_tools:
                return cast(HookJSONOutput, {"hookSpecificOutput": {
                    "hookEventName": "PreToolUse", "permissionDecision": "deny",
                    "permissionDecisionReason": "memory is written by the main agent only; report the fact back "
                                                "to it instead"}})
            names = tool_entities(input_data.get("tool_input"), input_data.get("cwd"))
            if not names:
                return _NO_OPINION
            found = await self.guard.aquietly(
                self.db.sync.retrieve_by_entities, names, top_k=_TOP_K, user_id=self.user_id,
                budget_tokens=self.tool_token_budget, timeout=self.prefetch_wait)
            if found is None or not found.hits:
                return _NO_OPINION
            lines = "\n".join(f"- {' '.join(h.entry.l2_full.split())}" for h in found.hits)
            return _context("PreToolUse", f"Memories about {', '.join(names)} (agentbase):\n{lines}")
        except Exception as exc:
            logger.warning("claude: PreToolUse hook skipped: %s: %s", type(exc).__name__, exc)
            return _NO_OPINION

    async def on_post_tool_use(self, input_data: HookInput, tool_use_id: str | None,
                               context: HookContext) -> HookJSONOutput:
        """Note the files and tool the main agent used this turn (a subagent's ``agent_id`` excludes it)."""
        try:
            if isinstance(input_data, dict) and not input_data.get("agent_id"):
                turn = self._turn(input_data)
                if turn is not None:
                    with self._lock:
                        for name in tool_entities(input_data.get("tool_input"), input_data.get("cwd")):
                            if name not in turn.entities:
                                turn.entities.append(name)
                        tool_name = input_data.get("tool_name")
                        if isinstance(tool_name, str) and tool_name not in turn.tools:
                            turn.tools.append(tool_name)
        except Exception as exc:
            logger.warning("claude: PostToolUse hook skipped: %s: %s", type(exc).__name__, exc)
        return _NO_OPINION

    async def on_stop(self, input_data: HookInput, tool_use_id: str | None,
                      context: HookContext) -> HookJSONOutput:
        """Queue the exchange (prompt + Claude's last answer) with the touched files; returns at once."""
        try:
            if not isinstance(input_data, dict) or input_data.get("agent_id"):
                return _NO_OPINION
            sid = input_data.get("session_id")
            if not isinstance(sid, str) or not sid:
                return _NO_OPINION
            with self._lock:
                turn = self._turns.pop(sid, None)
            answer = input_data.get("last_assistant_message")
            if turn is None and not isinstance(answer, str):
                return _NO_OPINION
            turn = turn or _Turn()
            metadata: dict[str, Any] = {ENTITY_KEY: turn.entities} if turn.entities else {}
            if turn.tools:
                metadata["claude_tools"] = turn.tools
            messages = [{"role": role, "content": text, "metadata": metadata or None}
                        for role, text in (("user", turn.prompt), ("assistant", answer))
                        if isinstance(text, str) and text.strip()]
            if messages:
                with self._lock:
                    self._written.add(sid)
                    self._committed.discard(sid)
                self.guard.write(self.db.sync.add_messages, sid, messages, user_id=self.user_id,
                                 agent_id=self.agent_id, touched_entities=turn.entities or None)
        except Exception as exc:
            logger.warning("claude: Stop hook skipped: %s: %s", type(exc).__name__, exc)
        return _NO_OPINION

    def _turn(self, input_data: Any, *, new_prompt: str | None = None) -> _Turn | None:
        sid = input_data.get("session_id")
        if not isinstance(sid, str) or not sid:
            return None
        with self._lock:
            if new_prompt is not None:
                self._turns[sid] = _Turn(prompt=new_prompt)
            turn = self._turns.get(sid)
            if turn is not None:
                self._turns.move_to_end(sid)
            while len(self._turns) > _MAX_SESSIONS:
                self._turns.popitem(last=False)
            return turn

    # -- tools ---------------------------------------------------------------------------------
    async def _tool(self, fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, dict[str, Any] | None]:
        try:
            return await self.guard.acall(fn, *args, timeout=self.tool_timeout, **kwargs), None
        except StoreUnavailable:
            return None, _result({"error": "agentbase memory is temporarily unavailable - go on without it; it "
                                           "retries automatically"}, error=True)
        except NotFoundError:
            return None, _result({"error": f"No memory with id {args[0]!r} for this user"}, error=True)
        except InvalidArgument as exc:
            return None, _result({"error": str(exc)}, error=True)

    async def search_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return _result({"error": "query must be a non-empty string"}, error=True)
        found, error = await self._tool(self.db.sync.find, query, top_k=int(args.get("top_k") or _TOP_K),
                                        user_id=self.user_id)
        if error:
            return error
        return _result({"results": rows(found.hits), "count": len(found.hits)})

    async def remember_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        content = args.get("content")
        if not isinstance(content, str) or not content.strip():
            return _result({"error": "content must be a non-empty string"}, error=True)
        added, error = await self._tool(self.db.sync.add_memory, content, user_id=self.user_id,
                                        agent_id=self.agent_id, category=args.get("category") or "fact",
                                        role="user", actor="claude", metadata={"claude_tool": "memory_remember"})
        if error:
            return error
        return _result({"result": "Already stored." if added.event == "NOOP" else "Stored.", "id": added.id})

    async def forget_tool(self, args: dict[str, Any]) -> dict[str, Any]:
        memory_id = args.get("memory_id")
        if not isinstance(memory_id, str) or not memory_id.strip():
            return _result({"error": "memory_id must be a non-empty string"}, error=True)
        deleted, error = await self._tool(self.db.sync.delete, memory_id, user_id=self.user_id, actor="claude")
        if error:
            return error
        return _result({"result": "Forgotten.", "id": deleted.id})

    # -- lifecycle -------------------------------------------------------------------------------
    def commit(self, session_id: str) -> None:
        """Queue the session's commit (its rule-based summary, linked to its turns); returns at once."""
        with self._lock:
            if session_id not in self._written or session_id in self._committed:
                return
            self._committed.add(session_id)
        self.guard.write(self.db.sync.commit_session, session_id)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the store is open and its models loaded; ``False`` if that failed or ``timeout`` ran out."""
        if self._warmup is None:
            return False
        try:
            self._warmup.result(timeout=timeout)
        except Exception:
            return False
        return True

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued write reached the store; ``False`` if ``timeout`` ran out."""
        return self.guard.flush(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Commit the sessions written to, give queued writes ``timeout`` seconds, close what was opened here."""
        with self._lock:
            sessions = sorted(self._written - self._committed)
        for sid in sessions:
            self.commit(sid)
        self.guard.close(timeout=timeout)
        if self._owns_db:
            try:
                self.db.sync.close()
            except Exception as exc:  # a store that is down must not break shutdown
                logger.warning("claude: closing the store failed: %s: %s", type(exc).__name__, exc)

    async def aclose(self, timeout: float = 5.0) -> None:
        """``close`` without blocking the event loop."""
        await asyncio.to_thread(self.close, timeout)

    def __enter__(self) -> AgentBaseMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> AgentBaseMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
