"""The MCP server: agentbase's memory tools, a recent-memories resource and a usage prompt.

Built on the official SDK's low-level ``Server`` so each tool's JSON schema is written out in
``_tools.py`` (and checked here with ``jsonschema`` before any kernel call) rather than derived
from Python signatures: the same tool then has a different, exact schema on a single-tenant and
on a multi-tenant server. Every failure of a call becomes a tool error (``isError``) carrying our
message; the server itself never stops on a bad call.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from agentbase_kernel import AgentBase, AgentBaseError

from .._require import require
from ._records import entry_json
from ._tenancy import Scope, Tenancy
from ._tools import TOOLS, ToolSpec

__all__ = ["GUIDE", "RECENT", "create_server"]

log = logging.getLogger("agentbase.mcp")

RECENT = 20  # memories in the recent-memories resource
_RECENT_URI = "agentbase://memories/recent"
_RECENT_TEMPLATE = "agentbase://users/{user_id}/memories/recent"

GUIDE = """\
You have a long-term memory (agentbase) through these tools.
- Before answering anything that may depend on the user's past (preferences, facts about them, earlier decisions, \
ongoing tasks), call search_memories with a short natural-language query; cite what you use.
- When the user tells you something worth keeping beyond this conversation, call add_memory with one \
self-contained sentence (e.g. "Alice prefers answers in French"), a category such as preference, fact or task, \
and tags if useful. Do not store secrets or one-off chatter.
- When a memory is wrong or out of date, call update_memory on its id (or delete_memory); memory_history shows \
how it changed.
- To keep a whole conversation, call add_message for each turn with one session_id; get_session reads it back.
- list_memories pages through everything; list_entities, entity_graph and memory_stats give an overview.
- delete_all_memories wipes a whole scope and cannot be undone: only on the user's explicit request.
Filters take {key: value} or {key: {op: operand}} over the metadata you stored (ops: eq ne gt gte lt lte in nin \
contains icontains exists startswith; combine with AND / OR / NOT)."""


def create_server(db: AgentBase, tenancy: Tenancy, *, name: str = "agentbase") -> Any:
    """An MCP ``Server`` (the SDK's low-level one) over ``db`` that serves ``tenancy``'s scope.

    Usage::

        server = create_server(AgentBase("memory.db"), Tenancy(user_id="alice"))
        async with mcp.Client(server) as client: ...

    Raises:
        MissingDependency: The ``mcp`` extra is not installed.
    """
    db = db.view(source="mcp")  # entries record the path that wrote them (Entry.source)
    lowlevel = require("mcp.server.lowlevel", extra="mcp")
    types = require("mcp.types", extra="mcp")
    jsonschema = require("jsonschema", extra="mcp")

    schemas = {spec.name: _input_schema(spec, tenancy) for spec in TOOLS.values()}
    validators = {n: jsonschema.Draft202012Validator(s) for n, s in schemas.items()}
    tools = [types.Tool(name=spec.name, description=spec.description, input_schema=schemas[spec.name],
                        annotations=types.ToolAnnotations(read_only_hint=spec.read_only,
                                                          destructive_hint=spec.destructive,
                                                          idempotent_hint=spec.read_only, open_world_hint=False))
             for spec in TOOLS.values()]

    def error(message: str) -> Any:
        safe = message.encode("utf-8", "replace").decode("utf-8")  # an echoed lone surrogate must not break the wire
        return types.CallToolResult(content=[types.TextContent(type="text", text=safe)], is_error=True)

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> Any:
        spec = TOOLS.get(params.name)
        if spec is None:
            return error(f"Unknown tool {params.name!r:.80} - the tools are: {', '.join(TOOLS)}")
        # Clients in OpenAI's strict tool mode send null for every argument left out: null means absent.
        arguments = {k: v for k, v in (params.arguments or {}).items() if v is not None}
        try:
            problem = _first_error(validators[spec.name], arguments)
            if problem is not None:
                return error(f"Invalid arguments for {spec.name}: {problem}")
            if spec.scoped_by_tenancy:
                scope, own = tenancy.split(arguments)
            else:
                scope, own = tenancy.fixed(), arguments
            result = await spec.run(db, scope, own)
        except AgentBaseError as exc:
            return error(str(exc))
        except Exception as exc:  # a bug of ours: say so, keep serving
            log.exception("tool %s failed", spec.name)
            return error(f"{spec.name} failed with an internal error ({type(exc).__name__}); "
                         "the server keeps running - please report it")
        text = json.dumps(result, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=result)

    async def list_resources(ctx: Any, params: Any) -> Any:
        if tenancy.multi:
            return types.ListResourcesResult(resources=[])
        return types.ListResourcesResult(resources=[types.Resource(
            uri=_RECENT_URI, name="recent-memories", mime_type="application/json",
            description=f"The {RECENT} most recent memories of {tenancy.describe()}.")])

    async def list_resource_templates(ctx: Any, params: Any) -> Any:
        if not tenancy.multi:
            return types.ListResourceTemplatesResult(resource_templates=[])
        return types.ListResourceTemplatesResult(resource_templates=[types.ResourceTemplate(
            uri_template=_RECENT_TEMPLATE, name="recent-memories", mime_type="application/json",
            description=f"The {RECENT} most recent memories of one user.")])

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        scope = _resource_scope(uri, tenancy)
        if scope is None:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown resource {uri!r:.200}")
        try:
            entries = await db.list(**scope, limit=RECENT, order="desc")
        except AgentBaseError as exc:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        text = json.dumps({"memories": [entry_json(e) for e in entries]}, ensure_ascii=False)
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, text=text, mime_type="application/json")])

    async def list_prompts(ctx: Any, params: Any) -> Any:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name="use-memory", description="How to use the agentbase memory tools well.")])

    async def get_prompt(ctx: Any, params: Any) -> Any:
        if params.name != "use-memory":
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt {params.name!r:.80}")
        return types.GetPromptResult(description="How to use the agentbase memory tools well.", messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=GUIDE))])

    return lowlevel.Server(
        name, version=_version(), instructions=GUIDE,
        on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource, on_list_prompts=list_prompts, on_get_prompt=get_prompt)


def _input_schema(spec: ToolSpec, tenancy: Tenancy) -> dict[str, Any]:
    if spec.scoped_by_tenancy:
        return tenancy.schema(spec.properties, spec.required)
    return {"type": "object", "properties": spec.properties, "required": spec.required, "additionalProperties": False}


def _first_error(validator: Any, arguments: Any) -> str | None:
    """The first schema violation as a short sentence (never echoing a huge or hostile value)."""
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (len(e.absolute_path), str(e.absolute_path)))
    if not errors:
        return None
    err = errors[0]
    where = ".".join(str(p) for p in err.absolute_path) or "arguments"
    kind, limit = err.validator, err.validator_value
    if kind == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        names = ", ".join(repr(k)[:80] for k in extra[:5])
        if any(k in ("user_id", "agent_id") for k in extra) and where == "arguments":
            return (f"unexpected argument(s) {names} - this server is single-tenant: its scope is fixed "
                    "when it starts and calls cannot choose another")
        return f"unexpected argument(s) {names}"
    if kind == "required":
        missing = [k for k in limit if isinstance(err.instance, dict) and k not in err.instance]
        field = ".".join([*(str(p) for p in err.absolute_path), missing[0]]) if missing else where
        return f"{field} is required"
    if kind == "enum":
        return f"{where} must be one of {', '.join(map(str, limit))}"
    messages = {
        "type": "{where} must be of type {limit}",
        "maxLength": "{where} is longer than {limit} characters",
        "minLength": "{where} must not be empty",
        "maxItems": "{where} has more than {limit} items",
        "minItems": "{where} needs at least {limit} item(s)",
        "maximum": "{where} must be at most {limit}",
        "minimum": "{where} must be at least {limit}",
        "maxProperties": "{where} has more than {limit} keys",
        "minProperties": "{where} must name at least {limit} key(s)",
    }
    return messages.get(kind, "{where} is invalid ({kind})").format(where=where, limit=limit, kind=kind)


def _resource_scope(uri: str, tenancy: Tenancy) -> Scope | None:
    if not tenancy.multi:
        return tenancy.fixed() if uri == _RECENT_URI else None
    prefix, suffix = "agentbase://users/", "/memories/recent"
    if uri.startswith(prefix) and uri.endswith(suffix):
        from urllib.parse import unquote

        user_id = unquote(uri[len(prefix):-len(suffix)])
        if user_id and "/" not in user_id:
            return {"user_id": user_id}
    return None


def _version() -> str:
    from agentbase_kernel import __version__

    return __version__
