"""The ``Store`` protocol on one SQLite file (sqlean / pysqlite3 / stdlib ``sqlite3``)."""

from .store import SqliteStore

__all__ = ["SqliteStore"]
