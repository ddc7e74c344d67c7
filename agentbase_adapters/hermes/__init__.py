"""Hermes Agent memory provider: ``memory.provider: agentbase`` in Hermes' config.yaml.

Install the plugin directory Hermes discovers, then activate it::

    pip install 'agentbase-memory[hermes]'
    python -m agentbase_adapters.hermes install --activate     # writes $HERMES_HOME/plugins/agentbase/

Modules, one job each::

    _config.py     $HERMES_HOME/agentbase.json over the defaults (store, user, budget, waits, breaker)
    _tools.py      the tool schemas the model sees (agentbase_search / _profile / _remember)
    _provider.py   AgentBaseMemoryProvider: every MemoryProvider hook over the kernel, fail-open
    _plugin.py     install_plugin(): the $HERMES_HOME/plugins/agentbase/ directory Hermes loads
"""

from __future__ import annotations

from ._plugin import PLUGIN_NAME, install_plugin
from ._provider import AgentBaseMemoryProvider

__all__ = ["PLUGIN_NAME", "AgentBaseMemoryProvider", "install_plugin"]
