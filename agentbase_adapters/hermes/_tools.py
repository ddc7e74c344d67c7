"""The tools the provider shows the model, in Hermes' (OpenAI function-calling) schema format."""

from __future__ import annotations

from typing import Any

__all__ = ["PROFILE", "REMEMBER", "SEARCH", "TOOL_SCHEMAS"]

SEARCH = "agentbase_search"
PROFILE = "agentbase_profile"
REMEMBER = "agentbase_remember"

TOOL_SCHEMAS: list[dict[str, Any]] = [
    {
        "name": SEARCH,
        "description": (
            "Search your long-term memory of this user: past conversations, stated preferences and facts, "
            "ranked by relevance (keywords, meaning, names and dates). Use it before answering anything that "
            "may depend on earlier sessions; search again with other words when the first results do not "
            "answer the question."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "top_k": {"type": "integer", "description": "How many memories (default 8, at most 50)."},
            },
            "required": ["query"],
        },
    },
    {
        "name": PROFILE,
        "description": "What you know about the user: their current preferences and facts, newest first.",
        "parameters": {"type": "object", "properties": {}},
    },
    {
        "name": REMEMBER,
        "description": (
            "Store one durable fact about the user, verbatim, the moment they state a lasting preference, "
            "correction or decision. Skip small talk and facts already stored."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "The fact, as one self-contained sentence."},
                "category": {"type": "string", "enum": ["preference", "fact", "note"],
                             "description": "preference and fact are part of the user's profile (default fact)."},
            },
            "required": ["content"],
        },
    },
]
