"""The PostgreSQL full-text leg's IDF when a write lands between counting the scope and counting a term.

The scope's size and each term's df are read by different statements (the size may come from the cache), so
under concurrent writes df can exceed the size it is divided by; that raised ``ValueError: math domain error``
inside ``find`` (a 500 from the OpenAI server when runs raced on one thread).
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("psycopg")

from agentbase_kernel.store.base import bm25_idf as _idf


def test_a_df_above_the_scope_size_scores_as_a_term_in_every_row() -> None:
    assert _idf(3, 5) == _idf(5, 5) == 1e-6


def test_the_idf_is_fts5s_otherwise() -> None:
    assert _idf(100, 5) == pytest.approx(math.log((100 - 5 + 0.5) / (5 + 0.5)))
