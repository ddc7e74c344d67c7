"""Memory lifecycle (issue 22): reinforcement, audit, per-turn prefetch. See docs/lifecycle.md."""

from .reinforce import Reinforcer

__all__ = ["Reinforcer"]
