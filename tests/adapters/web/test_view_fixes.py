"""What a new user saw wrong in the dashboard, each view checked on its own file: the timeline's range and
labels, the memory browser's order, the sunburst's colours and labels, tags apart from entities, entity types
only where the mentions agree, and the activity feed's and sessions' empty columns."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from agentbase_kernel import Kernel
from tests.conftest import HashEmbedder

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from agentbase_adapters.web import create_app
from agentbase_adapters.web.charts import CHAR_PX
from agentbase_adapters.web.queries import tidy_graph

BASE = "http://127.0.0.1:8080"


def _client(kernel: Kernel) -> TestClient:
    return TestClient(create_app(kernel, cache_seconds=0), base_url=BASE, client=("127.0.0.1", 40000))


@pytest.fixture
def busy_today(tmp_path):
    """One note from 2023 and thirty from the last hours: the case that squeezed today into a hairline."""
    now = datetime.now(UTC)
    with Kernel(tmp_path / "t.db", embedder=HashEmbedder(), ner="regex") as k:
        k.add_memory("An old note from 2023", user_id="u", created_at=datetime(2023, 4, 1, tzinfo=UTC))
        for i in range(30):
            k.add_memory(f"Today's note number {i}", user_id="u", created_at=now - timedelta(minutes=20 * i))
        yield k


def _values(html: str) -> list[int]:
    return [int(v) for v in re.findall(r'class="mark"[^>]*data-value="(\d+)"', html)]


def _ticks_fit(html: str) -> None:
    """Every tick label of the chart lies inside the SVG (estimated from its length and anchor)."""
    width = float(re.search(r'<svg class="chart" viewBox="0 0 (\d+)', html).group(1))
    ticks = re.findall(r'<text x="([\d.]+)" y="[\d.]+" class="tick" text-anchor="(\w+)">([^<]*)</text>', html)
    assert ticks
    for x, anchor, text in ticks:
        w = len(text) * CHAR_PX
        x0 = {"start": float(x), "middle": float(x) - w / 2, "end": float(x) - w}[anchor]
        assert x0 >= 0 and x0 + w <= width, (text, x, anchor, width)


def test_the_timeline_picks_its_range_from_the_data(busy_today):
    html = _client(busy_today).get("/timeline").text
    assert "last day (chosen from the data" in html and "per hour" in html
    assert "1 older entries are outside this range" in html
    assert sum(_values(html)) == 30
    assert len(re.findall(r'<rect class="mark"', html)) >= 8  # today's notes spread over hours, not one hairline
    _ticks_fit(html)


@pytest.mark.parametrize(("span", "per", "count"), [("day", "hour", 30), ("week", "6 hours", 30),
                                                    ("month", "day", 30), ("all", "month", 31)])
def test_the_user_picks_day_week_month_or_all(busy_today, span, per, count):
    html = _client(busy_today).get(f"/timeline?span={span}&user_id=u").text
    assert f"per {per}," in html and sum(_values(html)) == count
    assert f"<b>{span}</b>" in html and 'href="/timeline?user_id=u&amp;span=auto"' in html  # the scope is kept
    _ticks_fit(html)


def test_an_unknown_range_is_a_400(busy_today):
    assert _client(busy_today).get("/timeline?span=year").status_code == 400


def test_the_fixture_timeline_labels_are_not_clipped(kernel):
    for span in ("auto", "day", "week", "month", "all"):
        _ticks_fit(_client(kernel).get(f"/timeline?span={span}").text)


def test_the_memory_browser_is_newest_first_by_creation_time(tmp_path):
    now = datetime.now(UTC)
    with Kernel(tmp_path / "m.db", embedder=HashEmbedder(), ner="regex") as k:
        k.add_memory("written yesterday", user_id="u", created_at=now - timedelta(days=1))
        k.add_memory("written an hour ago", user_id="u", created_at=now - timedelta(hours=1))
        # imported afterwards, made long before: must sort last, not first
        k.add_memory("imported, made in 2024", user_id="u", created_at=datetime(2024, 1, 1, tzinfo=UTC))
        k.add_memory("written just now", user_id="u")
        html = _client(k).get("/memories").text
        shown = re.findall(r'<a href="/memories/[^"]+">([^<]+)</a>', html)
        assert shown == ["written just now", "written an hour ago", "written yesterday", "imported, made in 2024"]
        assert "4 entries (newest first" in html
        assert _client(k).get("/memories?context_type=bogus").status_code == 400


def test_the_sunburst_has_distinct_colours_and_a_labelled_outer_ring(kernel):
    html = _client(kernel).get("/sunburst").text
    categories = re.findall(r'class="mark ring2"[^>]*fill="([^"]+)"', html)
    assert len(categories) >= 5 and len(set(categories)) == len(categories)
    types = set(re.findall(r'class="mark ring1"[^>]*fill="([^"]+)"', html))
    assert not types & set(categories)
    outer = re.findall(r'class="arc-label outer"[^>]*>([^<]+)<', html)
    assert {"work", "home"} <= set(outer)


def test_tags_and_entities_are_separate_and_quantities_dropped(tmp_path):
    with Kernel(tmp_path / "g.db", embedder=HashEmbedder(), ner="regex") as k:
        k.add_memory("Alice says her son Tom is 5 years old", user_id="u", tags=["family"])
        k.add_memory("Alice paid 40 dollars for Tom's bike", user_id="u", tags=["family", "money"])
        html = _client(k).get("/tags").text
    users, entities = html.split('id="entity-tags"')
    assert re.findall(r'class="tag"[^>]*>([^<]+)</a>', users) == ["family", "money"]
    names = re.findall(r'class="tag"[^>]*>([^<]+)</a>', entities)
    assert "alice" in names and "tom" in names
    assert not [n for n in names if any(ch.isdigit() for ch in n)], names


def test_entity_types_only_where_the_mentions_agree():
    graph = {"nodes": [
        {"id": 1, "norm": "alice", "text": "Alice", "label": "PERSON", "entries": 1},
        {"id": 2, "norm": "alice", "text": "Alice", "label": "ORG", "entries": 1},
        {"id": 3, "norm": "paris", "text": "Paris", "label": "GPE", "entries": 2},
        {"id": 4, "norm": "5 years old", "text": "5 years old", "label": "DATE", "entries": 1},
        {"id": 5, "norm": "acme", "text": "Acme", "label": "ORG", "entries": 1},
        {"id": 6, "norm": "acme corp", "text": "Acme Corp", "label": "ORG", "entries": 1},
        {"id": 7, "norm": "three", "text": "three", "label": "CARDINAL", "entries": 1}],
        "edges": [{"a": 1, "b": 3}, {"a": 2, "b": 4}, {"a": 2, "b": 3}, {"a": 1, "b": 2}]}
    tidy = tidy_graph(graph)
    by_name = {n["text"]: n for n in tidy["nodes"]}
    assert set(by_name) == {"Alice", "Paris", "Acme", "Acme Corp"}  # one Alice; no numbers or quantities
    assert by_name["Alice"]["type"] is None and by_name["Alice"]["entries"] == 2  # PERSON once, ORG once: unsure
    assert by_name["Paris"]["type"] == "GPE"
    assert by_name["Acme"]["type"] is None  # a lone word the small model called ORG, once
    assert by_name["Acme Corp"]["type"] == "ORG"
    assert Counter((e["a"], e["b"]) for e in tidy["edges"]) == Counter({(1, 3): 2})  # merged, no self-links


def test_the_entity_page_says_unsure_instead_of_a_wrong_type(kernel):
    html = _client(kernel).get("/entities").text
    assert '<td class="type">' in html
    assert "type unsure" in html or '<span class="muted"' in html


def test_the_activity_feed_names_an_actor_on_every_row(kernel):
    html = _client(kernel).get("/activity?limit=200").text
    actors = re.findall(r'<td class="actor">([^<]*)</td>', html)
    vias = re.findall(r'<td class="via">([^<]*)</td>', html)
    assert actors and all(a.strip() for a in actors)
    assert {"mem0", "minimal"} <= set(vias)


def test_sessions_say_who_made_them_and_whether_committed(kernel):
    html = _client(kernel).get("/sessions").text
    rows = re.findall(r'<tr class="session">(.*?)</tr>', html, re.DOTALL)
    assert rows
    for row in rows:
        committed = re.search(r'<td class="committed">(.*?)</td>', row, re.DOTALL).group(1)
        origin = re.search(r'<td class="origin">(.*?)</td>', row, re.DOTALL).group(1)
        assert committed.strip() and origin.strip() and origin != "unknown", row
        if "stream-" in row:
            assert "writes, one at a time" in origin
    trip = next(r for r in rows if "trip-chat" in r)
    assert ">summary</a>" in trip
