"""The SQL store core: the ``Store`` protocol written once over a small ``Dialect``.

``SqlStore`` holds entries and history, sessions and messages, entities, traces, archive,
governance, audit, and export/import; ``Dialect`` says how one engine spells values and the few SQL
pieces that differ. A backend (``store/sqlite/``, ``store/postgres/``) adds its connections, its
dialect, its migrations, and its own full-text and vector search. This package imports no backend.
"""

from .core import ENTRY_COLS, SqlCore, mapped
from .dialect import Dialect
from .store import SqlStore

__all__ = ["ENTRY_COLS", "Dialect", "SqlCore", "SqlStore", "mapped"]
