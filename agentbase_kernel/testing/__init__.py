"""Test suites for those who implement agentbase's interfaces (they need pytest).

``StoreContractTests``: subclass it with a ``store`` fixture and your backend runs the contract
every built-in store passes (``agentbase_kernel.testing.store``).
"""

from .store import T0, StoreContractTests, ids, row, unit

__all__ = ["T0", "StoreContractTests", "ids", "row", "unit"]
