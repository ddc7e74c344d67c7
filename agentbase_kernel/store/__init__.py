"""SQL lives here and nowhere else."""

from .base import EntryFilter, iso, parse_iso, utcnow
from .sqlite import SqliteStore

__all__ = ["EntryFilter", "SqliteStore", "iso", "parse_iso", "utcnow"]
