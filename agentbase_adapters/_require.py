"""Import an optional framework, or say exactly which extra installs it."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from agentbase_kernel import MissingDependency

__all__ = ["EXTRA_MODULES", "require", "require_extra"]

#: What each server's extra must bring for the server to start (checked before anything is printed)
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "mcp": ("mcp", "anyio", "jsonschema", "starlette", "uvicorn"),
    "web": ("starlette", "jinja2", "uvicorn"),
    "openai": ("starlette", "uvicorn"),
}


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


def _installed(module_name: str) -> bool:
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module blocked in sys.modules
        return False


def require_extra(extra: str) -> None:
    """Check, without importing them, that the modules ``extra`` installs are there.

    The servers call it first, so a missing extra is reported before a banner is printed, a
    file is opened or a port is bound.

    Raises:
        MissingDependency: A module of the extra is missing; the message names the extra and
            ``pip install 'agentbase-memory[<extra>]'``.
    """
    missing = [name for name in EXTRA_MODULES[extra] if not _installed(name)]
    if missing:
        raise MissingDependency(
            f"the {extra!r} extra is not installed (no module {missing[0]!r}) - install it with: "
            f"pip install 'agentbase-memory[{extra}]'"
        )
