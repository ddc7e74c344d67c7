"""A scripted chat model for deep agents, offline: deepagents' own tests use ``GenericFakeChatModel`` with
``bind_tools`` patched to return the model, and so do we."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool


class ToolCallingFakeModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` that accepts tools, as deepagents' tests patch it."""

    def bind_tools(self, tools: Sequence[dict[str, Any] | type | Callable | BaseTool], *, tool_choice: str | None = None,
                   **kwargs: Any) -> Runnable[LanguageModelInput, AIMessage]:
        return self


_ids = itertools.count()


def tool_call(name: str, **args: Any) -> AIMessage:
    """The model's next message: one call of tool ``name``."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{next(_ids)}"}])
