"""Headless Chromium (Debian's package, driven by Playwright) opens every view of a real server.

Each view must show data (marks in its chart, rows in its table), never the empty-state text;
a screenshot of each is saved to ``$AGENTBASE_DASHBOARD_SHOTS`` (docs/dashboard/ holds the
committed ones) or to the test's tmp dir. An edit goes through a real form post, so the guard's
same-origin rule is checked against what a real browser sends.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

from agentbase_kernel import Kernel
from tests.conftest import HashEmbedder

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (`make install` installs it as root: apt-get install chromium)",
                allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev group: pip install --group dev")
uvicorn = pytest.importorskip("uvicorn")

from agentbase_adapters.web import create_app

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

# (file name, path, a selector that must match at least one element when the view shows data)
VIEWS = [
    ("overview", "/", "table.counts tr td.num"),
    ("timeline", "/timeline", "svg.chart .mark"),
    ("timeline-day", "/timeline?span=day", "svg.chart .mark"),
    ("heatmap", "/heatmap", "svg.chart .mark"),
    ("sunburst", "/sunburst", "svg.chart .mark"),
    ("freshness", "/freshness", "svg.chart .mark"),
    ("tags", "/tags", ".cloud a.tag"),
    ("activity", "/activity", "#feed tr.event"),
    ("memories", "/memories", "#entries tr.entry"),
    ("traces", "/traces", "#traces tr.trace"),
    ("entities", "/entities", "svg.chart .mark"),
    ("sessions", "/sessions", "#sessions tr.session"),
    ("session", "/sessions/trip-chat", "#conversation .msg"),
    ("proposals", "/proposals", "#proposals tr.proposal"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server:
    """The dashboard on uvicorn in a thread, as ``serve`` runs it."""

    def __init__(self, kernel: Kernel, **options) -> None:
        self.port = _free_port()
        config = uvicorn.Config(create_app(kernel, cache_seconds=0, **options), host="127.0.0.1",
                                port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def shots(tmp_path) -> Path:
    target = Path(os.environ.get("AGENTBASE_DASHBOARD_SHOTS") or tmp_path / "shots")
    target.mkdir(parents=True, exist_ok=True)
    return target


@pytest.fixture
def browser_page(tmp_path):
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": 1100, "height": 760})
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def _check(page, base: str, name: str, path: str, selector: str, shots: Path, *, full_page: bool = False) -> None:
    response = page.goto(base + path)
    assert response is not None and response.status == 200, (path, response and response.status)
    assert page.locator(selector).count() > 0, f"{path} rendered no data ({selector})"
    assert page.locator(".empty").count() == 0, f"{path} shows an empty state"
    page.screenshot(path=str(shots / f"{name}.png"), full_page=full_page)


def test_every_view_renders_data_in_chromium(kernel, browser_page, shots, dashboard_file):
    _, ids = dashboard_file
    page = browser_page
    with _Server(kernel) as base:
        for name, path, selector in VIEWS:
            _check(page, base, name, path, selector, shots)
        # the memory browser's search form, typed and submitted like a user would
        page.goto(base + "/memories")
        page.fill("input[name=q]", "budget Carol")
        page.fill("#search input[name=user_id]", "bob")
        page.click("#search button")
        assert "q=budget+Carol" in page.url and page.locator("#entries tr.entry").count() > 0
        page.screenshot(path=str(shots / "search.png"))
        page.click("#trace-link")
        assert page.locator("#steps tr.step").count() >= 5
        page.click("#replay")
        assert page.locator("#legs tr.leg").count() > 0
        page.screenshot(path=str(shots / "trace.png"), full_page=True)
        _check(page, base, "entry", f"/memories/{ids['mem0']}", "#history tr td", shots, full_page=True)


def test_edit_form_posts_through_the_guard_in_chromium(dashboard_file, browser_page, copy_db_location):
    path, ids = dashboard_file
    page = browser_page
    kernel = Kernel(copy_db_location(path), embedder=HashEmbedder(), ner="regex", create=False).initialize()
    with kernel, _Server(kernel, allow_edit=True) as base:
        page.goto(f"{base}/memories/{ids['minimal']}")
        page.fill("#edit textarea[name=text]", "Alice now prefers aisle seats")
        page.click("#edit button")
        page.wait_for_url(f"{base}/memories/{ids['minimal']}")
        assert page.locator("#l2").inner_text() == "Alice now prefers aisle seats"
        assert kernel.get(ids["minimal"]).l2_full == "Alice now prefers aisle seats"
        assert kernel.history(ids["minimal"])[-1].actor == "dashboard"


def test_proposals_are_approved_and_rejected_through_the_guard_in_chromium(dashboard_file, browser_page,
                                                                            copy_db_location):
    path, ids = dashboard_file
    page = browser_page
    kernel = Kernel(copy_db_location(path), embedder=HashEmbedder(), ner="regex", create=False).initialize()
    with kernel, _Server(kernel, allow_edit=True) as base:
        page.goto(f"{base}/proposals")
        assert page.locator("#proposals tr.proposal").count() == 2
        assert "+Deploys run on Fridays" in page.locator(f"#p-{ids['proposal_keep']} pre.diff").inner_text()
        assert page.locator("#harmed tr").count() == 2 and page.locator("#confidence tr").count() >= 2
        page.click(f"#p-{ids['proposal_keep']} form.approve button")
        page.wait_for_url(f"{base}/proposals")
        page.fill(f"#p-{ids['proposal_drop']} form.reject input[name=reason]", "not true")
        page.click(f"#p-{ids['proposal_drop']} form.reject button")
        page.wait_for_url(f"{base}/proposals")
        assert page.locator("#no-pending").count() == 1 and page.locator("#decided tr.decided").count() == 2
        kept = kernel.get_proposal(ids["proposal_keep"])
        assert (kept.status, kept.decided_by) == ("approved", "dashboard")
        entry = kernel.get(kept.result_entry_id or "")
        assert (entry.l2_full, entry.source, entry.trust) == ("Deploys run on Fridays", "human_approved", 1.0)
        dropped = kernel.get_proposal(ids["proposal_drop"])
        assert (dropped.status, dropped.decision_reason) == ("rejected", "not true")
