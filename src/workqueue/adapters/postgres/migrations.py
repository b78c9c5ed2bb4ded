"""Versioned schema migrations: ``migrations/NNNN_name.sql``, applied in order, each once.

Applied versions are recorded in ``workqueue_migrations``. :func:`migrate` runs
every pending migration in one transaction that first takes a transaction-level
advisory lock, so two workers starting together are safe: the second waits,
then finds nothing pending. One transaction also means all or nothing: a failing
migration leaves the database as it was. (A future migration that cannot run in
a transaction, such as ``CREATE INDEX CONCURRENTLY``, will need its own path.)

``workqueue migrate`` applies them. A worker started with ``--no-migrate`` (and
every short command that reads the queue) checks first, with
:func:`check_schema_current`, and stops on :class:`SchemaNotCurrentError`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import asyncpg

from workqueue.adapters.postgres.pool import DatabaseTarget, connection_to
from workqueue.adapters.postgres.sql import load_statements
from workqueue.domain import WorkQueueError

__all__ = [
    "Migration",
    "MigrationError",
    "SchemaNotCurrentError",
    "available_migrations",
    "check_schema_current",
    "migrate",
    "pending",
]

_PACKAGE = "workqueue.adapters.postgres"
_FILE_NAME = re.compile(r"^(?P<version>\d{4})_(?P<slug>[a-z0-9_]+)\.sql$")
_SQL = load_statements("migrations.sql")


class MigrationError(WorkQueueError, RuntimeError):
    """A migration file is malformed, or applying one failed."""


class SchemaNotCurrentError(WorkQueueError, RuntimeError):
    """The database lacks migrations this code needs, or has some it does not know.

    The one error for a schema that is not what this code expects, whoever checks
    it (a worker started with ``--no-migrate``, ``workqueue status``, ``enqueue``).
    ``missing`` and ``unknown`` hold the migration names of each kind; the message
    is one line saying what to do.
    """

    def __init__(self, missing: Sequence[str], unknown: Sequence[str]) -> None:
        self.missing = list(missing)
        self.unknown = list(unknown)
        # Missing migrations have one remedy, `workqueue migrate`; migrations this
        # code does not know mean the database is ahead of it, which no command
        # here can undo.
        problems = []
        if self.missing:
            problems.append(
                "database is not migrated: run `workqueue migrate` "
                f"(missing: {', '.join(self.missing)})"
            )
        if self.unknown:
            problems.append(
                f"database has migrations this code does not know ({', '.join(self.unknown)}): "
                "it was migrated by a newer version of workqueue; run that version"
            )
        super().__init__("; ".join(problems))


@dataclass(frozen=True, slots=True)
class Migration:
    """One migration file: its version (the NNNN prefix), name (file name less .sql) and SQL."""

    version: int
    name: str
    sql: str


@cache
def available_migrations() -> tuple[Migration, ...]:
    """Every migration shipped with this code, by version; read once per process.

    :raises MigrationError: if a file in ``migrations/`` is not named ``NNNN_name.sql``,
        or the versions are not 1, 2, 3, ... without gaps or repeats.
    """
    return _read_migrations()


def _read_migrations() -> tuple[Migration, ...]:
    # Apart from the cache so that mutmut, which skips decorated functions, mutates it.
    migrations = []
    for entry in files(_PACKAGE).joinpath("migrations").iterdir():
        if not entry.name.endswith(".sql"):
            continue
        match = _FILE_NAME.match(entry.name)
        if match is None:
            raise MigrationError(f"migration file {entry.name!r} is not named NNNN_name.sql")
        migrations.append(
            Migration(
                version=int(match["version"]),
                name=entry.name.removesuffix(".sql"),
                # bytes.decode() is UTF-8 whatever the locale, unlike read_text().
                sql=entry.read_bytes().decode(),
            )
        )
    migrations.sort(key=lambda migration: migration.version)
    versions = [migration.version for migration in migrations]
    if versions != list(range(1, len(migrations) + 1)):
        raise MigrationError(f"migration versions must run 1, 2, 3, ... without gaps: {versions}")
    return tuple(migrations)


async def migrate(target: DatabaseTarget) -> list[str]:  # pragma: no mutate block
    """Apply every pending migration, in order, under the migration lock.

    :param target: a pool, a connection, or a DSN to connect to for the occasion.
    :returns: the names of the migrations applied now (empty when none was pending).
    :raises MigrationError: naming the migration whose SQL failed; nothing is applied.
    :raises StoreUnavailableError: if the database cannot be reached.
    """
    async with connection_to(target) as connection, connection.transaction():
        await connection.execute(_SQL["lock"])
        if not await connection.fetchval(_SQL["bookkeeping_exists"]):
            await connection.execute(_SQL["create_bookkeeping"])
        applied = {row["version"] for row in await connection.fetch(_SQL["applied"])}
        applied_now = []
        for migration in available_migrations():
            if migration.version in applied:
                continue
            try:
                await connection.execute(migration.sql)
            except asyncpg.PostgresError as error:
                raise MigrationError(f"migration {migration.name} failed: {error}") from error
            await connection.execute(_SQL["record"], migration.version, migration.name)
            applied_now.append(migration.name)
        return applied_now


async def pending(target: DatabaseTarget) -> list[str]:  # pragma: no mutate block
    """The names of the migrations this code has and the database has not applied.

    :raises StoreUnavailableError: if the database cannot be reached.
    """
    missing, _ = await _compare(target)
    return missing


async def check_schema_current(target: DatabaseTarget) -> None:  # pragma: no mutate block
    """Make sure the database has exactly the migrations this code ships.

    For the worker's startup check: it changes nothing.

    :raises SchemaNotCurrentError: if migrations are missing (a database that was
        never migrated lacks them all) or the database has migrations this code
        does not know.
    :raises StoreUnavailableError: if the database cannot be reached.
    """
    missing, unknown = await _compare(target)
    if missing or unknown:
        raise SchemaNotCurrentError(missing, unknown)


async def _compare(
    target: DatabaseTarget,
) -> tuple[list[str], list[str]]:  # pragma: no mutate block
    async with connection_to(target) as connection:
        if await connection.fetchval(_SQL["bookkeeping_exists"]):
            rows = await connection.fetch(_SQL["applied"])
        else:
            rows = []
    applied = {row["version"]: row["name"] for row in rows}
    known = {migration.version: migration.name for migration in available_migrations()}
    missing = [name for version, name in sorted(known.items()) if version not in applied]
    unknown = [name for version, name in sorted(applied.items()) if version not in known]
    return missing, unknown
