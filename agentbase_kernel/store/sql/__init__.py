"""The SQL store core: the ``Store`` protocol written once over a small ``Dialect``.

``SqlStore`` holds entries and history, sessions and messages, entities, traces, archive,
governance, audit, and export/import; ``Dialect`` says how one engine spells values and the few SQL
pieces that differ; ``CallGate`` lets ``close()`` refuse new calls and wait for the running ones.
A backend (``store/sqlite/``, ``store/postgres/``) adds its connections, its dialect, its
migrations, and its own full-text and vector search. This package imports no backend.
"""

from .core import ENTRY_COLS, SqlCore, mapped
from .dialect import Dialect
from .gate import CallGate
from .store import SqlStore

__all__ = ["ENTRY_COLS", "CallGate", "Dialect", "SqlCore", "SqlStore", "mapped"]
