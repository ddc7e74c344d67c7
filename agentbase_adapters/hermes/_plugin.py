"""Make the provider discoverable the way Hermes finds memory providers: a plugin directory.

Hermes (``plugins/memory/__init__.py``) scans its bundled ``plugins/memory/<name>/`` and the user's
``$HERMES_HOME/plugins/<name>/``; a directory whose ``__init__.py`` mentions ``register_memory_provider``
is a memory provider, loaded by calling its ``register(ctx)``, and activated by ``memory.provider: <name>``
in ``config.yaml``. ``install_plugin`` writes that directory: two small files that import this package,
so upgrading agentbase upgrades the provider.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["PLUGIN_NAME", "install_plugin", "plugin_files"]

PLUGIN_NAME = "agentbase"

_INIT = '''"""agentbase memory provider for Hermes Agent (written by `python -m agentbase_adapters.hermes install`)."""

from agentbase_adapters.hermes import AgentBaseMemoryProvider


def register(ctx):
    """Hermes calls this to load the provider: ctx.register_memory_provider(MemoryProvider)."""
    ctx.register_memory_provider(AgentBaseMemoryProvider())
'''

_MANIFEST = """name: agentbase
version: {version}
description: "agentbase - memory on one SQLite file or PostgreSQL: per-turn recall within a token budget, every turn stored (no LLM), fail-open with a circuit breaker."
kind: exclusive
pip_dependencies:
  - agentbase-memory[hermes]
"""


def plugin_files() -> dict[str, str]:
    """The plugin directory's files, by name."""
    from agentbase_kernel import __version__

    return {"__init__.py": _INIT, "plugin.yaml": _MANIFEST.format(version=__version__)}


def install_plugin(hermes_home: str | os.PathLike[str] | None = None, *, activate: bool = False) -> Path:
    """Write ``$HERMES_HOME/plugins/agentbase/`` and return it; rewriting it is harmless.

    Args:
        hermes_home: Hermes' home (default: ``$HERMES_HOME``, else ``~/.hermes``).
        activate: Also set ``memory.provider: agentbase`` in ``config.yaml`` (other settings kept).

    Raises:
        OSError: The directory cannot be written.
    """
    home = Path(hermes_home or os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()
    target = home / "plugins" / PLUGIN_NAME
    target.mkdir(parents=True, exist_ok=True)
    for name, text in plugin_files().items():
        (target / name).write_text(text, encoding="utf-8")
    if activate:
        _activate(home / "config.yaml")
    return target


def _activate(config_path: Path) -> None:
    """``memory.provider: agentbase`` in Hermes' config.yaml, keeping everything else (needs PyYAML, a Hermes dependency)."""
    import yaml

    config: object = {}
    if config_path.exists():
        config = yaml.safe_load(config_path.read_text(encoding="utf-8-sig")) or {}
    if not isinstance(config, dict):
        raise ValueError(f"{config_path} does not hold a mapping - fix it before activating agentbase")
    settings: dict[str, Any] = config
    memory = settings.get("memory")
    if not isinstance(memory, dict):
        memory = {}
    memory["provider"] = PLUGIN_NAME
    settings["memory"] = memory
    config_path.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")
