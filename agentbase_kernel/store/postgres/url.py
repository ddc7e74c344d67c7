"""Telling a PostgreSQL URL from a file path, and printing one without its password."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["is_postgres_url", "redact_url"]

_SCHEMES = ("postgresql://", "postgres://")
_PASSWORD_PARAM = re.compile(r"(?i)(password=)[^&]*")


def is_postgres_url(location: str | os.PathLike[str] | None) -> bool:
    """True for ``postgresql://...`` / ``postgres://...`` given as a string (a ``Path`` cannot hold one)."""
    return isinstance(location, str) and location.lower().startswith(_SCHEMES)


def redact_url(url: str) -> str:
    """The URL with its password (in the netloc or a ``password=`` parameter) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://***"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        if ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":***"
        netloc = f"{userinfo}@{host}"
    query = _PASSWORD_PARAM.sub(r"\1***", parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
