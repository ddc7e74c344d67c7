"""Shared fixtures for the LangChain / LangGraph adapter tests.

LangChain's whole memory family is deprecated and warns when the *framework's own* classes are
built (``InMemoryChatMessageHistory``, ``RunnableWithMessageHistory``, ``ConversationChain`` ...);
each module filters exactly those warnings with ``pytestmark = LANGCHAIN_DEPRECATIONS``.
"""

from __future__ import annotations

import pytest

LANGCHAIN_DEPRECATIONS = [
    pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning"),
]
