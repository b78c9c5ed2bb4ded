"""The one PostgreSQL a benchmark run uses, and a fresh database for every workload run.

By default the server is the embedded one from the ``pgserver`` wheel, its data in a
new directory under ``/tmp`` that is deleted afterwards; ``--database-url`` names an
existing server instead (its maintenance database: the user must be allowed to
create databases). Either way every workload run gets a database of its own,
created, migrated and dropped again, so no run sees another's rows.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from bench.statements import BENCH_SQL
from workqueue.adapters.postgres import migrate, redact_dsn
from workqueue.entrypoints.worker.embedded import start_embedded_postgres

__all__ = [
    "DEFAULT_DATA_PARENT",
    "BenchServer",
    "ServerSettings",
    "checkpoint_and_vacuum",
    "database_url",
    "pgbench_binary",
    "started_server",
]

_SYSTEM_PGBENCH = Path("/usr/lib/postgresql/15/bin/pgbench")

DEFAULT_DATA_PARENT = Path("/tmp")
"""Where the embedded server's data directory is made, unless told otherwise."""
_DATABASE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """What the server says about itself: the settings that move the figures."""

    version: str
    fsync: str
    synchronous_commit: str
    shared_buffers: str


@dataclass(frozen=True, slots=True)
class BenchServer:
    """A running PostgreSQL: its maintenance DSN, and where the figures came from."""

    admin_dsn: str
    source: str
    settings: ServerSettings

    @asynccontextmanager
    async def fresh_database(self, name: str) -> AsyncIterator[str]:
        """A new, migrated database called ``name`` for the block; dropped afterwards.

        A database left over by an interrupted run is dropped first.

        :raises ValueError: if ``name`` is not a plain lower-case identifier.
        """
        if not _DATABASE_NAME.match(name):
            raise ValueError(f"not a plain database name: {name!r}")
        admin = await asyncpg.connect(self.admin_dsn)
        try:
            # Identifiers cannot be parameters; the name was checked above.
            await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            await admin.execute(f"CREATE DATABASE {name}")
        finally:
            await admin.close()
        dsn = database_url(self.admin_dsn, name)
        try:
            await migrate(dsn)
            yield dsn
        finally:
            admin = await asyncpg.connect(self.admin_dsn)
            try:
                await admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            finally:
                await admin.close()


def database_url(admin_dsn: str, database: str) -> str:
    """``admin_dsn`` pointed at ``database`` instead (host, socket and user unchanged)."""
    parts = urlsplit(admin_dsn)
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, parts.fragment))


async def checkpoint_and_vacuum(dsn: str) -> None:
    """``VACUUM ANALYZE work_items`` and a ``CHECKPOINT``: what runs before every timed phase.

    Vacuum and fresh statistics give each phase the table a long-running
    deployment's autovacuum would; the checkpoint keeps one from landing inside
    the phase because the setup wrote a lot.
    """
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(BENCH_SQL["vacuum_analyze"])
        await connection.execute(BENCH_SQL["checkpoint"])
    finally:
        await connection.close()


async def _server_settings(dsn: str) -> ServerSettings:
    connection = await asyncpg.connect(dsn)
    try:
        row = await connection.fetchrow(BENCH_SQL["server_settings"])
    finally:
        await connection.close()
    assert row is not None
    return ServerSettings(
        version=row["version"].split(" on ")[0],
        fsync=row["fsync"],
        synchronous_commit=row["synchronous_commit"],
        shared_buffers=row["shared_buffers"],
    )


@contextmanager
def _embedded_server(data_parent: Path) -> Iterator[str]:
    # pgserver, run as root, adds o+rx to every parent of its data directory; a
    # private 0700 temporary directory would be loosened (and refused), so ours
    # is world-traversable from the start and holds nothing but the data.
    parent = Path(tempfile.mkdtemp(prefix="workqueue-bench-", dir=data_parent))
    os.chmod(parent, 0o755)
    try:
        server = start_embedded_postgres(parent / "pgdata")
        try:
            yield server.dsn
        finally:
            server.stop()
    finally:
        shutil.rmtree(parent, ignore_errors=True)


@asynccontextmanager
async def started_server(
    url: str | None, *, data_parent: Path = DEFAULT_DATA_PARENT
) -> AsyncIterator[BenchServer]:
    """The server at ``url``, or else an embedded one started (and removed) for the run.

    :param data_parent: where the embedded server's temporary data directory goes;
        ``/dev/shm`` takes the disk (and every fsync) out of the figures.
    """
    if url is not None:
        yield BenchServer(url, redact_dsn(url), await _server_settings(url))
        return
    with _embedded_server(data_parent) as dsn:
        source = f"embedded (pgserver), data under {data_parent}"
        yield BenchServer(dsn, source, await _server_settings(dsn))


def pgbench_binary() -> Path:
    """The pgbench that ships in the pgserver wheel, else the system PostgreSQL 15 one.

    :raises FileNotFoundError: if neither exists.
    """
    with warnings.catch_warnings():
        # Without XDG_RUNTIME_DIR pgserver warns on import; its fallback is fine.
        warnings.simplefilter("ignore")
        import pgserver._commands

    shipped = Path(pgserver._commands.POSTGRES_BIN_PATH) / "pgbench"
    for candidate in (shipped, _SYSTEM_PGBENCH):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no pgbench at {shipped} or {_SYSTEM_PGBENCH}")
