"""The PostgreSQL adapter: the queue, the stores and notifications on asyncpg.

Build a pool with :func:`create_pool`, apply the schema with :func:`migrate`
(or check it with :func:`check_schema_current`), then wire::

    pool = await create_pool(dsn)
    queue = PostgresWorkQueue(pool, clock)
    store = PostgresWorkStore(pool, clock)

A queue on the caller's connection enqueues inside the caller's transaction
(``PostgresWorkQueue(connection, clock)``; docs/adr/0014).

Every statement lives in ``sql/*.sql`` and every migration in
``migrations/NNNN_name.sql``. ``python -m workqueue.adapters.postgres.schema`` migrates a
database and prints (or writes, or checks) ``docs/schema.sql``.
"""

from __future__ import annotations

from workqueue.adapters.postgres.activity import PostgresActivityLog
from workqueue.adapters.postgres.migrations import (
    MigrationError,
    SchemaNotCurrentError,
    available_migrations,
    check_schema_current,
    migrate,
    pending,
)
from workqueue.adapters.postgres.monitor import PostgresWorkMonitor
from workqueue.adapters.postgres.notifications import CHANNEL, PostgresWorkNotifications
from workqueue.adapters.postgres.pool import (
    DEFAULT_POOL_MAX_SIZE,
    DEFAULT_POOL_MIN_SIZE,
    close_pool,
    create_pool,
    redact_dsn,
)
from workqueue.adapters.postgres.queue import PostgresWorkQueue
from workqueue.adapters.postgres.store import PostgresWorkStore
from workqueue.adapters.postgres.tokens import PostgresRefreshTokenStore
from workqueue.adapters.postgres.unavailable import is_connection_loss

__all__ = [
    "CHANNEL",
    "DEFAULT_POOL_MAX_SIZE",
    "DEFAULT_POOL_MIN_SIZE",
    "MigrationError",
    "PostgresActivityLog",
    "PostgresRefreshTokenStore",
    "PostgresWorkMonitor",
    "PostgresWorkNotifications",
    "PostgresWorkQueue",
    "PostgresWorkStore",
    "SchemaNotCurrentError",
    "available_migrations",
    "check_schema_current",
    "close_pool",
    "create_pool",
    "is_connection_loss",
    "migrate",
    "pending",
    "redact_dsn",
]
