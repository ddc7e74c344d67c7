"""``AgentBaseMemoryProvider``: Hermes Agent's ``MemoryProvider`` over the agentbase kernel.

Hermes calls (``agent/memory_manager.py``)   what this provider does with the kernel
-------------------------------------------  ------------------------------------------------------------
initialize(session_id, agent_context=...)    opens nothing yet (the first call connects); non-primary
                                             contexts (subagent, cron, flush) are read-only
on_turn_start(turn, message)                 starts ``prefetch(message)`` on a background thread
prefetch(query)                              takes it, waiting at most ``prefetch_wait`` s: profile +
                                             relevant + recent memories within ``token_budget`` tokens
sync_turn(user, assistant)                   queues ``add_messages`` of the two turns (no LLM); returns at once
on_session_end(messages)                     queues ``commit_session`` (the rule-based session summary)
get_tool_schemas / handle_tool_call          agentbase_search / agentbase_profile / agentbase_remember
on_memory_write(action, target, content)     mirrors Hermes' built-in memory tool (MEMORY.md / USER.md)
on_delegation(task, result)                  stores what a subagent was asked and answered
shutdown()                                   lets queued writes finish (bounded), closes what it opened

Every store call goes through one ``FailOpen`` guard (``agentbase_adapters._failopen``): an error is
logged and swallowed, N failures in a row pause the store, and a turn never waits longer than
``prefetch_wait`` for memory.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from .._failopen import FailOpen, Prefetcher, StoreUnavailable
from .._harness import open_store, positive_int, rows
from .._require import require
from ._config import CONFIG_SCHEMA, load_config, save_config
from ._tools import PROFILE, REMEMBER, SEARCH, TOOL_SCHEMAS

require("agent.memory_provider", extra="hermes")

from agent.memory_provider import MemoryProvider  # noqa: E402
from tools.registry import tool_error  # noqa: E402

from agentbase_kernel import AgentBase, InvalidArgument, NotFoundError, Prefetch, is_postgres_url  # noqa: E402

__all__ = ["AgentBaseMemoryProvider"]

logger = logging.getLogger("agentbase_adapters.hermes")

DEFAULT_USER = "hermes-user"
READ_ONLY_CONTEXTS = frozenset({"subagent", "cron", "flush"})
_TOP_K = 8
_MAX_TOP_K = 50


def _hermes_home() -> str:
    from hermes_constants import get_hermes_home

    return str(get_hermes_home())


class AgentBaseMemoryProvider(MemoryProvider):  # type: ignore[misc]
    """Hermes' memory provider on an agentbase file or PostgreSQL database.

        provider = AgentBaseMemoryProvider("memory.db", user_id="alice")
        provider.initialize("session-1", hermes_home=home, platform="cli", agent_context="primary")
        provider.sync_turn("I keep bees", "Lovely!"); provider.prefetch("what do I keep?")

    Hermes itself builds it with no arguments (``register(ctx)`` in the plugin directory that
    ``python -m agentbase_adapters.hermes install`` writes) and reads ``$HERMES_HOME/agentbase.json``.

    Args:
        db: An ``AgentBase`` (left open), a file path or a ``postgresql://`` URL; ``None``: the config's ``db``.
        **settings: Any key of ``agentbase.json`` (``user_id``, ``agent_id``, ``token_budget``,
            ``prefetch_wait``, ``tool_timeout``, ``breaker_threshold``, ``breaker_cooldown``,
            ``embedder``, ``ner``); they win over the file.
    """

    def __init__(self, db: AgentBase | str | os.PathLike[str] | None = None, **settings: Any) -> None:
        self._given = db
        self._settings = settings
        self._lock = threading.Lock()
        self.config: dict[str, Any] = {}
        self.db: AgentBase | None = None
        self._owns_db = False
        self.guard: FailOpen | None = None
        self._prefetch: Prefetcher[str] | None = None
        self.user_id = DEFAULT_USER
        self.agent_id = "hermes"
        self.session_id = ""
        self.platform = "cli"
        self.agent_context = "primary"
        self._turns: dict[str, int] = {}       # turns written per session
        self._committed: dict[str, int] = {}   # turns covered by that session's last summary
        self._ended: set[str] = set()
        self._warmup: Any = None

    # -- identity and setup --------------------------------------------------------------------
    @property
    def name(self) -> str:
        return "agentbase"

    @property
    def writes_enabled(self) -> bool:
        """Only the primary agent writes: a subagent's, cron job's or flush pass's turns are not the user's."""
        return self.agent_context not in READ_ONLY_CONTEXTS

    def is_available(self) -> bool:
        """True when the settings are valid and the store's driver is installed (no connection is made)."""
        try:
            config = load_config(_hermes_home(), **self._settings)
        except ValueError as exc:
            logger.warning("agentbase memory provider unavailable: %s", exc)
            return False
        if isinstance(self._given, AgentBase):
            return True
        db = str(self._given or config["db"])
        return not is_postgres_url(db) or find_spec("psycopg") is not None

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [dict(field) for field in CONFIG_SCHEMA]

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        save_config(values, hermes_home)

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """Read the settings and prepare the store (connected on first use, so a down store cannot fail this).

        Raises:
            ValueError: Invalid settings (Hermes logs it and runs without this provider).
        """
        home = kwargs.get("hermes_home") or _hermes_home()
        config = load_config(home, **self._settings)
        options = {} if isinstance(self._given, AgentBase) else {"embedder": config["embedder"], "ner": config["ner"]}
        if isinstance(self._given, AgentBase) or self._given is not None:
            target: Any = self._given
        else:
            target = config["db"]
        self._close_store()
        with self._lock:
            self.config = config
            self.db, self._owns_db = open_store(target, source="hermes", options=options)
            self.guard = FailOpen(threshold=config["breaker_threshold"], cooldown=config["breaker_cooldown"],
                                  name="hermes", logger=logger)
            self._prefetch = Prefetcher(self.guard, self._recall, wait=config["prefetch_wait"])
            self.session_id = session_id or ""
            self.platform = str(kwargs.get("platform") or "cli")
            self.agent_context = str(kwargs.get("agent_context") or "primary")
            self.user_id = config["user_id"] or kwargs.get("user_id") or DEFAULT_USER
            self.agent_id = config["agent_id"]
        # open the file / pool and load the models off the agent's path (the first turns may go without recall)
        self._warmup = self.guard.submit(self.db.sync.initialize)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the store is open and its models are loaded; ``False`` if it failed or ``timeout`` ran out."""
        future = self._warmup
        if future is None:
            return False
        try:
            future.result(timeout=timeout)
        except Exception:
            return False
        return True

    def system_prompt_block(self) -> str:
        if self.db is None:
            return ""
        writes = "" if self.writes_enabled else " Read-only in this context."
        return (
            "# agentbase memory\n"
            f"Active. User: {self.user_id}.{writes} Memories relevant to each message are recalled for you "
            "automatically; when something may depend on earlier sessions and is not in that recall, "
            f"call {SEARCH} (again with other words if needed). {PROFILE} lists what you know about the user; "
            f"{REMEMBER} stores a lasting fact the moment the user states it."
        )

    # -- recall ----------------------------------------------------------------------------------
    def _recall(self, query: str) -> str:
        assert self.db is not None
        result: Prefetch = self.db.sync.prefetch(query, user_id=self.user_id,
                                                 token_budget=self.config["token_budget"])
        return result.text()

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        if self._prefetch is not None and isinstance(message, str) and message.strip():
            self._prefetch.start(message)

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """This turn's recall, if it is ready within ``prefetch_wait`` seconds of its start; else ``""``."""
        if self._prefetch is None or not isinstance(query, str) or not query.strip():
            return ""
        return self._prefetch.take(query) or ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Nothing to do: the next turn's message is not known yet, and ``on_turn_start`` starts its recall."""

    # -- writes ----------------------------------------------------------------------------------
    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: list[dict[str, Any]] | None = None) -> None:
        """Queue the completed turn (user and assistant text) for the session; returns at once."""
        if self.guard is None or not self.writes_enabled:
            return
        turns = [{"role": role, "content": text, "metadata": {"platform": self.platform}}
                 for role, text in (("user", user_content), ("assistant", assistant_content))
                 if isinstance(text, str) and text.strip()]
        sid = session_id or self.session_id
        if not turns or not sid:
            return
        with self._lock:
            self._turns[sid] = self._turns.get(sid, 0) + 1
        self.guard.write(self._write_turns, sid, turns)

    def _write_turns(self, sid: str, turns: list[dict[str, Any]]) -> None:
        assert self.db is not None
        self.db.sync.add_messages(sid, turns, user_id=self.user_id, agent_id=self.agent_id)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Queue the session's commit (its summary, linked to its turns) when it has turns not yet summarised."""
        if self.guard is None or not self.writes_enabled or not self.session_id:
            return
        with self._lock:
            self._ended.add(self.session_id)
        self.guard.write(self._commit, self.session_id)

    def _commit(self, sid: str) -> None:
        assert self.db is not None
        with self._lock:
            turns = self._turns.get(sid, 0)
            if turns <= self._committed.get(sid, 0):
                return
        self.db.sync.commit_session(sid)
        with self._lock:
            self._committed[sid] = turns

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "", reset: bool = False,
                          rewound: bool = False, **kwargs: Any) -> None:
        """Later turns belong to ``new_session_id`` (Hermes ends the old session itself when it should)."""
        if new_session_id:
            self.session_id = new_session_id

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Mirror a write of Hermes' built-in memory tool: ``user`` entries join the profile (category
        ``fact``), ``memory`` entries are the agent's notes (``note``); replace/remove find the entry by
        the same substring (``old_text``) the built-in tool matched."""
        if self.guard is None or not self.writes_enabled or action not in ("add", "replace", "remove"):
            return
        self.guard.write(self._mirror, action, target if target == "user" else "memory", content or "",
                         str((metadata or {}).get("old_text") or ""))

    def _mirror(self, action: str, target: str, content: str, old_text: str) -> None:
        assert self.db is not None
        kernel = self.db.sync
        mark = {"hermes_memory": target}
        if action in ("replace", "remove") and old_text.strip():
            for entry in kernel.list(user_id=self.user_id, metadata=mark, limit=None):
                if old_text.strip() in entry.l2_full:
                    if action == "remove":
                        kernel.delete(entry.id, user_id=self.user_id)
                    elif content.strip():
                        kernel.update(entry.id, user_id=self.user_id, text=content)
                        return
            if action == "remove":
                return
        if content.strip():
            kernel.add_memory(content, user_id=self.user_id, agent_id=self.agent_id,
                              category="fact" if target == "user" else "note", metadata=mark, role="user",
                              actor="hermes")

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any) -> None:
        """Store what a subagent was asked and what it answered (the subagent itself writes nothing)."""
        if self.guard is None or not self.writes_enabled or not (task or "").strip() or not (result or "").strip():
            return
        self.guard.write(self._delegation, task, result, child_session_id)

    def _delegation(self, task: str, result: str, child: str) -> None:
        assert self.db is not None
        self.db.sync.add_memory(f"Delegated task: {task.strip()}\nResult: {result.strip()}", user_id=self.user_id,
                                agent_id=self.agent_id, role="assistant", actor="hermes-subagent",
                                metadata={"hermes_delegation": child or True})

    # -- tools -----------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        schemas = [json.loads(json.dumps(s)) for s in TOOL_SCHEMAS]
        return schemas if self.writes_enabled else [s for s in schemas if s["name"] != REMEMBER]

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one of the provider's tools; always a JSON string (``{"error": ...}`` as Hermes' ``tool_error``)."""
        if tool_name not in (SEARCH, PROFILE, REMEMBER):
            return str(tool_error(f"Unknown tool: {tool_name}"))
        if self.guard is None or self.db is None:
            return str(tool_error("agentbase memory is not initialized"))
        if not isinstance(args, dict):
            return str(tool_error(f"{tool_name} arguments must be a JSON object, not {type(args).__name__}"))
        try:
            if tool_name == SEARCH:
                return self._search(args)
            if tool_name == PROFILE:
                return self._profile()
            return self._remember(args)
        except StoreUnavailable:
            return str(tool_error("agentbase memory is temporarily unavailable - answer without it; it retries "
                                  "automatically"))
        except (InvalidArgument, NotFoundError, ValueError) as exc:
            return str(tool_error(str(exc)))

    def _search(self, args: dict[str, Any]) -> str:
        assert self.guard is not None and self.db is not None
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return str(tool_error("Missing required parameter: query"))
        top_k = positive_int(args.get("top_k", _TOP_K), "top_k", maximum=_MAX_TOP_K)
        found = self.guard.call(self.db.sync.find, query, top_k=top_k, user_id=self.user_id,
                                timeout=self.config["tool_timeout"])
        if not found.hits:
            return json.dumps({"result": "No relevant memories found.", "count": 0})
        return json.dumps({"results": rows(found.hits), "count": len(found.hits)})

    def _profile(self) -> str:
        assert self.guard is not None and self.db is not None
        result = self.guard.call(self.db.sync.prefetch, "", user_id=self.user_id,
                                 token_budget=self.config["token_budget"], timeout=self.config["tool_timeout"])
        if not result.profile:
            return json.dumps({"result": "Nothing is known about the user yet.", "count": 0})
        return json.dumps({"profile": rows(result.profile), "count": len(result.profile)})

    def _remember(self, args: dict[str, Any]) -> str:
        assert self.guard is not None and self.db is not None
        if not self.writes_enabled:
            return str(tool_error(f"{REMEMBER} is not available in a {self.agent_context} context"))
        content = args.get("content")
        if not isinstance(content, str) or not content.strip():
            return str(tool_error("Missing required parameter: content"))
        category = args.get("category") or "fact"
        if category not in ("preference", "fact", "note"):
            return str(tool_error(f"category must be one of preference, fact, note - not {category!r}"))
        added = self.guard.call(self.db.sync.add_memory, content, user_id=self.user_id, agent_id=self.agent_id,
                                category=category, role="user", actor="hermes", metadata={"hermes_tool": REMEMBER},
                                timeout=self.config["tool_timeout"])
        return json.dumps({"result": "Stored." if added.event != "NOOP" else "Already stored.", "id": added.id})

    # -- lifecycle -------------------------------------------------------------------------------
    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Nothing to add: every completed turn is already stored, so compression loses nothing from memory."""
        return ""

    def backup_paths(self) -> list[str]:
        """The agentbase file when it lives outside ``$HERMES_HOME`` (``hermes backup`` covers the inside)."""
        try:
            config = load_config(_hermes_home(), **self._settings)
        except ValueError:
            return []
        db = self._given if self._given is not None else config["db"]
        if isinstance(db, AgentBase) or is_postgres_url(str(db)):
            return []
        path = Path(db).expanduser().resolve()
        home = Path(_hermes_home()).expanduser().resolve()
        return [] if home in path.parents else [str(path)]

    def shutdown(self) -> None:
        """Summarise sessions that got turns after their end was signalled, let queued writes finish
        (at most 5 s), then close the store if this provider opened it."""
        with self._lock:
            late = [sid for sid in self._ended if self._turns.get(sid, 0) > self._committed.get(sid, 0)]
        if self.guard is not None and self.writes_enabled:
            for sid in late:
                self.guard.write(self._commit, sid)
        self._close_store()

    def _close_store(self) -> None:
        """Close the guard (queued writes get 5 s) and the store; not under ``self._lock``: writes take it."""
        with self._lock:
            guard, db, owned = self.guard, self.db, self._owns_db
            self._prefetch = None
        if guard is not None:
            guard.close(timeout=5.0)
        if db is not None and owned:
            try:
                db.sync.close()
            except Exception as exc:  # a store that is down must not break shutdown
                logger.warning("agentbase: closing the store failed: %s: %s", type(exc).__name__, exc)
        with self._lock:
            if self.guard is guard:
                self.guard, self.db = None, None

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued write has reached the store; ``False`` if ``timeout`` ran out (tests, scripts)."""
        return True if self.guard is None else self.guard.flush(timeout)
