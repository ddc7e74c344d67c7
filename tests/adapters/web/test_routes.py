"""Every dashboard route over HTTP, on a real file written through several adapters."""

from __future__ import annotations

import re
import time

import pytest

from agentbase_kernel import InvalidArgument, Kernel
from tests.conftest import HashEmbedder

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from agentbase_adapters.web import create_app, main, serve
from agentbase_adapters.web.app import VIEWS

BASE = "http://127.0.0.1:8080"


def _client(kernel: Kernel, **options) -> TestClient:
    app = create_app(kernel, cache_seconds=0, **options)
    return TestClient(app, base_url=BASE, client=("127.0.0.1", 40000))


def _values(html: str, cls: str = "mark") -> list[int]:
    return [int(v) for v in re.findall(rf'class="{cls}"[^>]*data-value="(\d+)"', html)]


@pytest.fixture
def client(kernel):
    return _client(kernel)


def test_overview_counts_links_every_view_and_verifies(client, kernel):
    total = kernel.count(include_invalid=True, include_expired=True)
    html = client.get("/").text
    assert f'id="entries-total">{total}<' in html
    for href, name, _ in VIEWS:
        assert f'<a href="{href}">{name}</a>' in html
    for name in ("memory", "resource", "skill", "user:alice", "user:bob", "turn", "session_summary",
                 "test-hash-64", "regex"):
        assert f">{name}<" in html
    for _ in range(300):  # verify runs in the background; the page says so until it is done
        if 'id="verify">ok<' in html:
            break
        assert 'id="verify">checking<' in html
        time.sleep(0.1)
        html = client.get("/").text
    assert 'id="verify">ok<' in html and "0 texts without a vector" in html


def test_timeline_and_heatmap_count_every_entry(client, kernel):
    total = kernel.count(include_invalid=True, include_expired=True)
    timeline = client.get("/timeline").text
    assert sum(_values(timeline)) == total and f'id="total">{total}<' in timeline
    # 279 days, a third of them today: auto shows all of it, per week (the first week: two notes, one resource)
    assert "everything (chosen from the data" in timeline and "per week" in timeline
    assert "<title>2026-03-02 memory: 2</title>" in timeline and "<title>2026-03-02 resource: 1</title>" in timeline
    heat = client.get("/heatmap").text
    assert sum(_values(heat)) == total
    assert re.search(r'data-value="(\d+)"><title>Mon 09:00 UTC: \1</title>', heat)
    bob = client.get("/heatmap?user_id=bob").text
    assert sum(_values(bob)) == kernel.count(user_id="bob", include_invalid=True, include_expired=True) == 40


def test_sunburst_rings_and_freshness_split(client, kernel):
    total = kernel.count(include_invalid=True, include_expired=True)
    sun = client.get("/sunburst?user_id=bob").text
    assert "<title>skill: 10</title>" in sun and "<title>resource / plan" in sun
    assert "<title>memory / fact / home:" in sun or "<title>memory / fact / work:" in sun
    fresh = client.get("/freshness").text
    rows = re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td></tr>", fresh)
    assert sum(int(c) + int(s) for _, c, s in rows) == total
    superseded = kernel.count(include_invalid=True, include_expired=True) - kernel.count(include_expired=True)
    assert superseded >= 1 and sum(int(s) for _, _, s in rows) == superseded


def test_tag_cloud_links_to_the_browser(client):
    html = client.get("/tags").text
    assert re.search(r'href="/memories\?tag=travel" data-value="1"', html)
    assert re.search(r'href="/memories\?tag=work" data-value="20"', html)
    users, entities = html.split('id="entity-tags"')
    assert "ner_" not in users.split('id="user-tags"')[1]  # entities have their own cloud
    assert re.search(r'href="/memories\?tag=ner_carol" data-value="\d+"[^>]*>carol<', entities)


def test_activity_feed_shows_updates_supersessions_and_actors(client, kernel):
    html = client.get("/activity?limit=200").text
    events = re.findall(r'<span class="pill">([A-Z]+)</span>', html)
    assert {"ADD", "UPDATE", "SUPERSEDE"} <= set(events)
    assert "Alice loves pizza from Naples" in html and ">importer<" in html
    assert client.get("/activity?limit=0").status_code == 400


def test_memory_browser_pages_filters_and_searches(client, kernel, dashboard_file):
    _, ids = dashboard_file
    first = client.get("/memories").text
    total = kernel.count(include_invalid=True)
    assert f"{total} entries" in first and first.count('class="entry"') == 25 and 'id="next"' in first
    second = client.get("/memories?page=2").text
    assert second.count('class="entry"') == min(25, total - 25)
    assert set(re.findall(r'href="/memories/([^"]+)"', first)).isdisjoint(re.findall(r'href="/memories/([^"]+)"', second))
    skills = client.get("/memories?user_id=bob&context_type=skill").text
    assert skills.count('class="entry"') == 10 and "<td>resource</td>" not in skills
    found = client.get("/memories?q=pizza&user_id=alice").text
    assert re.search(rf'href="/memories/{ids["mem0"]}">Alice loves pizza', found)
    trace_id = re.search(r'href="/traces/([^"]+)" id="trace-link"', found).group(1)
    assert client.get(f"/traces/{trace_id}").status_code == 200
    assert client.get("/memories?page=x").status_code == 400
    assert client.get("/memories?q=pizza&page=41").status_code == 400  # a search ranks at most 1000
    assert client.get("/memories?page=41").text.count('class="entry"') == 0  # past the end: empty, not an error
    bad = client.get("/memories?context_type=poem")
    assert bad.status_code == 400 and "context_type must be one of" in bad.text


def test_memory_search_min_score_leaves_out_what_scores_below_it(client, kernel):
    def shown(url: str) -> list[tuple[str, float]]:
        html = client.get(url).text
        return [(eid, float(score)) for score, eid in
                re.findall(r'<td class="num">([\d.]+)</td>.*?href="/memories/([^"]+)"', html, re.S)]

    every = shown("/memories?q=pizza+food&user_id=alice")
    scores = sorted({score for _, score in every})
    assert len(scores) >= 2, every
    cut = (scores[0] + scores[1]) / 2
    kept = shown(f"/memories?q=pizza+food&user_id=alice&min_score={cut}")
    assert kept == [(eid, score) for eid, score in every if score > cut] and 0 < len(kept) < len(every)
    assert [eid for eid, _ in kept] == [h.id for h in kernel.find("pizza food", top_k=25, user_id="alice",
                                                                   min_score=cut)]
    page = client.get(f"/memories?q=pizza+food&user_id=alice&min_score={cut}").text
    assert f'name="min_score" type="number" min="0" max="1" step="0.05" size="5" value="{cut}"' in page
    for bad in ("1.5", "-0.1", "high", "nan"):
        response = client.get(f"/memories?q=pizza&min_score={bad}")
        assert response.status_code == 400 and "min_score must be a number between 0 and 1" in response.text


def test_entry_page_tiers_history_sources_entities_chain(client, kernel, dashboard_file):
    _, ids = dashboard_file
    html = client.get(f"/memories/{ids['mem0']}").text
    assert 'id="l0">Alice loves pizza from Naples<' in html and 'id="l2">Alice loves pizza from Naples<' in html
    history = html[html.index('id="history"'):]
    assert "<td>ADD</td>" in history and "<td>UPDATE</td>" in history and "Alice likes pizza" in history
    minimal = client.get(f"/memories/{ids['minimal']}").text
    assert 'href="/entities?entity=berlin"' in minimal and '<span class="pill">travel</span>' in minimal
    turn = next(m for m in kernel.list_messages("trip-chat") if m.entry_id)
    page = client.get(f"/memories/{turn.entry_id}").text
    assert "We fly to Rome with Dave on Friday" in page[page.index("Provenance"):] and 'href="/sessions/trip-chat"' in page
    old = next(e for e in kernel.list(user_id="alice", include_invalid=True) if e.superseded_by)
    chain = client.get(f"/memories/{old.id}").text
    assert f'href="/memories/{old.superseded_by}"' in chain and "(newer)" in chain
    newer = client.get(f"/memories/{old.superseded_by}").text
    assert f'href="/memories/{old.id}"' in newer and "replaced by this entry" in newer
    missing = client.get("/memories/no-such-entry")
    assert missing.status_code == 404 and 'id="error"' in missing.text and "<title>Error 404" in missing.text


def test_traces_list_steps_and_legs(client, kernel):
    html = client.get("/traces").text
    assert ">pizza</a>" in html and ">budget Carol</a>" in html
    stored = next(t for t in kernel.trace_session(limit=50) if t["query"] == "budget Carol")
    page = client.get(f"/traces/{stored['id']}").text
    assert page.count('class="step"') == len(stored["steps"]) and "recall_fts" in page and "recall_vector" in page
    assert page.count('href="/memories/') >= len(stored["result_ids"])
    before = len(kernel.trace_session(limit=500))
    legs = client.get(f"/traces/{stored['id']}?replay=1").text
    assert legs.count('class="leg"') >= 1 and '<span class="pill">fts</span>' in legs
    assert len(kernel.trace_session(limit=500)) == before  # explaining does not record a trace
    assert client.get("/traces/nope").status_code == 404


def test_entity_graph_and_sessions(client):
    graph = client.get("/entities").text
    assert sum(_values(graph)) > 0 and _values(graph, "link") and ">Carol</text>" in graph
    centred = client.get("/entities?entity=carol").text
    assert "around <b>carol</b>" in centred and ">Carol</text>" in centred
    sessions = client.get("/sessions").text
    assert 'href="/sessions/trip-chat"' in sessions and 'href="/sessions/llama-chat"' in sessions
    chat = client.get("/sessions/trip-chat").text
    assert "We fly to Rome with Dave on Friday" in chat and chat.count('class="derived"') == 3
    assert 'id="summary"' in chat
    llama = client.get("/sessions/llama-chat").text
    assert "planning a trip to Lisbon" in llama
    assert client.get("/sessions/nope").status_code == 404


def test_links_survive_ids_with_slashes_and_query_characters(client):
    listing = client.get("/memories?user_id=carol").text
    hrefs = re.findall(r'href="(/memories/[^"]+)"', listing)
    assert "/memories/notes%2F2026%3Fa%23b" in hrefs
    for href in hrefs:
        assert client.get(href).status_code == 200
    assert "Odd ids work too" in client.get("/memories/notes%2F2026%3Fa%23b").text
    sessions = client.get("/sessions?user_id=carol").text
    [href] = re.findall(r'href="(/sessions/[^"]+)"', sessions)
    assert href == "/sessions/team%2Falpha%20%231%3F"
    assert "Hello from a slashed session" in client.get(href).text


def test_read_only_refuses_every_write(client, kernel, dashboard_file):
    _, ids = dashboard_file
    before = kernel.get(ids["mem0"])
    assert "Edit" not in client.get(f"/memories/{ids['mem0']}").text.split("<h2>")[-1]
    for action in ("edit", "delete"):
        r = client.post(f"/memories/{ids['mem0']}/{action}", data={"text": "changed"})
        assert r.status_code == 403 and "read-only" in r.text
    assert kernel.get(ids["mem0"]) == before


@pytest.fixture
def copy_kernel(dashboard_file, copy_db_location):
    path, ids = dashboard_file
    with Kernel(copy_db_location(path), embedder=HashEmbedder(), ner="regex", create=False) as k:
        yield k, ids


def test_allow_edit_updates_and_deletes_with_history(copy_kernel):
    kernel, ids = copy_kernel
    client = _client(kernel, allow_edit=True)
    page = client.get(f"/memories/{ids['minimal']}").text
    assert 'id="edit"' in page and 'id="delete"' in page
    r = client.post(f"/memories/{ids['minimal']}/edit", follow_redirects=False,
                    data={"text": "Alice prefers aisle seats", "category": "travel", "tags": "travel, seats"})
    assert r.status_code == 303
    e = kernel.get(ids["minimal"])
    assert (e.l2_full, e.category, [t for t in e.tags if not t.startswith("ner_")]) == (
        "Alice prefers aisle seats", "travel", ["travel", "seats"])
    assert kernel.history(ids["minimal"])[-1].actor == "dashboard"
    r = client.post(f"/memories/{ids['mem0']}/delete", follow_redirects=False)
    assert r.status_code == 303 and kernel.count(user_id="alice") >= 1
    with pytest.raises(KeyError):
        kernel.get(ids["mem0"])
    feed = client.get("/activity").text
    assert '<span class="pill">DELETE</span>' in feed and "Alice loves pizza" in feed


def test_guard_refuses_cross_origin_forms_and_foreign_hosts(copy_kernel):
    kernel, ids = copy_kernel
    client = _client(kernel, allow_edit=True)
    r = client.post(f"/memories/{ids['minimal']}/delete",
                    headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403 and "cross_origin_request" in r.text
    assert kernel.get(ids["minimal"])
    r = client.post(f"/memories/{ids['minimal']}/edit", data={"text": "x" * (2 << 20)})
    assert r.status_code == 413 and kernel.get(ids["minimal"]).l2_full != "x" * (2 << 20)
    assert client.get("/", headers={"Host": "evil.example:8080"}).status_code == 421
    remote = TestClient(create_app(kernel), base_url=BASE, client=("10.0.0.7", 5000))
    assert remote.get("/").status_code == 403
    keyed = TestClient(create_app(kernel, api_key="s3cret"), base_url=BASE, client=("127.0.0.1", 5000))
    assert keyed.get("/").status_code == 401
    assert keyed.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def _framing_refused(response) -> bool:
    csp = {d.strip().split(" ", 1)[0]: d.strip() for d in response.headers.get("content-security-policy", "").split(";")}
    return (response.headers.get("x-frame-options") == "DENY" and csp.get("frame-ancestors") == "frame-ancestors 'none'"
            and csp.get("default-src") == "default-src 'none'" and "script-src" not in csp
            and csp.get("form-action") == "form-action 'self'" and response.headers.get("x-content-type-options") == "nosniff")


def test_every_page_refuses_framing_and_scripts(copy_kernel):
    """Clickjacking of the edit/delete forms: no page may be framed by another site, and the CSP
    lets no script run (the pages have none), on pages, errors and the guard's refusals alike."""
    kernel, ids = copy_kernel
    client = _client(kernel, allow_edit=True)
    pages = [href for href, _, _ in VIEWS] + [f"/memories/{ids['minimal']}", "/sessions/llama-chat", "/traces",
                                              "/memories/no-such-id", "/sessions/no-such", "/nowhere"]
    for path in pages:
        r = client.get(path)
        assert r.status_code in (200, 404), (path, r.status_code)
        assert _framing_refused(r), (path, dict(r.headers))
    posted = client.post(f"/memories/{ids['minimal']}/edit", data={"text": "edited"}, follow_redirects=False)
    assert posted.status_code < 400 and _framing_refused(posted)
    assert _framing_refused(client.get("/", headers={"Host": "evil.example:8080"}))  # a refusal of the guard


def _store_raw(location, entry_id: str) -> None:
    """Write values the API refuses straight into a row, as an import before the checks could."""
    values = {"tags": '[{"a": 1}, 5, "travel"]', "metadata": "[1, 2]", "event_dates": '{"x": 1}', "flags": '"flag"'}
    if isinstance(location, str):  # PostgreSQL: jsonb columns, and float8 takes Infinity
        import psycopg

        with psycopg.connect(location) as pg:
            pg.execute("UPDATE entries SET tags = %s::jsonb, metadata = %s::jsonb, event_dates = %s::jsonb, "
                       "flags = %s::jsonb, importance = 'Infinity', confidence = 'NaN', trust = '-Infinity' "
                       "WHERE id = %s", (*values.values(), entry_id))
        return
    from tests.reliability._inputs import raw_connect

    conn = raw_connect(location)
    try:
        conn.execute("UPDATE entries SET tags = ?, metadata = ?, event_dates = ?, flags = ?, importance = 9e999, "
                     "confidence = -9e999, trust = 9e999 WHERE id = ?",
                     (*values.values(), entry_id))
        conn.commit()
    finally:
        conn.close()


def test_stored_values_the_api_refuses_never_break_a_page(dashboard_file, copy_db_location):
    """Rows an older import stored unchecked (tags of objects, metadata that is a list, importance
    Infinity, confidence NaN) are shown as well as they can be: never a 500."""
    path, ids = dashboard_file
    location = copy_db_location(path)
    _store_raw(location, ids["minimal"])
    with Kernel(location, embedder=HashEmbedder(), ner="regex", create=False) as kernel:
        client = _client(kernel)
        for path_ in [href for href, _, _ in VIEWS] + [f"/memories/{ids['minimal']}", "/memories?tag=travel",
                                                       "/memories?q=window+seats"]:
            r = client.get(path_)
            assert r.status_code == 200, (path_, r.status_code, r.text[-500:])
        entry = kernel.get(ids["minimal"])
        assert entry.tags == ["travel"] and entry.metadata == {} and entry.event_dates == [] and entry.flags == []
        assert 0 <= entry.importance <= 1 and 0 <= entry.confidence <= 1 and 0 <= entry.trust <= 1


def test_serve_and_main_refuse_bad_arguments(tmp_path, capsys):
    with pytest.raises(InvalidArgument, match="without an API key"):
        serve(tmp_path / "x.db", host="0.0.0.0")
    assert main(["a.db", "1", "extra"]) == 2 and "usage: agentbase-web [DB [PORT]]" in capsys.readouterr().err
    assert main([]) == 2 and f"no such file: {tmp_path / 'default.db'}" in capsys.readouterr().err  # $AGENTBASE_PATH
    assert main([str(tmp_path / "missing.db"), "8080"]) == 2 and "no such file" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.db"), "port"]) == 2 and "PORT must be a number" in capsys.readouterr().err


def test_agentbase_web_script_serves_a_file(dashboard_file, copy_db_location):
    """`agentbase-web DB PORT` as a user runs it: the file (written with another embedder than
    the default) is served read-only on loopback."""
    import os
    import socket
    import subprocess
    import sys

    import httpx

    path, _ = dashboard_file
    copy = copy_db_location(path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = os.path.join(os.path.dirname(sys.executable), "agentbase-web")
    command = [script] if os.path.exists(script) else [sys.executable, "-c",
                                                       "import sys; from agentbase_adapters.web import main; sys.exit(main())"]
    proc = subprocess.Popen([*command, str(copy), str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180  # opening loads the default embedder: slow on a busy machine
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "agentbase-web did not start"
                time.sleep(0.5)
        assert r.status_code == 200 and 'href="/timeline">Timeline</a>' in r.text
        assert httpx.post(f"http://127.0.0.1:{port}/memories/x/delete").status_code == 403
        assert httpx.get(f"http://127.0.0.1:{port}/", headers={"Host": "evil.example"}).status_code == 421
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_search_shows_the_warning_of_a_stale_skill(tmp_path):
    from datetime import timedelta

    from agentbase_kernel.store.base import utcnow

    with Kernel(tmp_path / "skills.db", embedder=HashEmbedder(), ner="regex") as k:
        k.add_skill("analytics-schema", "Revenue per day comes from the orders_daily view", user_id="u",
                    created_at=utcnow() - timedelta(days=45))
        skill = k.get_skill("analytics-schema", user_id="u")
        entry_page = _client(k).get(f"/memories/{skill.id}").text  # before the search uses (refreshes) it
        page = _client(k).get("/memories?q=revenue+per+day&user_id=u").text
    assert '<table id="skill"><tr><th>skill</th><td>analytics-schema</td>' in entry_page
    assert "is stale (health 0.35)" in entry_page
    assert ('<ul id="skill-warnings" class="warnings"><li>&#9888; Skill &#39;analytics-schema&#39; is stale '
            '(health 0.35): not used or verified since it was written 45 days ago</li></ul>') in page
