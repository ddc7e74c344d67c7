"""The ``Store`` protocol on PostgreSQL + pgvector (psycopg 3, the ``postgres`` extra).

Importing this package needs no driver: ``PostgresStore`` is loaded on first use, so
``open_store`` can tell a user without psycopg which extra to install.
"""

from __future__ import annotations

from typing import Any

from .url import is_postgres_url, redact_url

__all__ = ["PostgresStore", "is_postgres_url", "redact_url"]


def __getattr__(name: str) -> Any:
    if name == "PostgresStore":
        from .store import PostgresStore

        return PostgresStore
    raise AttributeError(name)
