"""CrewAI's tests run in their own virtualenv: crewai pins pydantic, openai and mcp below what the project's other
extras install (``make test`` builds ``.venv-crewai`` and runs them there).

Elsewhere they are skipped, saying so; with ``AGENTBASE_REQUIRE_CREWAI=1`` (set by ``make test`` for that run) a
missing CrewAI fails instead of skipping.
"""

from __future__ import annotations

import os

import pytest

WHY = ("CrewAI tests run in the CrewAI virtualenv (make test builds .venv-crewai): crewai pins pydantic<2.13, "
       "openai<3 and mcp<2, which the main venv cannot take")


def need_crewai() -> None:
    if os.environ.get("AGENTBASE_REQUIRE_CREWAI") == "1":
        import crewai.memory.storage.backend  # noqa: F401  (fails loudly: this run is meant to have CrewAI)
    else:
        pytest.importorskip("crewai.memory.storage.backend", reason=WHY)
