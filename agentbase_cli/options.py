"""Options shared by many commands, and the command class that turns agentbase errors into exit codes.

The database options (``--db``, ``--embedder``, ``--ner``, ``--quiet``) are accepted both before
the command (``agentbase --db x.db list``) and after it (``agentbase list --db x.db``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from agentbase_kernel import AgentBaseError

from .database import Settings
from .errors import CliError, ExitCode, from_agentbase_error

__all__ = ["AgentbaseCommand", "AgentbaseGroup", "database_options", "json_option", "metadata_option",
           "parse_metadata", "scope_from", "scope_options", "split_tags"]

F = TypeVar("F", bound=Callable[..., Any])
SCOPE_KEYS = ("user_id", "agent_id", "project_id", "session_id")


class AgentbaseCommand(click.Command):
    """A command whose agentbase errors and Ctrl-C become a one-line message and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AgentBaseError as exc:
            command = ctx.command_path.partition(" ")[2] or ctx.command_path
            scoped = any(ctx.params.get(key) for key in SCOPE_KEYS)
            raise from_agentbase_error(exc, command, scoped) from None
        except KeyboardInterrupt:
            raise CliError("Interrupted.", ExitCode.INTERRUPTED) from None


class AgentbaseGroup(click.Group):
    """A group whose commands (and subgroups) are ``AgentbaseCommand`` (``AgentbaseGroup``)."""

    command_class = AgentbaseCommand
    group_class = type  # click: subgroups are of this same class


def _remember(field: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None or value is False:
            return value
        settings = ctx.ensure_object(Settings)
        setattr(settings, field, value)
        if field == "db":
            from_env = ctx.get_parameter_source(param.name or "") is ParameterSource.ENVIRONMENT
            settings.db_source = "$AGENTBASE_PATH" if from_env else "--db"
        return value

    return callback


def database_options(*, envvars: bool = False) -> Callable[[F], F]:
    """``--db``, ``--embedder``, ``--ner``, ``--quiet`` (with ``envvars``: read from the environment too)."""

    def decorate(fn: F) -> F:
        options = [
            click.option("--db", type=click.Path(dir_okay=False, path_type=Path), metavar="PATH",
                         envvar="AGENTBASE_PATH" if envvars else None, expose_value=False, is_eager=True,
                         callback=_remember("db"),
                         help="The database file. Default: $AGENTBASE_PATH, else the file named by the "
                              ".agentbase that `agentbase init --data-dir` wrote in this folder or a parent, "
                              "else ./agentbase.db."),
            click.option("--embedder", metavar="NAME", envvar="AGENTBASE_EMBEDDER" if envvars else None,
                         expose_value=False, is_eager=True, callback=_remember("embedder"),
                         help="The embedder the file was written with: auto (the bundled MiniLM; default), none, "
                              "minilm, minilm-int8, sentence-transformers:PATH, fastembed:NAME, "
                              "openai:MODEL@URL, tei:[NAME@]URL, ollama:MODEL[@URL] (remote ones fail open: docs/lifecycle.md). "
                              "Also $AGENTBASE_EMBEDDER."),
            click.option("--ner", metavar="NAME", envvar="AGENTBASE_NER" if envvars else None,
                         expose_value=False, is_eager=True, callback=_remember("ner"),
                         help="Entity recognition: auto (the installed spaCy English model; default), regex, "
                              "none, or a spaCy pipeline name. Also $AGENTBASE_NER."),
            click.option("-q", "--quiet", is_flag=True, expose_value=False, is_eager=True,
                         callback=_remember("quiet"), help="No progress bars and no notes on stderr."),
        ]
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON (the records' fields) instead of text.")


def scope_options(fn: F) -> F:
    for key, who in reversed((("user-id", "user"), ("agent-id", "agent"), ("project-id", "project"),
                              ("session-id", "session"))):
        fn = click.option(f"--{key}", metavar="ID", help=f"Only the {who} with this id.")(fn)
    return fn


def scope_from(params: dict[str, Any]) -> dict[str, str]:
    return {key: params[key] for key in SCOPE_KEYS if params.get(key) is not None}


def split_tags(values: tuple[str, ...]) -> list[str]:
    """``--tags "a,b" --tags c`` -> ``["a", "b", "c"]`` (blank items dropped)."""
    return [t.strip() for value in values for t in value.split(",") if t.strip()]


def parse_metadata(values: tuple[str, ...], option: str = "--metadata") -> dict[str, Any] | None:
    """``'{"k": 1}'`` or ``k=v`` items merged into one dict (``v`` read as JSON when it parses)."""
    if not values:
        return None
    merged: dict[str, Any] = {}
    for value in values:
        text = value.strip()
        if text.startswith("{"):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError as exc:
                raise click.BadParameter(f"not a JSON object ({exc.msg}): {value}", param_hint=option) from None
            if not isinstance(parsed, dict):
                raise click.BadParameter(f"not a JSON object: {value}", param_hint=option)
            merged.update(parsed)
            continue
        key, sep, raw = text.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"use KEY=VALUE or a JSON object, got {value!r}", param_hint=option)
        try:
            merged[key] = json.loads(raw)
        except json.JSONDecodeError:
            merged[key] = raw
    return merged


def metadata_option(help_text: str) -> Callable[[F], F]:
    return click.option("--metadata", multiple=True, metavar="JSON|KEY=VALUE", help=help_text)
