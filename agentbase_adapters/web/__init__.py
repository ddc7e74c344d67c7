"""The browser dashboard: what the memory holds, and why a search returned what it did.

Run it with ``agentbase web --db memory.db`` or ``agentbase-web memory.db 8080``; open
http://127.0.0.1:8080/. Read-only unless started with ``--allow-edit``. Server-rendered pages
with inline SVG charts: no JavaScript and nothing fetched from the network. Needs
``pip install 'agentbase-memory[web]'``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["create_app", "main", "serve"]


def create_app(kernel: Any, *, allow_edit: bool = False, api_key: str | None = None,
               cache_seconds: float = 30.0, warm_up: bool = False) -> Any:
    """The dashboard's guarded ASGI app over an open ``Kernel`` (see ``app.create_app``).

    Imported on call, so ``import agentbase_adapters.web`` works without the ``web`` extra."""
    from .app import create_app as _create

    return _create(kernel, allow_edit=allow_edit, api_key=api_key, cache_seconds=cache_seconds, warm_up=warm_up)


def serve(db: str | os.PathLike[str] | None = None, *, port: int = 8080, host: str = "127.0.0.1",
          allow_edit: bool = False, api_key: str | None = None, embedder: Any = "auto") -> None:
    """Open ``db`` and serve the dashboard until interrupted (blocking).

    Args:
        db: The agentbase file (``None``: ``$AGENTBASE_PATH``, the ``.agentbase`` pointer, ``./agentbase.db`` (``locate_database``)).
        port: TCP port.
        host: Interface; beyond loopback only with ``api_key`` (``check_bind``).
        allow_edit: Offer edit and delete of entries.
        api_key: Require ``Authorization: Bearer <key>`` on every request (see
            ``agentbase_adapters._http_guard.resolve_api_key`` for flag / file / environment).
        embedder: The embedder the file was written with (``"auto"``: the default one), so the
            memory browser's search runs the same pipeline as the application's.

    Raises:
        MissingDependency: The ``web`` extra is not installed (checked first).
        InvalidArgument: ``host`` is not loopback and there is no ``api_key``.
    """
    from agentbase_adapters._http_guard import check_bind
    from agentbase_adapters._require import require, require_extra
    from agentbase_kernel import EmbeddingMismatch, Kernel

    require_extra("web")
    check_bind(host, api_key)
    uvicorn = require("uvicorn", extra="web")
    kernel = Kernel(db, embedder=embedder, create=False)
    try:
        kernel.initialize()
    except EmbeddingMismatch as exc:
        if embedder != "auto":
            raise
        # The file was written with another embedder: still show it, with FTS + NER search
        # (each trace then says so in its degrade_reason) rather than refuse to start.
        print(f"agentbase web: {exc} - searching without vectors", file=sys.stderr)
        kernel = Kernel(db, embedder=None, create=False).initialize()
    with kernel:
        app = create_app(kernel, allow_edit=allow_edit, api_key=api_key, warm_up=True)
        uvicorn.run(app, host=host, port=port, log_level="warning")


def main(argv: list[str] | None = None) -> int:
    """``agentbase-web [DB [PORT]]``: the design's short form of ``agentbase web``.

    Without DB, the file every entry point opens here (``locate_database``). Exit codes as the
    ``agentbase`` command's: 2 a bad argument, 3 the ``web`` extra missing or the file unusable.
    """
    from agentbase_adapters._require import require_extra
    from agentbase_kernel import AgentBaseError, MissingDependency, is_postgres_url, locate_database

    args = sys.argv[1:] if argv is None else argv
    if len(args) > 2 or args[:1] in (["-h"], ["--help"]):
        print("usage: agentbase-web [DB [PORT]]   (DB defaults to $AGENTBASE_PATH, the .agentbase pointer or "
              "./agentbase.db; PORT to 8080; read-only, loopback only)", file=sys.stderr)
        return 2
    try:
        port = int(args[1]) if len(args) == 2 else 8080
    except ValueError:
        print(f"agentbase-web: PORT must be a number, got {args[1]!r}", file=sys.stderr)
        return 2
    try:
        require_extra("web")
        db = locate_database(args[0] if args else None).location
    except MissingDependency as exc:
        print(f"agentbase-web: {exc}", file=sys.stderr)
        return 3
    except AgentBaseError as exc:  # a broken .agentbase pointer
        print(f"agentbase-web: {exc}", file=sys.stderr)
        return 3
    if not is_postgres_url(db) and not os.path.exists(db):  # a PostgreSQL URL is opened as given
        print(f"agentbase-web: no such file: {db}", file=sys.stderr)
        return 2
    print(f"agentbase dashboard for {db} on http://127.0.0.1:{port}/ (Ctrl+C stops it)", file=sys.stderr)
    serve(db, port=port)
    return 0
