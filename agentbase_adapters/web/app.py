"""The dashboard's routes: one server-rendered page per view, read-only unless ``allow_edit``.

Endpoints are plain ``def`` functions: Starlette runs them in its thread pool, so the kernel's
synchronous calls never block the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, urlencode

from agentbase_adapters._require import require
from agentbase_kernel import (
    AgentBaseError,
    ContextType,
    EntryNotFound,
    InvalidArgument,
    Kernel,
    NotFoundError,
    Scope,
    SessionNotFound,
)

require("starlette", extra="web")
require("jinja2", extra="web")

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from agentbase_adapters._http_guard import HttpGuard, Refusal

from . import charts
from .queries import TIMELINE_SPANS, WEEKDAYS, Queries, SessionScopeArgs, scope_args, scope_label

__all__ = ["VIEWS", "create_app"]

_SCOPE_KEYS = ("user_id", "agent_id", "project_id", "session_id")
_PER_PAGE = 25
_MAX_PAGE = 1_000_000
_MAX_SEARCH_PAGE = 40  # a search page n asks find() for n * 25 results: at most 1000

# (path, name, what it shows): the overview links every one of them.
VIEWS: tuple[tuple[str, str, str], ...] = (
    ("/", "Overview", "counts by type, category and scope; file, embedder, NER stage, vectors, verify"),
    ("/timeline", "Timeline", "entries created over the last day, week, month or all time, by context type"),
    ("/heatmap", "Activity heatmap", "entries created by weekday and hour (UTC)"),
    ("/sunburst", "Category sunburst", "context type, then category, then tag"),
    ("/freshness", "Freshness", "age of entries, current vs superseded"),
    ("/tags", "Tag cloud", "the most used tags and entities"),
    ("/activity", "Activity feed", "latest writes, updates, supersessions and deletes"),
    ("/memories", "Memory browser", "search and page through entries; one entry's tiers, history, sources"),
    ("/traces", "Retrieval traces", "recent find calls, each step and why each result ranked"),
    ("/entities", "Entity graph", "entities and their co-occurrence links"),
    ("/sessions", "Sessions", "conversations with the memories derived from them"),
    ("/proposals", "Proposals", "agents' writes waiting for a person (approve or reject); outcomes and confidence"),
)


@dataclass
class _State:
    kernel: Kernel
    queries: Queries
    allow_edit: bool
    env: Environment


def _scope(request: Request) -> Scope:
    values = {k: request.query_params.get(k) or None for k in _SCOPE_KEYS}
    return Scope(**values)


def _int(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise HTTPException(400, f"{name} must be an integer, got {raw!r:.40}") from None
    if not lo <= value <= hi:
        raise HTTPException(400, f"{name} must be between {lo} and {hi}, got {value}")
    return value


def _score(request: Request, name: str) -> float | None:
    """An optional score threshold in [0, 1] (``find(min_score=)``); 400 for anything else."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    try:
        value = float(raw)
    except ValueError:
        raise HTTPException(400, f"{name} must be a number between 0 and 1, got {raw!r:.40}") from None
    if not 0 <= value <= 1:  # also refuses nan
        raise HTTPException(400, f"{name} must be a number between 0 and 1, got {raw!r:.40}")
    return value


def _fmt_time(value: Any) -> str:
    if isinstance(value, str):
        text = value
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            return text
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    return "" if value is None else str(value)


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _segment(value: Any) -> str:
    """Percent-encode an id for a URL path segment or query value (ids may hold '/', '?', '#')."""
    return quote(str(value), safe="")


def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                      autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)
    env.filters["time"] = _fmt_time
    env.filters["bytes"] = _fmt_bytes
    env.filters["q"] = _segment
    env.globals["VIEWS"] = VIEWS
    return env


def create_app(kernel: Kernel, *, allow_edit: bool = False, api_key: str | None = None,
               cache_seconds: float = 30.0, warm_up: bool = False) -> HttpGuard:
    """The dashboard over an open kernel (the caller owns and closes it), behind ``HttpGuard``.

    Args:
        kernel: An initialised ``Kernel`` on the file to show.
        allow_edit: Offer edit and delete on entry pages; otherwise every write route answers 403.
        api_key: Require ``Authorization: Bearer <key>`` (for a dashboard behind a proxy that
            adds it; a browser alone cannot send it). Without a key only loopback clients are served.
        cache_seconds: How long one scan of a scope serves the aggregate views before a
            background re-scan (0: every view reads the file again).
        warm_up: Start the whole-file scan and the verify in the background now (``serve`` does),
            so the first page view does not wait for them.
    """
    state = _State(kernel, Queries(kernel, ttl=cache_seconds), allow_edit, _environment())
    if warm_up:
        state.queries.warm_up()

    def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        scope = _scope(request)
        query = urlencode({k: v for k, v in scope.as_dict().items()})
        context.setdefault("data_age", state.queries.age(scope))
        html = state.env.get_template(template).render(
            request=request, scope=scope, scope_query=("?" + query) if query else "", scope_label=scope_label(scope),
            allow_edit=state.allow_edit, path=request.url.path, **context)
        return HTMLResponse(html, status_code=status)

    def overview(request: Request) -> Response:
        scope = _scope(request)
        report, age = state.queries.verify(wait=False)
        return page(request, "overview.html", counts=state.queries.counts(scope), info=kernel.info(),
                    size=state.queries.file_size(), verify=report, verify_age=age,
                    sessions=len(kernel.list_sessions(**_session_scope(scope), limit=None)))

    def timeline(request: Request) -> Response:
        span = request.query_params.get("span") or "auto"
        if span not in TIMELINE_SPANS:
            raise HTTPException(400, f"span must be one of {', '.join(TIMELINE_SPANS)}, got {span!r:.40}")
        data = state.queries.timeline(_scope(request), span=span)
        svg = charts.stacked_columns(data["labels"], data["series"], label=f"entries per {data['bin']} by type")
        caption = ""
        if data["labels"]:
            caption = (f"last {data['span']}" if data["span"] != "all" else "everything") + (
                " (chosen from the data; pick another below)" if span == "auto" else "") + (
                f", per {data['bin']}, {_fmt_time(data['start'])} to {_fmt_time(data['end'])} UTC")
            if data["outside"]:
                caption += f"; {data['outside']} older entries are outside this range"
        scope_q = {k: v for k, v in _scope(request).as_dict().items()}
        choices = [(name, "/timeline?" + urlencode({**scope_q, "span": name}), name == span)
                   for name in TIMELINE_SPANS]
        return page(request, "chart.html", title="Timeline", chart=svg, choices=choices,
                    total=sum(map(sum, data["series"].values())), caption=caption)

    def heatmap(request: Request) -> Response:
        grid = state.queries.heatmap(_scope(request))
        svg = charts.heatmap(grid, WEEKDAYS, label="entries by weekday and hour")
        return page(request, "chart.html", title="Activity heatmap", chart=svg, total=sum(map(sum, grid)),
                    caption="creation time of each entry, weekday x hour, UTC")

    def sunburst(request: Request) -> Response:
        tree = state.queries.sunburst(_scope(request))
        table = [(t["name"], c["name"], c["value"]) for t in tree["children"] for c in t["children"]]
        return page(request, "chart.html", title="Category sunburst", total=tree["value"],
                    chart=charts.sunburst(tree, label="type, category, tag"), table=table,
                    table_head=("type", "category", "entries"),
                    caption="inner ring: context type; middle: category; outer: tag (an entry with two tags counts twice)")

    def freshness(request: Request) -> Response:
        bins = state.queries.freshness(_scope(request))
        svg = charts.hbars(bins, ("current", "superseded"), label="age of entries")
        return page(request, "chart.html", title="Freshness", chart=svg,
                    total=sum(b["current"] + b["superseded"] for b in bins),
                    caption="age since creation; superseded = replaced by a newer entry (invalid_at set)",
                    table=[(b["label"], b["current"], b["superseded"]) for b in bins],
                    table_head=("age", "current", "superseded"))

    def tags(request: Request) -> Response:
        counts = state.queries.tag_counts(_scope(request))
        entities = state.queries.entity_counts(_scope(request))
        q = {**_scope(request).as_dict()}
        href = "/memories?" + urlencode(q) + ("&" if q else "") + "tag="
        clouds = Markup(f'<h2 id="user-tags">Tags</h2>{charts.tag_cloud(counts, href=href, label="tags")}'
                        f'<h2 id="entity-tags">Entities</h2>'
                        f'{charts.tag_cloud(entities, href=href + "ner_", label="entities")}')
        return page(request, "chart.html", title="Tag cloud", total=sum(n for _, n in counts), chart=clouds,
                    caption=f"{len(counts)} tags the callers gave, then {len(entities)} entities NER found "
                            "(numbers and quantities left out)")

    def activity(request: Request) -> Response:
        limit = _int(request, "limit", 50, 1, 500)
        events = state.queries.activity(_scope(request), limit=limit)
        return page(request, "activity.html", events=events)

    def memories(request: Request) -> Response:
        scope = _scope(request)
        q = (request.query_params.get("q") or "").strip()
        filters = _filters(request)
        pg = _int(request, "page", 1, 1, _MAX_SEARCH_PAGE if q else _MAX_PAGE)
        trace_id = None
        warnings: list[str] = []
        min_score = _score(request, "min_score")
        if q:
            found = kernel.find(q, top_k=pg * _PER_PAGE, min_score=min_score, **scope_args(scope), **filters)
            rows = [{"entry": h.entry, "score": h.score, "matched_by": h.matched_by, "similarity": h.similarity}
                    for h in found.hits[(pg - 1) * _PER_PAGE:]]
            trace_id, total = found.trace.id, None
            warnings = [w.message for w in found.skill_warnings]
            more = len(found.hits) == pg * _PER_PAGE
        else:
            if filters.get("context_type") not in (None, *(t.value for t in ContextType)):
                raise InvalidArgument(f"context_type must be one of {[t.value for t in ContextType]}")
            ids = state.queries.newest_first(scope, **filters)
            rows = [{"entry": e} for e in _entries(kernel, ids[(pg - 1) * _PER_PAGE:pg * _PER_PAGE])]
            total = len(ids)
            more = pg * _PER_PAGE < total
        params = {k: v for k, v in request.query_params.items() if k != "page" and v}
        return page(request, "memories.html", q=q, rows=rows, total=total, page_no=pg, more=more, min_score=min_score,
                    trace_id=trace_id, skill_warnings=warnings, filters=filters, params=params, per_page=_PER_PAGE,
                    types=[t.value for t in ContextType], query_string=urlencode(params))

    def entry(request: Request) -> Response:
        entry_id = request.path_params["entry_id"]
        e = kernel.get(entry_id)
        skill = None
        if e.context_type == ContextType.SKILL:  # a named skill: its version, health and warning
            skill = next((s for s in kernel.list_skills(**scope_args(e.scope), all_versions=True) if s.id == e.id),
                         None)
        return page(request, "entry.html", e=e, skill=skill, history=kernel.history(entry_id),
                    sources=state.queries.source_turns(e), entities=state.queries.entities_of(e),
                    predecessors=state.queries.superseded(entry_id), successors=state.queries.successors(e),
                    scope_text=scope_label(e.scope), user_tags=[t for t in e.tags if not t.startswith("ner_")])

    async def edit(request: Request) -> Response:
        _allowed(state)
        entry_id = request.path_params["entry_id"]
        form = await request.form()
        text = str(form.get("text") or "").strip()
        category = str(form.get("category") or "").strip()
        tag_text = str(form.get("tags") or "")
        tags = [t.strip() for t in tag_text.split(",") if t.strip()]
        current = kernel.get(entry_id)
        kernel.update(entry_id, text=text if text and text != current.l2_full else None,
                      category=category or None, tags=tags, actor="dashboard")
        state.queries.forget()
        return RedirectResponse(f"/memories/{_segment(entry_id)}", status_code=303)

    async def delete(request: Request) -> Response:
        _allowed(state)
        entry_id = request.path_params["entry_id"]
        await request.form()
        gone = kernel.delete(entry_id, actor="dashboard")
        state.queries.forget()
        state.queries.remember_delete(gone, "dashboard")
        return RedirectResponse("/memories", status_code=303)

    def proposals(request: Request) -> Response:
        s = _scope(request)
        mine = kernel.scope(user_id=s.user_id, agent_id=s.agent_id, project_id=s.project_id, session_id=s.session_id)
        pending = mine.list_proposals(status="pending", limit=_PER_PAGE * 4)
        decided = [p for p in mine.list_proposals(status=None, limit=None) if p.status != "pending"][-_PER_PAGE:][::-1]
        return page(request, "proposals.html", pending=pending, decided=decided, zones=kernel.zones(),
                    learned=mine.outcome_stats())

    def _reviewer() -> Kernel:
        return kernel.view(source="dashboard")  # a person's tool: what it approves is human_approved

    async def approve(request: Request) -> Response:
        _allowed(state)
        await request.form()
        _reviewer().approve(request.path_params["proposal_id"], reviewer="dashboard")
        state.queries.forget()
        return RedirectResponse("/proposals", status_code=303)

    async def reject(request: Request) -> Response:
        _allowed(state)
        form = await request.form()
        _reviewer().reject(request.path_params["proposal_id"], reason=str(form.get("reason") or "").strip(),
                           reviewer="dashboard")
        return RedirectResponse("/proposals", status_code=303)

    def traces(request: Request) -> Response:
        limit = _int(request, "limit", 50, 1, 500)
        return page(request, "traces.html", traces=state.queries.traces(_scope(request), limit=limit))

    def trace(request: Request) -> Response:
        t = state.queries.trace(request.path_params["trace_id"])
        if t is None:
            raise HTTPException(404, "No such trace among the 500 most recent")
        results = []
        for rank, rid in enumerate(t["result_ids"], 1):
            try:
                results.append({"rank": rank, "entry": kernel.get(rid)})
            except EntryNotFound:
                results.append({"rank": rank, "entry": None, "id": rid})
        replay = None
        if request.query_params.get("replay"):
            found = state.queries.replay(t)
            replay = [{"rank": i, "hit": h, "was": t["result_ids"].index(h.id) + 1 if h.id in t["result_ids"] else None}
                      for i, h in enumerate(found.hits, 1)]
        peak = max((s["ms"] for s in t["steps"]), default=0) or 1
        return page(request, "trace.html", t=t, results=results, replay=replay, peak=peak)

    def entities(request: Request) -> Response:
        scope = _scope(request)
        entity = request.query_params.get("entity") or None
        limit = _int(request, "limit", 60, 1, 500)
        graph = state.queries.entity_graph(scope, entity=entity, limit=limit)
        q = scope.as_dict()
        href = "/entities?" + urlencode(q) + ("&" if q else "") + "entity="
        return page(request, "entities.html", graph=graph, entity=entity, limit=limit,
                    chart=charts.entity_graph(graph, href=href, label="entity graph"))

    def sessions(request: Request) -> Response:
        scope = _scope(request)
        pg = _int(request, "page", 1, 1, 10_000)
        found = kernel.list_sessions(**_session_scope(scope), limit=_PER_PAGE + 1, offset=(pg - 1) * _PER_PAGE)
        rows = [{"s": s, "messages": kernel.count_messages(s.id), "scope": scope_label(s.scope),
                 "origin": state.queries.session_origin(s)} for s in found[:_PER_PAGE]]
        return page(request, "sessions.html", rows=rows, page_no=pg, more=len(found) > _PER_PAGE)

    def session(request: Request) -> Response:
        sid = request.path_params["session_id"]
        s = kernel.get_session(sid)
        messages = kernel.list_messages(sid)
        derived = kernel.list(session_id=sid, include_invalid=True, include_expired=True, limit=None)
        turn_ids = {m.entry_id for m in messages if m.entry_id}
        by_id = {e.id: e for e in derived}
        others = [e for e in derived if e.id not in turn_ids]
        summary = by_id.get(s.summary_entry_id or "")
        return page(request, "session.html", s=s, messages=messages, by_id=by_id, others=others,
                    summary=summary, scope_text=scope_label(s.scope))

    def not_found(request: Request, exc: Exception) -> Response:
        return _error(request, 404, str(exc.args[0]) if exc.args else "Not found")

    def bad_request(request: Request, exc: Exception) -> Response:
        return _error(request, 400, str(exc))

    def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return _error(request, exc.status_code, exc.detail)

    def failure(request: Request, exc: Exception) -> Response:
        return _error(request, 500, f"{type(exc).__name__}: {exc}")

    def _error(request: Request, status: int, message: str) -> Response:
        return page(request, "error.html", status=status, status_code=status, message=message)

    routes = [
        Route("/", overview), Route("/timeline", timeline), Route("/heatmap", heatmap),
        Route("/sunburst", sunburst), Route("/freshness", freshness), Route("/tags", tags),
        # ids may contain '/': the path converter takes the rest of the path (write routes first)
        Route("/activity", activity), Route("/memories", memories),
        Route("/memories/{entry_id:path}/edit", edit, methods=["POST"]),
        Route("/memories/{entry_id:path}/delete", delete, methods=["POST"]),
        Route("/memories/{entry_id:path}", entry),
        Route("/traces", traces), Route("/traces/{trace_id}", trace), Route("/entities", entities),
        Route("/sessions", sessions), Route("/sessions/{session_id:path}", session),
        Route("/proposals", proposals),
        Route("/proposals/{proposal_id}/approve", approve, methods=["POST"]),
        Route("/proposals/{proposal_id}/reject", reject, methods=["POST"]),
    ]
    handlers: dict[Any, Any] = {
        HTTPException: http_error, EntryNotFound: not_found, SessionNotFound: not_found, NotFoundError: not_found,
        InvalidArgument: bad_request, AgentBaseError: failure,
    }
    app = Starlette(routes=routes, exception_handlers=handlers)
    # Form posts, not JSON: cross-site writes are refused by the same-origin rule (Sec-Fetch-Site
    # / Origin); an entry edit is a few KiB, so 1 MiB is a generous body limit.
    return HttpGuard(app, api_key=api_key, writes="same-origin", body_limit=1 << 20, error_body=_refusal_text,
                     response_headers=SECURITY_HEADERS)


#: Sent with every page and every refusal. The pages are server-rendered HTML and inline SVG with
#: no script at all, so none may run; styles are inline (one <style>, a few style attributes);
#: forms post only to this server; and no other site may frame the edit/delete forms (clickjacking).
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
                                "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def _refusal_text(refusal: Refusal) -> str:
    return f"{refusal.status} {refusal.code}: {refusal.message}"


def _filters(request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("context_type", "category", "role"):
        value = request.query_params.get(name)
        if value:
            out[name] = value
    tags = [t for t in request.query_params.getlist("tag") if t]
    if tags:
        out["tags"] = tags
    return out


def _entries(kernel: Kernel, ids: list[str]) -> list[Any]:
    """The entries of ``ids`` in that order; one deleted since the scan is left out."""
    out = []
    for entry_id in ids:
        try:
            out.append(kernel.get(entry_id))
        except EntryNotFound:
            continue
    return out


def _session_scope(scope: Scope) -> SessionScopeArgs:
    return cast(SessionScopeArgs, {k: v for k, v in scope.as_dict().items() if k != "session_id"})


def _allowed(state: _State) -> None:
    if not state.allow_edit:
        raise HTTPException(403, "This dashboard is read-only: start it with --allow-edit to change entries")
