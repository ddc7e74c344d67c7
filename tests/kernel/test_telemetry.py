"""OpenTelemetry spans: emitted through the SDK's in-memory exporter when a provider is configured,
nothing otherwise, and no import at all when the package is missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from opentelemetry import trace as trace_api
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agentbase_kernel import AgentBase, InvalidArgument, telemetry


@pytest.fixture
def exporter(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    """A real SDK provider as the global one for this test only (monkeypatch restores the API's global)."""
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)  # another suite's conftest may switch the SDK off
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    monkeypatch.setattr(trace_api, "_TRACER_PROVIDER", provider)
    return memory


def _by_name(spans, name):
    found = [s for s in spans if s.name == name]
    assert found, f"no span {name!r} in {[s.name for s in spans]}"
    return found


def _all_attribute_values(spans) -> str:
    return " ".join(str(v) for s in spans for v in (s.attributes or {}).values())


def test_find_span_has_one_child_per_recorded_step(kernel, exporter) -> None:
    kernel.add_memory("Alice moved to Lisbon in March to work on tidal energy", user_id="alice")
    exporter.clear()
    result = kernel.find("where does alice live", user_id="alice", top_k=5)
    spans = exporter.get_finished_spans()

    (find,) = _by_name(spans, "agentbase.find")
    attrs = find.attributes
    assert attrs["gen_ai.operation.name"] == "find"
    assert attrs["gen_ai.system"] == "agentbase"
    assert attrs["db.system"] == "sqlite" and attrs["db.operation.name"] == "find"
    assert attrs["agentbase.trace_id"] == result.trace.id
    assert attrs["agentbase.find.result_count"] == len(result) >= 1
    assert attrs["agentbase.find.top_k"] == 5
    assert attrs["agentbase.scope.keys"] == ("user_id",)
    assert "agentbase.scope.user_id" not in attrs  # ids only on opt-in
    assert attrs["agentbase.embedder"] == kernel.info()["embedder"] == "test-hash-64"
    assert find.status.status_code is not StatusCode.ERROR

    children = [s for s in spans if s.parent is not None and s.parent.span_id == find.context.span_id]
    assert [c.name for c in children] == [f"agentbase.find.{s.name}" for s in result.trace.steps]
    assert all(c.context.trace_id == find.context.trace_id for c in children)
    for child, step in zip(children, result.trace.steps):
        assert find.start_time <= child.start_time <= child.end_time <= find.end_time
        assert child.attributes["agentbase.step.candidates"] == step.candidates
        assert abs((child.end_time - child.start_time) / 1e6 - step.ms) < 0.01 or child.end_time == find.end_time
    # steps run back to back: each child starts where the previous one ended
    assert all(a.end_time == b.start_time for a, b in zip(children, children[1:]))
    # no query or memory text in any attribute (the normalised query is a string step param)
    assert "alice" not in _all_attribute_values(spans).lower()


def test_add_and_session_calls_each_make_one_span(kernel, exporter) -> None:
    kernel.add_memory("I like green tea", user_id="u1")
    kernel.add_memory("I like green tea", user_id="u1")  # exact duplicate: NOOP
    kernel.add_memories([{"text": "Bob plays chess", "user_id": "u1"}, {"text": "Bob owns a cat", "user_id": "u1"}])
    kernel.add_message("s1", "user", "My sister Carol lives in Oslo", user_id="u1")
    kernel.add_messages("s1", [{"role": "assistant", "content": "Noted about Oslo"},
                               {"role": "user", "content": "skip me", "ingest": False}])
    summary = kernel.commit_session("s1")
    spans = exporter.get_finished_spans()

    first, dup = _by_name(spans, "agentbase.add_memory")
    assert first.attributes["agentbase.add.add"] == 1 and first.attributes["agentbase.add.items"] == 1
    assert dup.attributes["agentbase.add.noop"] == 1 and "agentbase.add.add" not in dup.attributes
    assert first.attributes["agentbase.ner_stage"] == kernel.info()["ner_stage"]
    assert first.attributes["agentbase.defer_embedding"] is False
    (bulk,) = _by_name(spans, "agentbase.add_memories")
    assert bulk.attributes["agentbase.add.items"] == 2
    one, many = _by_name(spans, "agentbase.add_messages")  # add_message is add_messages with one turn
    assert one.attributes["agentbase.messages.count"] == 1 and one.attributes["agentbase.messages.ingested"] == 1
    assert many.attributes["agentbase.messages.count"] == 2
    assert many.attributes["agentbase.messages.ingested"] == 1
    (commit,) = _by_name(spans, "agentbase.commit_session")
    assert commit.attributes["agentbase.entry.id"] == summary.id
    assert commit.attributes["gen_ai.operation.name"] == "commit_session"
    assert all(s.parent is None for s in spans)  # public calls do not nest inside each other
    text = _all_attribute_values(spans).lower()
    assert "tea" not in text and "oslo" not in text and "chess" not in text


def test_scope_ids_are_recorded_only_on_opt_in(kernel, exporter, monkeypatch) -> None:
    monkeypatch.setenv(telemetry.SCOPE_IDS_ENV, "1")
    kernel.add_memory("I like green tea", user_id="alice", agent_id="bot")
    (span,) = exporter.get_finished_spans()
    assert span.attributes["agentbase.scope.user_id"] == "alice"
    assert span.attributes["agentbase.scope.agent_id"] == "bot"


def test_spans_nest_under_the_callers_span_across_the_async_thread(db, exporter) -> None:
    import asyncio

    tracer = trace_api.get_tracer("app")

    async def run() -> None:
        with tracer.start_as_current_span("agent.turn"):
            await db.add_memory("Dana drinks oat milk", user_id="d")
            await db.find("oat milk", user_id="d")

    asyncio.run(run())
    spans = exporter.get_finished_spans()
    (turn,) = _by_name(spans, "agent.turn")
    for name in ("agentbase.add_memory", "agentbase.find"):
        (span,) = _by_name(spans, name)
        assert span.parent is not None and span.parent.span_id == turn.context.span_id


def test_a_failing_call_ends_its_span_with_an_error(kernel, exporter) -> None:
    with pytest.raises(InvalidArgument):
        kernel.find("   ", user_id="u")
    (span,) = exporter.get_finished_spans()
    assert span.name == "agentbase.find"
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "InvalidArgument"
    assert [e.name for e in span.events] == ["exception"]


@pytest.mark.parametrize("provider", [None, trace_api.NoOpTracerProvider()], ids=["default-proxy", "no-op"])
def test_nothing_is_emitted_without_a_configured_provider(kernel, monkeypatch, provider) -> None:
    memory = InMemorySpanExporter()
    unused = TracerProvider()  # exists, but is not the configured provider
    unused.add_span_processor(SimpleSpanProcessor(memory))
    monkeypatch.setattr(trace_api, "_TRACER_PROVIDER", provider)
    assert telemetry._tracer() is None
    kernel.add_memory("I like green tea", user_id="u")
    assert len(kernel.find("tea", user_id="u")) == 1
    assert memory.get_finished_spans() == ()


def test_works_when_opentelemetry_is_not_installed(db_path, hash_embedder, monkeypatch) -> None:
    for name in [m for m in sys.modules if m == "opentelemetry" or m.startswith("opentelemetry.")]:
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: `import` raises ImportError
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(ImportError):
        import opentelemetry.trace  # noqa: F401
    base = AgentBase(db_path, embedder=hash_embedder, ner="regex")
    with base.sync as k:
        k.add_memory("I like green tea", user_id="u")
        assert k.find("green tea", user_id="u")[0].entry.text == "I like green tea"
        k.add_messages("s", [{"role": "user", "content": "hello there"}], user_id="u")
        assert k.commit_session("s").category == "session_summary"


def test_the_kernel_never_imports_opentelemetry_itself(tmp_path) -> None:
    code = textwrap.dedent(f"""
        import sys
        from agentbase_kernel import Kernel
        with Kernel({str(tmp_path / "m.db")!r}, embedder=None, ner="regex") as k:
            k.add_memory("I like green tea", user_id="u")
            k.find("tea", user_id="u")
        print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_a_scope_handle_call_is_one_span_with_its_scope_keys(kernel, exporter) -> None:
    alice = kernel.scope(user_id="alice", session_id="s1")
    alice.add_memory("Alice moved to Lisbon")
    alice.find("where does alice live", top_k=3)
    spans = [s for s in exporter.get_finished_spans() if s.parent is None]  # a find's steps are its children
    assert [s.name for s in spans] == ["agentbase.add_memory", "agentbase.find"]
    assert all(s.attributes["agentbase.scope.keys"] == ("user_id", "session_id") for s in spans)
    assert spans[1].attributes["agentbase.find.top_k"] == 3
    assert spans[0].attributes["agentbase.ner_stage"] == kernel.info()["ner_stage"]
