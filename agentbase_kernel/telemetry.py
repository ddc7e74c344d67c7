"""Optional OpenTelemetry spans for the kernel's add / find / commit_session calls (the ``otel`` extra).

Off unless the application has configured a tracer provider: agentbase never imports
OpenTelemetry itself. It looks for ``opentelemetry.trace`` in ``sys.modules`` (an application that
set a provider has imported it) and asks it for the provider; the API's default (proxy or no-op)
provider means "off", so an untraced call costs one dict lookup and one ``isinstance``.

The retrieval pipeline already times every step into ``FindResult.trace``; ``find``'s child spans
are built from those recorded steps (steps run back to back, so each starts where the previous
ended), not by instrumenting the pipeline. Ingest records no steps: its spans carry attributes.
What is recorded is listed in docs/observability.md; no memory or query text ever is.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any, Concatenate, ParamSpec, TypeVar

from .records import AddResult, Entry, FindResult, Message, Scope

__all__ = ["traced"]

P = ParamSpec("P")
R = TypeVar("R")
K = TypeVar("K")

_INSTRUMENTATION = "agentbase"
#: opt-in: record user_id / agent_id / project_id / session_id values (they may identify people)
SCOPE_IDS_ENV = "AGENTBASE_OTEL_SCOPE_IDS"
_SCOPE_KEYS = ("user_id", "agent_id", "project_id", "session_id")
_cached: tuple[Any, Any] = (None, None)  # (provider, its tracer): the last provider seen, no growth
# inside a traced call: a public call made by another (``Kernel.find`` is ``scope(...).find``) is
# part of it, not a span of its own
_inside: ContextVar[bool] = ContextVar("agentbase_traced", default=False)


def _tracer() -> tuple[Any, Any] | None:
    """(the ``opentelemetry.trace`` module, a tracer) when a real provider is configured, else None."""
    api = sys.modules.get("opentelemetry.trace")
    if api is None:
        return None
    provider = api.get_tracer_provider()
    if isinstance(provider, (api.ProxyTracerProvider, api.NoOpTracerProvider)):
        return None
    global _cached
    cached = _cached  # one read: another thread may swap it
    if cached[0] is not provider:
        from . import __version__

        cached = _cached = (provider, provider.get_tracer(_INSTRUMENTATION, __version__))
    return api, cached[1]


def traced(operation: str) -> Callable[[Callable[Concatenate[K, P], R]], Callable[Concatenate[K, P], R]]:
    """Wrap a public ``Kernel`` method in a span named ``agentbase.<operation>`` when tracing is on."""

    def wrap(method: Callable[Concatenate[K, P], R]) -> Callable[Concatenate[K, P], R]:
        @functools.wraps(method)
        def call(self: K, /, *args: P.args, **kwargs: P.kwargs) -> R:
            found = None if _inside.get() else _tracer()
            if found is None:
                return method(self, *args, **kwargs)
            api, tracer = found
            start = time.time_ns()
            span = tracer.start_span(f"agentbase.{operation}", kind=api.SpanKind.INTERNAL, start_time=start,
                                     attributes=_call_attributes(operation, {**_bound_scope(self), **kwargs}))
            token = _inside.set(True)
            try:
                with api.use_span(span, end_on_exit=True, record_exception=True, set_status_on_exception=True):
                    try:
                        result = method(self, *args, **kwargs)
                    except Exception as exc:
                        span.set_attribute("error.type", type(exc).__qualname__)
                        raise
                    try:
                        _describe(api, tracer, span, start, getattr(self, "_kernel", self), result)
                    except Exception as exc:  # telemetry must never fail the user's call
                        span.set_attribute("agentbase.telemetry_error", type(exc).__qualname__)
                    return result
            finally:
                _inside.reset(token)

        return call

    return wrap


def _bound_scope(target: Any) -> dict[str, Any]:
    """The ids of a scope-bound handle's scope (``kernel.scope(...)``), as the call's scope keywords."""
    scope = getattr(target, "scope", None)
    return scope.as_dict() if isinstance(scope, Scope) else {}


def _call_attributes(operation: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": operation, "gen_ai.system": "agentbase",
        "db.system": "sqlite", "db.system.name": "sqlite", "db.operation.name": operation,
    }
    given = [k for k in _SCOPE_KEYS if kwargs.get(k) is not None]
    if given:
        attrs["agentbase.scope.keys"] = given
        if os.environ.get(SCOPE_IDS_ENV, "").lower() in ("1", "true", "yes"):
            attrs.update({f"agentbase.scope.{k}": str(kwargs[k]) for k in given})
    for key in ("top_k", "strategy", "token_budget"):
        if isinstance(kwargs.get(key), (int, str)):
            attrs[f"agentbase.find.{key}"] = kwargs[key]
    return attrs


def _describe(api: Any, tracer: Any, span: Any, start: int, kernel: Any, result: Any) -> None:
    """Result attributes (and, for ``find``, one child span per recorded pipeline step)."""
    ingestor = getattr(kernel, "_ingestor", None)
    if ingestor is not None:
        span.set_attribute("agentbase.ner_stage", str(ingestor.ner_stage))
        span.set_attribute("agentbase.embedder", str(getattr(ingestor.embedder, "name", None) or "none"))
        span.set_attribute("agentbase.defer_embedding", bool(ingestor.defer_embedding))
    if isinstance(result, FindResult):
        _describe_find(api, tracer, span, start, result)
    elif isinstance(result, AddResult):
        _describe_adds(span, [result])
    elif isinstance(result, Entry):
        span.set_attribute("agentbase.entry.id", result.id)
    elif isinstance(result, list) and all(isinstance(r, AddResult) for r in result):
        _describe_adds(span, result)
    elif isinstance(result, list) and all(isinstance(m, Message) for m in result):
        span.set_attribute("agentbase.messages.count", len(result))
        span.set_attribute("agentbase.messages.ingested", sum(m.entry_id is not None for m in result))


def _describe_adds(span: Any, results: Iterable[AddResult]) -> None:
    counts: dict[str, int] = {}
    facts = superseded = items = 0
    for r in results:
        items += 1
        counts[r.event] = counts.get(r.event, 0) + 1
        facts += len(r.facts)
        superseded += len(r.superseded)
    span.set_attribute("agentbase.add.items", items)
    for event, n in sorted(counts.items()):
        span.set_attribute(f"agentbase.add.{event.lower()}", n)
    span.set_attribute("agentbase.add.facts", facts)
    span.set_attribute("agentbase.add.superseded", superseded)


def _describe_find(api: Any, tracer: Any, span: Any, start: int, result: FindResult) -> None:
    trace = result.trace
    span.set_attribute("agentbase.trace_id", trace.id)
    span.set_attribute("agentbase.find.result_count", len(result))
    span.set_attribute("agentbase.find.intents", list(trace.intents))
    if trace.degrade_reason:
        span.set_attribute("agentbase.degrade_reason", trace.degrade_reason)
    parent = api.set_span_in_context(span)
    now = time.time_ns()
    at = start
    for step in trace.steps:
        end = min(at + round(step.ms * 1_000_000), now)
        attrs: dict[str, Any] = {"agentbase.step.name": step.name, "agentbase.step.candidates": step.candidates,
                                 "agentbase.trace_id": trace.id}
        # numbers and flags only: string params hold query text (normalised query, subqueries)
        attrs.update({f"agentbase.step.{k}": v for k, v in step.params.items()
                      if isinstance(v, (int, float, bool))})
        child = tracer.start_span(f"agentbase.find.{step.name}", context=parent, kind=api.SpanKind.INTERNAL,
                                  start_time=at, attributes=attrs)
        child.end(end_time=end)
        at = end
