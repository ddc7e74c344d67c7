"""The ``agentbase`` command: create, fill, search, check and serve an agentbase file from a shell.

Built on click (``agentbase_cli.app``); every command opens the database through
``agentbase_cli.database`` and maps agentbase errors to the exit codes in ``docs/cli.md``.
"""

from __future__ import annotations

from agentbase_kernel import __version__

__all__ = ["__version__", "main"]


def main(argv: list[str] | None = None) -> int:
    """Run the ``agentbase`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    from .app import run

    return run(argv)
