"""Import an optional framework, or say exactly which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from agentbase_kernel import MissingDependency

__all__ = ["require"]


def require(module_name: str, *, extra: str) -> ModuleType:
    """Import ``module_name`` and return it.

    Args:
        module_name: The dotted module to import, e.g. ``"langchain_core.chat_history"``.
        extra: The agentbase extra that installs it, e.g. ``"langchain"``.

    Returns:
        The imported module.

    Raises:
        MissingDependency: The module (or its top-level package) is not installed; the message
            names ``pip install 'agentbase-memory[<extra>]'``.
    """
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or module_name
        top = module_name.split(".")[0]
        # Only a missing framework is our business; a framework that is installed but
        # broken must keep its own traceback.
        if missing.split(".")[0] != top:
            raise
        raise MissingDependency(
            f"{module_name!r} is not installed - install it with: pip install 'agentbase-memory[{extra}]'"
        ) from None
