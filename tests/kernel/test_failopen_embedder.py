"""Fail-open remote embedders, against a real local HTTP server that fails on command.

No test asserts a timing: cool-downs are small where recovery is tested and large where the
breaker must stay open, and waits are generous upper bounds that only stop a broken test.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from agentbase_kernel import Config, EmbedderUnavailable, Kernel
from agentbase_kernel.text.embedders import (
    CircuitBreaker,
    OllamaEmbedder,
    OpenAICompatibleEmbedder,
    TEIEmbedder,
    get_embedder,
)
from tests.conftest import HashEmbedder
from tests.kernel.fake_embedder_server import FakeEmbedderServer

DIM = HashEmbedder.dim


@pytest.fixture
def server() -> Iterator[FakeEmbedderServer]:
    with FakeEmbedderServer() as running:
        yield running


def _kernel(path, server: FakeEmbedderServer, *, failures: int = 2, cooldown: float = 60.0,
            timeout: float = 5.0, dim: int | None = DIM) -> Kernel:
    config = Config().with_(embedder={"breaker_failures": failures, "breaker_cooldown_seconds": cooldown,
                                      "timeout_seconds": timeout})
    embedder = OpenAICompatibleEmbedder("hash-64", base_url=f"{server.url}/v1", dim=dim)
    return Kernel(path, embedder=embedder, ner="regex", config=config).initialize()


def _until(condition, what: str, limit: float = 30.0) -> None:
    """Poll ``condition`` until it holds; ``limit`` only stops a broken test, it is not a timing claim."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for: {what}")
        time.sleep(0.02)


# --- the breaker's state machine, on a clock the test moves -------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_breaker_opens_after_n_consecutive_failures_only() -> None:
    breaker = CircuitBreaker(failure_threshold=3, cooldown_seconds=10, clock=_Clock())
    breaker.record_failure(OSError("down"))
    breaker.record_failure(OSError("down"))
    breaker.record_success()  # a success in between resets the count
    breaker.record_failure(OSError("down"))
    breaker.record_failure(OSError("down"))
    assert (breaker.state, breaker.allow()) == ("closed", True)
    breaker.record_failure(OSError("still down"))
    snap = breaker.snapshot()
    assert (snap.state, snap.consecutive_failures, snap.opened_count) == ("open", 3, 1)
    assert snap.last_error == "OSError: still down"
    assert breaker.allow() is False


def test_breaker_half_opens_after_the_cooldown_and_lets_one_trial_through() -> None:
    clock = _Clock()
    breaker = CircuitBreaker(failure_threshold=1, cooldown_seconds=10, clock=clock)
    breaker.record_failure("boom")
    clock.now += 9.5
    assert breaker.state == "open"
    assert breaker.retry_in() == pytest.approx(0.5)
    clock.now += 0.5
    assert breaker.state == "half_open"
    assert breaker.allow() is True   # the trial
    assert breaker.allow() is False  # nobody else while it is out
    breaker.record_success()
    assert (breaker.state, breaker.allow(), breaker.snapshot().consecutive_failures) == ("closed", True, 0)


def test_a_failed_trial_opens_the_breaker_for_a_new_cooldown() -> None:
    clock = _Clock()
    breaker = CircuitBreaker(failure_threshold=2, cooldown_seconds=10, clock=clock)
    breaker.record_failure("a")
    breaker.record_failure("b")
    clock.now += 10
    assert breaker.allow() is True
    breaker.record_failure("trial failed")  # one failure in half-open is enough
    assert breaker.state == "open"
    assert breaker.retry_in() == pytest.approx(10)
    assert breaker.snapshot().opened_count == 2


def test_an_interrupted_trial_frees_the_half_open_slot() -> None:
    import httpx

    class Interrupt(BaseException):
        pass

    calls: list[int] = []

    def transport(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            raise Interrupt  # Ctrl-C in the middle of the trial request
        return httpx.Response(200, json=[[1.0, 0.0, 0.0]])

    clock = _Clock()
    breaker = CircuitBreaker(failure_threshold=1, cooldown_seconds=5, clock=clock)
    embedder = TEIEmbedder("http://tei.local", breaker=breaker,
                           http_client=httpx.Client(transport=httpx.MockTransport(transport)))
    breaker.record_failure("down")
    clock.now += 5
    with pytest.raises(Interrupt):
        embedder.embed("hello")
    assert (breaker.state, breaker.snapshot().consecutive_failures) == ("half_open", 1)  # no verdict
    assert embedder.embed("hello").shape == (3,)  # the slot was freed: the next call is the trial
    assert (breaker.state, len(calls)) == ("closed", 2)


@pytest.mark.parametrize(("kwargs", "message"), [
    pytest.param({"failure_threshold": 0}, "failure_threshold must be an int >= 1, got 0", id="zero-failures"),
    pytest.param({"cooldown_seconds": -1}, "cooldown_seconds must be a number >= 0, got -1", id="negative-cooldown"),
])
def test_breaker_rejects_bad_settings(kwargs, message) -> None:
    with pytest.raises(ValueError) as excinfo:
        CircuitBreaker(**kwargs)
    assert str(excinfo.value) == message


# --- the three wire formats, and the breaker over real requests ---------------------------------


@pytest.mark.parametrize("make", [
    pytest.param(lambda url: OpenAICompatibleEmbedder("m", base_url=f"{url}/v1"), id="openai"),
    pytest.param(lambda url: TEIEmbedder(url, name="m"), id="tei"),
    pytest.param(lambda url: OllamaEmbedder("m", base_url=url), id="ollama"),
])
def test_each_wire_format_returns_the_servers_vectors(server: FakeEmbedderServer, make) -> None:
    embedder = make(server.url)
    texts = ["green tea in the morning", "a red bicycle"]
    np.testing.assert_allclose(embedder.embed_batch(texts), HashEmbedder().embed_batch(texts), atol=1e-6)
    assert embedder.dim == DIM
    assert server.total() == 1  # one request per batch; the size came from it


def test_get_embedder_builds_the_remote_kinds() -> None:
    tei = get_embedder("tei:bge-small@http://127.0.0.1:8080/")
    assert isinstance(tei, TEIEmbedder)
    assert (tei.name, tei.url) == ("bge-small", "http://127.0.0.1:8080/embed")
    ollama = get_embedder("ollama:nomic-embed-text@http://127.0.0.1:11434")
    assert isinstance(ollama, OllamaEmbedder)
    assert ollama.url == "http://127.0.0.1:11434/api/embed"
    assert get_embedder("ollama:nomic-embed-text").base_url == "http://127.0.0.1:11434"  # type: ignore[union-attr]


def test_the_breaker_walks_every_state_over_real_requests(server: FakeEmbedderServer) -> None:
    clock = _Clock()
    embedder = TEIEmbedder(server.url, breaker=CircuitBreaker(failure_threshold=2, cooldown_seconds=5, clock=clock))
    server.mode = "error"
    for _ in range(2):
        with pytest.raises(EmbedderUnavailable) as excinfo:
            embedder.embed("hello")
    assert excinfo.value.reason.startswith("HTTP 500 from")
    assert embedder.breaker.state == "open"
    sent = server.total()
    assert sent == 2
    for _ in range(50):  # open: refused here, nothing reaches the server
        with pytest.raises(EmbedderUnavailable) as excinfo:
            embedder.embed("hello")
    assert (excinfo.value.reason, server.total()) == ("circuit open", sent)
    assert excinfo.value.retry_in == pytest.approx(5)

    clock.now += 5  # half-open: one trial, which fails -> open again
    with pytest.raises(EmbedderUnavailable):
        embedder.embed("hello")
    assert (embedder.breaker.state, server.total()) == ("open", sent + 1)

    clock.now += 5
    server.mode = "ok"  # the trial succeeds -> closed
    assert embedder.embed("hello").shape == (DIM,)
    assert (embedder.breaker.state, server.total()) == ("closed", sent + 2)


def test_a_malformed_answer_is_a_failure_too(server: FakeEmbedderServer) -> None:
    embedder = OllamaEmbedder("m", base_url=server.url)
    server.mode = "garbage"
    with pytest.raises(EmbedderUnavailable) as excinfo:
        embedder.embed("hello")
    assert str(excinfo.value).startswith(f"m at {server.url}/api/embed failed: Unexpected response from")
    assert embedder.breaker.snapshot().consecutive_failures == 1


# --- the kernel fails open ---------------------------------------------------------------------


def test_a_write_succeeds_while_the_embedder_is_down_and_find_degrades(tmp_path, server) -> None:
    server.mode = "error"
    with _kernel(tmp_path / "m.db", server) as k:
        result = k.add_memory("Alice keeps bees on the roof", user_id="u")
        assert result.event == "ADD"
        found = k.find("bees roof", user_id="u")
        assert [h.id for h in found] == [result.entry.id]  # FTS still finds it
        assert found.degrade_reason is not None
        assert found.degrade_reason.startswith("embedder unavailable: ")
        info = k.info()
        assert info["vector_backlog"] == 1
        assert info["embedder_breaker"]["state"] == "open"  # the write's and find's failures opened it
        k.add_memory("Bob rides a red bicycle", user_id="u")
        assert k.find("bicycle", user_id="u").degrade_reason == "embedder unavailable: circuit open: FTS + NER only"
        report = k.verify()
        assert (report["ok"], report["vector_backlog"], report["embedder_breaker"]["state"]) == (True, 2, "open")


def test_no_request_storm_while_the_breaker_is_open(tmp_path, server) -> None:
    server.mode = "error"
    with _kernel(tmp_path / "m.db", server, failures=2, cooldown=600) as k:
        k.add_memory("first note about tea", user_id="u")
        _until(lambda: k.info()["embedder_breaker"]["state"] == "open", "the breaker to open")
        opened_at = server.total()
        for i in range(20):
            k.add_memory(f"note number {i} about tea", user_id="u")
            assert k.find("tea", user_id="u").degrade_reason == "embedder unavailable: circuit open: FTS + NER only"
        k.add_messages("s1", [{"role": "user", "content": "more tea please"}], user_id="u")
        assert server.total() == opened_at  # nothing was sent while open
        assert opened_at <= 3  # the failures that opened it (and at most one in flight)
        assert k.info()["vector_backlog"] == 22


def test_backfill_after_recovery_makes_the_entry_vector_findable(tmp_path, server) -> None:
    server.mode = "error"
    with _kernel(tmp_path / "m.db", server, failures=1, cooldown=0.2) as k:
        entry = k.add_memory("the quarterly budget spreadsheet", user_id="u").entry
        assert "vector" not in k.find("quarterly budget", user_id="u")[0].matched_by
        server.mode = "ok"
        _until(lambda: k.info()["vector_backlog"] == 0, "the backlog to be backfilled")
        assert k.info()["embedder_breaker"]["state"] == "closed"
        assert k.wait_embedded(timeout=30)
        found = k.find("quarterly budget", user_id="u")
        assert found.degrade_reason is None
        assert found[0].id == entry.id
        assert "vector" in found[0].matched_by
        assert k.verify()["ok"]


def test_a_hanging_endpoint_times_out_and_the_write_still_lands(tmp_path, server) -> None:
    server.mode = "hang"
    with _kernel(tmp_path / "m.db", server, failures=1, cooldown=600, timeout=0.3) as k:
        result = k.add_memory("a slow endpoint must not block memory", user_id="u")
        assert result.event == "ADD"
        found = k.find("slow endpoint", user_id="u")
        assert found[0].id == result.entry.id
        assert found.degrade_reason == "embedder unavailable: circuit open: FTS + NER only"
        assert "Timeout" in (k.info()["embedder_breaker"]["last_error"] or "")
        server.release.set()


def test_update_while_down_queues_the_new_text(tmp_path, server) -> None:
    with _kernel(tmp_path / "m.db", server, failures=1, cooldown=0.2) as k:
        entry = k.add_memory("old text about apples", user_id="u").entry
        assert k.info()["vector_backlog"] == 0
        server.mode = "error"
        k.update(entry.id, user_id="u", text="new text about pears")
        assert k.get(entry.id).l2_full == "new text about pears"
        server.mode = "ok"
        _until(lambda: k.info()["vector_backlog"] == 0, "the new text's vector")
        assert "vector" in k.find("pears", user_id="u")[0].matched_by


def test_close_does_not_wait_for_a_dead_endpoint_and_reopen_backfills(tmp_path, server) -> None:
    path = tmp_path / "m.db"
    server.mode = "error"
    k = _kernel(path, server, cooldown=600)
    ids = [k.add_memory(f"memory {word}", user_id="u").entry.id for word in ("one", "two", "three")]
    assert k.wait_embedded(timeout=30) is False  # the worker waits for the endpoint: not "done"
    k.close()  # returns: the backlog stays in the file
    server.mode = "ok"
    # unknown size: reopening takes it from the file, so no request is needed to open
    with _kernel(path, server, cooldown=0.2, dim=None) as k2:
        assert k2.info()["dim"] == DIM
        _until(lambda: k2.info()["vector_backlog"] == 0, "the backlog to be embedded on open")
        hit = k2.find("memory two", user_id="u")[0]
        assert (hit.id, "vector" in hit.matched_by) == (ids[1], True)


def test_a_new_file_with_an_unreachable_endpoint_of_unknown_size_says_what_to_do(tmp_path, server) -> None:
    server.mode = "error"
    with pytest.raises(EmbedderUnavailable) as excinfo:
        _kernel(tmp_path / "m.db", server, dim=None)
    assert "pass dim= to the embedder, or open a file it already wrote" in str(excinfo.value)


def test_config_keys_reach_the_breaker(tmp_path, server, monkeypatch) -> None:
    monkeypatch.setenv("AGENTBASE_EMBEDDER__BREAKER_FAILURES", "7")
    config = Config.load()
    assert config.embedder.breaker_failures == 7
    embedder = TEIEmbedder(server.url, name="hash-64", dim=DIM)
    with Kernel(tmp_path / "m.db", embedder=embedder, ner="regex",
                config=config.with_(embedder={"breaker_cooldown_seconds": 2.5, "timeout_seconds": 4})) as k:
        breaker = k.info()["embedder_breaker"]
        assert (breaker["failure_threshold"], breaker["cooldown_seconds"]) == (7, 2.5)
        assert k.embedder.timeout == 4
    own = CircuitBreaker(failure_threshold=9)
    with Kernel(tmp_path / "n.db", embedder=TEIEmbedder(server.url, name="hash-64", dim=DIM, breaker=own),
                ner="regex", config=config) as k:
        assert k.embedder.breaker is own  # one the caller built is kept


@pytest.mark.parametrize(("key", "value", "message"), [
    pytest.param("breaker_failures", 0, "embedder.breaker_failures must be >= 1", id="failures"),
    pytest.param("timeout_seconds", 0, "embedder.timeout_seconds must be > 0", id="timeout"),
])
def test_bad_embedder_config_is_refused(key, value, message) -> None:
    with pytest.raises(ValueError) as excinfo:
        Config().with_(embedder={key: value})
    assert str(excinfo.value) == message


def test_an_import_lands_while_the_embedder_is_down_and_is_backfilled(tmp_path, server) -> None:
    export = tmp_path / "export.jsonl"
    with Kernel(tmp_path / "src.db", embedder=None, ner="regex") as source:
        source.add_memory("imported note about sailing boats", user_id="u")
        source.export(export)
    server.mode = "error"
    with _kernel(tmp_path / "m.db", server, failures=1, cooldown=0.2) as k:
        report = k.import_(export)
        assert (report["by_type"]["entry"]["inserted"], report["reembedded"]) == (1, 0)
        assert k.find("sailing", user_id="u").degrade_reason is not None
        assert k.info()["vector_backlog"] == 1
        server.mode = "ok"
        _until(lambda: k.info()["vector_backlog"] == 0, "the imported text's vector")
        assert "vector" in k.find("sailing boats", user_id="u")[0].matched_by


def test_facts_of_a_write_made_while_down_are_backfilled_too(tmp_path, server) -> None:
    with _kernel(tmp_path / "m.db", server, failures=5, cooldown=0.2) as k:
        k.add_memory("a first note", user_id="u", defer_embedding=True)  # the background embedder is running
        assert k.wait_embedded(timeout=30)
        server.mode = "error"
        result = k.add_memory("I live in Lisbon and I work as a nurse", user_id="u", infer=True)
        assert result.facts, "the rule-based extractor should find a fact here"
        server.mode = "ok"  # the breaker never opened: the worker's first request succeeds
        _until(lambda: k.info()["vector_backlog"] == 0, "the entry's and its facts' vectors")
        assert k.verify()["texts_without_vector"] == 0


_CRASHING_WRITER = """
import os, sys
from agentbase_kernel import Config, Kernel, OpenAICompatibleEmbedder
url, path = sys.argv[1], sys.argv[2]
config = Config().with_(embedder={"breaker_failures": 1, "breaker_cooldown_seconds": 600})
k = Kernel(path, embedder=OpenAICompatibleEmbedder("hash-64", base_url=url + "/v1", dim=64), ner="regex",
           config=config)
for word in ("alpha", "beta", "gamma"):
    k.add_memory(f"crash note {word}", user_id="u")
print("written", flush=True)
os._exit(0)  # killed: no close, no flush of anything in memory
"""


def test_a_process_killed_while_the_embedder_is_down_loses_no_vector(tmp_path, server) -> None:
    import subprocess
    import sys

    path = tmp_path / "m.db"
    server.mode = "error"
    done = subprocess.run([sys.executable, "-c", _CRASHING_WRITER, server.url, str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "written", done.stderr
    server.mode = "ok"
    with _kernel(path, server, cooldown=0.2) as k:
        _until(lambda: k.verify()["texts_without_vector"] == 0, "the killed writer's texts to be embedded on open")
        found = k.find("crash note beta", user_id="u")
        assert found.degrade_reason is None
        assert "vector" in found[0].matched_by
        assert len(k.list(user_id="u")) == 3
