"""The provider's settings: ``$HERMES_HOME/agentbase.json`` (written by ``hermes memory setup``), over defaults.

No setting is secret: a PostgreSQL password belongs in ``PGPASSWORD`` or ``~/.pgpass`` (libpq reads
both), not in the URL stored here.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .._harness import positive_int, seconds

__all__ = ["CONFIG_FILE", "CONFIG_SCHEMA", "load_config", "save_config"]

CONFIG_FILE = "agentbase.json"

DEFAULTS: dict[str, Any] = {
    "db": None,               # a file path or postgresql:// URL; None: $AGENTBASE_PATH, else $HERMES_HOME/agentbase.db
    "user_id": None,          # None: the gateway's user id, else "hermes-user"
    "agent_id": "hermes",
    "token_budget": 1000,     # tokens of recalled memory injected per turn
    "prefetch_wait": 1.0,     # seconds a turn waits for its recall before going on without it
    "tool_timeout": 10.0,     # seconds a memory tool waits for the store
    "breaker_threshold": 5,   # store failures in a row that pause the store
    "breaker_cooldown": 30.0,  # seconds paused before one trial request
    "embedder": "auto",
    "ner": "auto",
}

CONFIG_SCHEMA: list[dict[str, Any]] = [
    {"key": "db", "description": "agentbase file path or postgresql:// URL (blank: $HERMES_HOME/agentbase.db)",
     "required": False},
    {"key": "user_id", "description": "Whose memories these are (blank: the gateway's user id)", "required": False},
    {"key": "agent_id", "description": "Agent identifier written with each turn", "default": "hermes"},
    {"key": "token_budget", "description": "Tokens of recalled memory injected per turn", "default": "1000"},
    {"key": "prefetch_wait", "description": "Seconds a turn waits for recall before going on without it",
     "default": "1.0"},
    {"key": "breaker_threshold", "description": "Store failures in a row before pausing it", "default": "5"},
    {"key": "breaker_cooldown", "description": "Seconds the store is paused before one trial", "default": "30"},
]

_INTS = ("token_budget", "breaker_threshold")
_SECONDS = ("prefetch_wait", "tool_timeout", "breaker_cooldown")


def load_config(hermes_home: str | os.PathLike[str], **overrides: Any) -> dict[str, Any]:
    """Defaults, then ``agentbase.json`` in ``hermes_home``, then ``overrides`` (constructor keywords).

    Raises:
        ValueError: A malformed file or a setting of the wrong kind (named in the message).
    """
    config = dict(DEFAULTS)
    path = Path(hermes_home) / CONFIG_FILE
    if path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not valid JSON ({exc}) - fix it or run `hermes memory setup`") from None
        if not isinstance(stored, dict):
            raise ValueError(f"{path} must hold a JSON object, not {type(stored).__name__}")
        config.update({k: v for k, v in stored.items() if v not in (None, "")})
    config.update({k: v for k, v in overrides.items() if v is not None})
    return _checked(config, hermes_home)


def _checked(config: dict[str, Any], hermes_home: str | os.PathLike[str]) -> dict[str, Any]:
    unknown = sorted(set(config) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown agentbase setting(s) {unknown} - known: {sorted(DEFAULTS)}")
    for key in _INTS:
        config[key] = positive_int(config[key], key)
    for key in _SECONDS:
        config[key] = seconds(config[key], key)
    for key in ("db", "user_id", "agent_id", "embedder", "ner"):
        if config[key] is not None and not (isinstance(config[key], str) and config[key].strip()):
            raise ValueError(f"{key} must be a non-empty string, not {config[key]!r}")
    home = str(hermes_home)
    if config["db"] is None:
        config["db"] = os.environ.get("AGENTBASE_PATH") or str(Path(home) / "agentbase.db")
    else:
        config["db"] = config["db"].replace("${HERMES_HOME}", home).replace("$HERMES_HOME", home)
    return config


def save_config(values: dict[str, Any], hermes_home: str | os.PathLike[str]) -> Path:
    """Merge ``values`` into ``$HERMES_HOME/agentbase.json`` and return its path.

    Raises:
        ValueError: A value of the wrong kind or an unknown key; the file is left as it was.
    """
    path = Path(hermes_home) / CONFIG_FILE
    existing: dict[str, Any] = {}
    if path.exists():
        try:
            existing = json.loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError:
            existing = {}
    merged = {**existing, **values}
    _checked({**DEFAULTS, **{k: v for k, v in merged.items() if v not in (None, "")}}, hermes_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
