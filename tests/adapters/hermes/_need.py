"""Hermes' tests run in their own virtualenv: hermes-agent pins openai, pydantic and httpx to versions the
project's other extras cannot take (``make test`` builds ``.venv-hermes`` and runs them there).

Elsewhere they are skipped, saying so; with ``AGENTBASE_REQUIRE_HERMES=1`` (set by ``make test`` for that run)
a missing Hermes fails instead of skipping.
"""

from __future__ import annotations

import os

import pytest

WHY = ("Hermes tests run in the Hermes virtualenv (make test builds .venv-hermes): hermes-agent pins openai, "
       "pydantic and httpx versions the main venv cannot take")


def need_hermes() -> None:
    if os.environ.get("AGENTBASE_REQUIRE_HERMES") == "1":
        import agent.memory_provider  # noqa: F401  (fails loudly: this run is meant to have Hermes)
    else:
        pytest.importorskip("agent.memory_provider", reason=WHY)
