"""OpenAI's wire rules that do not depend on storage: ids, timestamps, argument checks, lists.

Everything here is pure: no kernel call, no framework import. The checks raise the kernel's
``InvalidArgument`` carrying ``param`` and ``code`` attributes, which the HTTP app copies into
OpenAI's error body (``{"error": {"message", "type", "param", "code"}}``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agentbase_kernel import InvalidArgument

__all__ = [
    "check_choice",
    "check_fields",
    "check_limit",
    "check_metadata",
    "check_text",
    "check_types",
    "epoch",
    "invalid",
    "json_type",
    "new_id",
    "page",
]

# https://platform.openai.com/docs/api-reference (metadata: "Set of 16 key-value pairs ...
# Keys are strings with a maximum length of 64 characters. Values are strings with a maximum
# length of 512 characters.")
MAX_METADATA_KEYS = 16
MAX_METADATA_KEY_LENGTH = 64
MAX_METADATA_VALUE_LENGTH = 512


def new_id(prefix: str, *, nbytes: int = 12) -> str:
    """A fresh OpenAI-style id such as ``thread_1f0c...`` (24 hex digits after the prefix)."""
    return f"{prefix}_{secrets.token_hex(nbytes)}"


def epoch(moment: datetime | None) -> int:
    """Unix seconds, the way OpenAI's ``created_at`` is written; now when ``moment`` is None."""
    return int(moment.timestamp()) if moment is not None else int(time.time())


def json_type(value: Any) -> str:
    """The JSON name of a value's type with its article, as OpenAI's messages say it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def invalid(message: str, *, param: str | None = None, code: str | None = None) -> InvalidArgument:
    """An ``InvalidArgument`` that also carries OpenAI's ``param`` and ``code``."""
    return InvalidArgument(message, param=param, code=code)


def check_metadata(value: Any, *, param: str = "metadata") -> dict[str, str]:
    """Check OpenAI's metadata rules and return a copy (``None`` becomes ``{}``).

    Raises:
        InvalidArgument: Not an object, more than 16 keys, a key over 64 characters, a value
            that is not a string or is over 512 characters.
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise invalid(
            f"Invalid type for '{param}': expected an object, but got {json_type(value)} instead.",
            param=param,
            code="invalid_type",
        )
    if len(value) > MAX_METADATA_KEYS:
        raise invalid(
            f"Invalid '{param}': too many properties. Expected an object with at most "
            f"{MAX_METADATA_KEYS} properties, but got an object with {len(value)} properties instead.",
            param=param,
            code="object_above_max_properties",
        )
    for key, item in value.items():
        if not isinstance(key, str) or len(key) > MAX_METADATA_KEY_LENGTH:
            raise invalid(
                f"Invalid '{param}': keys must be strings of at most {MAX_METADATA_KEY_LENGTH} "
                f"characters, but got a key of length {len(str(key))}.",
                param=param,
                code="invalid_metadata_key",
            )
        if not isinstance(item, str):
            raise invalid(
                f"Invalid type for '{param}.{key}': expected a string, but got {json_type(item)} instead.",
                param=f"{param}.{key}",
                code="invalid_type",
            )
        if len(item) > MAX_METADATA_VALUE_LENGTH:
            raise invalid(
                f"Invalid '{param}.{key}': string too long. Expected a string with maximum length "
                f"{MAX_METADATA_VALUE_LENGTH}, but got a string with length {len(item)} instead.",
                param=f"{param}.{key}",
                code="string_above_max_length",
            )
    return dict(value)


def check_limit(value: Any, *, default: int = 20) -> int:
    """Check a list ``limit`` (1-100, OpenAI's bounds) and return it as an int."""
    if value is None:
        return default
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            raise invalid(
                f"Invalid 'limit': expected an integer, but got {value!r} instead.",
                param="limit",
                code="invalid_type",
            ) from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(
            f"Invalid type for 'limit': expected an integer, but got {json_type(value)} instead.",
            param="limit",
            code="invalid_type",
        )
    if value < 1:
        raise invalid(
            f"Invalid 'limit': integer below minimum value. Expected a value >= 1, but got {value} instead.",
            param="limit",
            code="integer_below_min_value",
        )
    if value > 100:
        raise invalid(
            "Invalid 'limit': integer above maximum value. "
            f"Expected a value <= 100, but got {value} instead.",
            param="limit",
            code="integer_above_max_value",
        )
    return value


def check_choice(value: Any, choices: Sequence[str], *, param: str) -> str:
    """Check that ``value`` is one of ``choices`` (OpenAI's "Invalid value" error otherwise)."""
    if value is None:
        raise invalid(
            f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter"
        )
    if value not in choices:
        listed = ", ".join(f"'{choice}'" for choice in choices[:-1]) + f" and '{choices[-1]}'"
        raise invalid(
            f"Invalid value: {value!r}. Supported values are: {listed}.",
            param=param,
            code="invalid_value",
        )
    return str(value)


def check_text(value: Any, *, param: str) -> str:
    """Check a required non-blank string argument."""
    if value is None:
        raise invalid(
            f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter"
        )
    if not isinstance(value, str):
        raise invalid(
            f"Invalid type for '{param}': expected a string, but got {json_type(value)} instead.",
            param=param,
            code="invalid_type",
        )
    if not value.strip():
        raise invalid(
            f"Invalid '{param}': empty string. Expected a non-empty value.",
            param=param,
            code="empty_string",
        )
    return value


def page(data: list[dict[str, Any]], *, has_more: bool) -> dict[str, Any]:
    """OpenAI's list object: ``{"object": "list", "data", "first_id", "last_id", "has_more"}``."""
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": has_more,
    }


def check_fields(body: dict[str, Any], allowed: Sequence[str]) -> dict[str, Any]:
    """Return ``body`` if every key is in ``allowed``; OpenAI's "Unknown parameter" 400 otherwise.

    Bodies reach the adapter field by field, never as ``**body``: a key such as ``self`` or
    ``options`` would otherwise bind to a Python parameter.
    """
    for key in body:
        if key not in allowed:
            shown = key if len(key) <= 64 else f"{key[:64]}..."
            raise invalid(f"Unknown parameter: {shown!r}.", param=shown, code="unknown_parameter")
    return body


_JSON_KINDS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def check_types(body: dict[str, Any], kinds: dict[str, str]) -> dict[str, Any]:
    """Check each present, non-null field against its JSON kind(s) (``"string|object"``); 400 otherwise."""
    for key, kind in kinds.items():
        value = body.get(key)
        if value is None:
            continue
        names = kind.split("|")
        allowed = tuple(t for name in names for t in _JSON_KINDS[name])
        is_bool = isinstance(value, bool)
        if not isinstance(value, allowed) or (is_bool and "boolean" not in names):
            expected = " or ".join(f"an {n}" if n[0] in "aeiou" else f"a {n}" for n in names)
            raise invalid(
                f"Invalid type for '{key}': expected {expected}, but got {json_type(value)} instead.",
                param=key,
                code="invalid_type",
            )
    return body
