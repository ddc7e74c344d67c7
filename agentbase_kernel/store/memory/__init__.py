"""The in-memory reference store: every ``Store`` role in plain Python, no SQL (``store.py``)."""

from typing import TYPE_CHECKING

from .store import MemoryStore

if TYPE_CHECKING:  # the type checker proves it implements every role
    from ..protocol import Store

    _implements: type[Store] = MemoryStore

__all__ = ["MemoryStore"]
