"""Exit codes, and agentbase errors turned into one line that says what to type next.

The codes are part of the command's interface (documented in ``docs/cli.md``): scripts test
``$?`` to tell "not there" from "you typed it wrong" from "the file is in trouble".
"""

from __future__ import annotations

from enum import IntEnum

import click

from agentbase_kernel import (
    AgentBaseError,
    DatabaseLocked,
    EmbedderUnavailable,
    EmbeddingMismatch,
    EntryNotFound,
    InvalidArgument,
    MessageNotFound,
    NotFoundError,
    SchemaTooNew,
    SessionNotFound,
)

__all__ = ["CliError", "ExitCode", "from_agentbase_error"]

EMBEDDER_NAMES = ("auto, none, minilm, minilm-int8, sentence-transformers:PATH, fastembed:NAME, openai:MODEL@URL, "
                  "tei:[NAME@]URL, ollama:MODEL[@URL]")


class ExitCode(IntEnum):
    OK = 0
    NOT_FOUND = 1  # the database, entry, session or message named does not exist
    USAGE = 2  # a bad option or value (click's own usage errors use 2 as well)
    ERROR = 3  # the file cannot be used as asked: locked, too new, other embedder, missing extra, ...
    CHECK_FAILED = 4  # verify / rebuild ran and found the file unhealthy
    INTERRUPTED = 130  # Ctrl-C


class CliError(click.ClickException):
    """An error shown as ``Error: <message>`` on stderr, exiting with ``code``."""

    def __init__(self, message: str, code: ExitCode = ExitCode.ERROR) -> None:
        super().__init__(message)
        self.exit_code = int(code)


def _sentence(exc: BaseException) -> str:
    text = str(exc).strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def from_agentbase_error(exc: AgentBaseError, command: str, scoped: bool) -> CliError:
    """The ``CliError`` for a kernel error raised while running ``agentbase <command>``.

    ``scoped`` says whether the user narrowed the command with scope options, which is the usual
    reason an existing id is "not found".
    """
    text = _sentence(exc)
    if isinstance(exc, EntryNotFound):
        hint = " It may belong to another scope: drop the --user-id/--agent-id/... options." if scoped else ""
        return CliError(f"{text}{hint} See the ids with: agentbase list", ExitCode.NOT_FOUND)
    if isinstance(exc, SessionNotFound):
        return CliError(f"{text} See the sessions with: agentbase session list "
                        f"(or create it with: agentbase session create --session-id {exc.session_id})",
                        ExitCode.NOT_FOUND)
    if isinstance(exc, MessageNotFound):
        where = exc.session_id or "SESSION_ID"
        return CliError(f"{text} See the messages with: agentbase session show {where}", ExitCode.NOT_FOUND)
    if isinstance(exc, NotFoundError):
        return CliError(text, ExitCode.NOT_FOUND)
    if isinstance(exc, InvalidArgument):
        return CliError(f"{text} See: agentbase {command} --help", ExitCode.USAGE)
    if isinstance(exc, EmbeddingMismatch):
        return CliError(f"{str(exc).split(' - ')[0]}. Open it with the embedder that wrote it: "
                        f"agentbase --embedder NAME {command} ... (NAME: {EMBEDDER_NAMES})")
    if isinstance(exc, EmbedderUnavailable):
        return CliError(f"{text} Start the embedding server (or check its URL), then run the command again; "
                        f"add and find keep working meanwhile: agentbase {command} ...")
    if isinstance(exc, DatabaseLocked):
        return CliError(f"{text} Another process is writing to the file: run the command again when it is done.")
    if isinstance(exc, SchemaTooNew):
        return CliError(f"{text} Upgrade with: pip install -U agentbase-memory")
    return CliError(text)
