"""``python -m benchmarks scale --backend postgres``: one size on a Postgres database, and its rows in RESULTS.md."""

from __future__ import annotations

import json

import pytest

from benchmarks import report
from benchmarks.scale import LEGS, run_size, searches_only

pytestmark = pytest.mark.postgres


def test_scale_size_on_postgres_and_the_report_beside_sqlite(tmp_path, postgres_url):
    row = run_size(300, tmp_path, n_queries=4, batch=100, progress=False, backend="postgres", url=postgres_url,
                   live_writes=50)
    assert row["backend"] == "postgres" and row["stored"] == 300 and set(row["search"]) == set(LEGS)
    assert row["live_writes"] == 50 and row["live_ingest_per_s"] > 0
    assert row["bytes"] > 7_000_000  # pg_database_size: the catalogue of an empty database alone is ~7.8 MB
    assert "entries_fts" in row["index_build_s"] and "recall_fts" in row["find_steps_mean_ms"]
    assert not list(tmp_path.glob("*.db"))  # nothing went to a SQLite file
    again = searches_only(300, postgres_url, n_queries=3, progress=False)  # the same rows, searched again
    assert again["entries_u0"] == 350 and set(again["search"]) == set(LEGS) and again["search"]["find"]["n"] == 3
    sqlite_row = run_size(300, tmp_path, n_queries=4, batch=100, progress=False, live_writes=50)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "scale.json").write_text(json.dumps({"sizes": {"300": dict(sqlite_row, finished="a")}}))
    (tmp_path / "results" / "scale-postgres.json").write_text(json.dumps({"sizes": {"300": dict(row, finished="b")}}))
    text = report.render(tmp_path).read_text()
    section = text.split("## Scaling on PostgreSQL")[1]
    assert "| 300 | PostgreSQL |" in section and "| 300 | SQLite |" in section and "fts " in section
    (tmp_path / "results" / "scale-postgres-searches.json").write_text(json.dumps(
        {"runs": [dict(again, code="abc1234", finished="c")]}))
    searches = report.render(tmp_path).read_text().split("### Searches again on a loaded PostgreSQL database")[1]
    assert "| 350 | abc1234 |" in searches


def test_run_size_needs_the_url_for_postgres(tmp_path):
    with pytest.raises(ValueError, match="needs the database's url"):
        run_size(10, tmp_path, backend="postgres")
