"""``python -m agentbase_cli``: the same as the ``agentbase`` command."""

from agentbase_cli import main

raise SystemExit(main())
