"""The database schema as the CLI sees it: apply the pending migrations, or check for none.

The container provides a :class:`Schema`; production wires :class:`PostgresSchema`,
and tests that run the worker on the in-memory adapters provide one of their own.
Either way a schema that is not current is reported as
:class:`~workqueue.adapters.postgres.SchemaNotCurrentError`, whose one line tells the
operator what to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from workqueue.adapters.postgres import check_schema_current, migrate

if TYPE_CHECKING:
    import asyncpg

__all__ = ["PostgresSchema", "Schema"]


class Schema(Protocol):
    async def apply_pending(self) -> list[str]:
        """Apply every pending migration; return the names applied now (empty if none).

        :raises MigrationError: naming the migration that failed; nothing is applied.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        ...

    async def check_current(self) -> None:
        """Change nothing; make sure every migration this code ships is applied.

        :raises SchemaNotCurrentError: if not, with a message saying what to do.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        ...


class PostgresSchema:
    """:class:`Schema` on a PostgreSQL pool, through the adapter's migrations."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def apply_pending(self) -> list[str]:
        """See :meth:`Schema.apply_pending`."""
        return await migrate(self._pool)

    async def check_current(self) -> None:
        """See :meth:`Schema.check_current`."""
        await check_schema_current(self._pool)
