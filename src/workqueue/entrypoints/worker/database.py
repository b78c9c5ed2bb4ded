"""Which PostgreSQL the worker uses, and the pool it opens there.

The container's database resources live here. :func:`open_database` picks the database: the
configured URL, or else the embedded PostgreSQL, started for the run and left to
stop when its last user exits. :func:`open_pool` connects to it, retrying a
database that is not answering yet a bounded number of times, then giving up
with one line (:class:`DatabaseUnreachableError`) rather than hanging.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from workqueue.adapters.postgres import (
    DEFAULT_POOL_MAX_SIZE,
    PostgresWorkNotifications,
    PostgresWorkQueue,
    PostgresWorkStore,
    create_pool,
    is_connection_loss,
    redact_dsn,
)
from workqueue.domain import Clock, WorkQueueError
from workqueue.entrypoints.worker.embedded import start_embedded_postgres
from workqueue.entrypoints.worker.log_format import mask_url_passwords

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "CONNECT_TIMEOUT_SECONDS",
    "DatabaseTarget",
    "DatabaseUnreachableError",
    "open_database",
    "open_notifications",
    "open_pool",
    "open_work_queue",
    "open_work_store",
    "pool_max_size_for",
    "retry_delays",
]

logger = logging.getLogger("workqueue.cli.database")

CONNECT_TIMEOUT_SECONDS = 5.0
"""How long one connection attempt may take; asyncpg's own default is a minute."""


class DatabaseUnreachableError(WorkQueueError, RuntimeError):
    """The database did not answer within the allowed attempts, or refused us.

    The message is one line, names the database with its password hidden, and says
    what went wrong last.
    """


@dataclass(frozen=True, slots=True)
class DatabaseTarget:
    """The database a run uses: how to reach it, and how to name it in logs.

    :param dsn: the connection string; may hold a password, so it is kept out of
        the repr and shown only through :attr:`shown`.
    :param embedded_data_dir: the embedded server's data directory, or None when
        the database came from ``WORKQUEUE_DATABASE_URL``.
    """

    dsn: str = field(repr=False)
    embedded_data_dir: Path | None = None

    @property
    def shown(self) -> str:
        """The DSN with its password replaced by ``***``."""
        return redact_dsn(self.dsn)


async def open_database(
    database_url: SecretStr | None, embedded_data_dir: Path
) -> AsyncIterator[DatabaseTarget]:
    """Container resource: the URL's database, or a started embedded PostgreSQL.

    :raises EmbeddedDatabaseError: if the embedded server cannot be started.
    """
    if database_url is not None:
        yield DatabaseTarget(dsn=database_url.get_secret_value())
        return
    # The first start runs initdb (seconds): say so before the silence, not after.
    logger.info(
        "starting the embedded PostgreSQL in %s",
        embedded_data_dir,
        extra={"embedded_data_dir": str(embedded_data_dir)},
    )
    # pgserver blocks for initdb and pg_ctl; keep the event loop free meanwhile.
    server = await asyncio.to_thread(start_embedded_postgres, embedded_data_dir)
    try:
        yield DatabaseTarget(dsn=server.dsn, embedded_data_dir=server.data_dir)
    finally:
        await asyncio.to_thread(server.stop)


def pool_max_size_for(configured: int | None, *, concurrency: int, min_size: int) -> int:
    """The pool's largest size: ``WORKQUEUE_POOL_MAX_SIZE`` if set, else sized for the lanes.

    One lane's worker needs :data:`~workqueue.adapters.postgres.DEFAULT_POOL_MAX_SIZE` (its
    store's and its queue's kept connections, a heartbeat's, one spare); each
    further lane sends its own claims and outcomes on a store of its own, so it
    gets one more; and above one lane, the lanes' shared heartbeats and shared
    completions keep a connection each (a store of their own, see
    :func:`~workqueue.entrypoints.worker.container.executors_for`). Never below
    ``min_size``.
    """
    if configured is not None:
        return configured
    shared = _SHARED_LANE_STORES if concurrency > 1 else 0
    return max(DEFAULT_POOL_MAX_SIZE + concurrency - 1 + shared, min_size)


# The shared heartbeats and the shared completions of a worker of several lanes.
_SHARED_LANE_STORES = 2


def retry_delays(attempts: int, *, first: float = 0.5, longest: float = 4.0) -> list[float]:
    """Seconds to wait after each failed attempt but the last: doubling, capped."""
    return [min(first * 2**index, longest) for index in range(max(attempts - 1, 0))]


async def open_pool(
    database: DatabaseTarget,
    *,
    clock: Clock,
    min_size: int,
    max_size: int,
    attempts: int,
    transaction_pooling: bool = False,
) -> AsyncIterator[asyncpg.Pool]:
    """Container resource: a connection pool on ``database``, closed at shutdown.

    With ``transaction_pooling`` (the database URL is a pooler in transaction
    mode, such as PgBouncer) asyncpg keeps no prepared statements: each
    transaction may reach another server connection, where they do not exist.

    A lost or refused connection is retried ``attempts`` times in all, waiting on
    ``clock`` between tries; any other error (a wrong password, a missing
    database) is not going to improve and ends the attempts at once.

    Each retry is announced (``retrying (2/5) in 0.5 s``), so a user knows why
    nothing happens yet. Cancelled meanwhile (Ctrl-C), it stops trying at once and
    raises, an ordinary error rather than the cancellation: the container's
    framework reports a cancelled resource with a traceback, and the caller is
    being cancelled anyway.

    :raises DatabaseUnreachableError: when no attempt succeeds, or the attempts
        were interrupted.
    """
    try:
        pool = await _connect(
            database,
            clock=clock,
            min_size=min_size,
            max_size=max_size,
            attempts=attempts,
            transaction_pooling=transaction_pooling,
        )
    except asyncio.CancelledError:
        raise DatabaseUnreachableError(
            f"connecting to the database {database.shown} was interrupted"
        ) from None
    try:
        yield pool
    finally:
        await pool.close()


async def _connect(
    database: DatabaseTarget,
    *,
    clock: Clock,
    min_size: int,
    max_size: int,
    attempts: int,
    transaction_pooling: bool,
) -> asyncpg.Pool:
    sizes = {"min_size": min_size, "max_size": max_size}
    # Behind a pooler in transaction mode, no prepared statements: each transaction
    # may reach another server connection, where they do not exist.
    options = {**sizes, "statement_cache_size": 0} if transaction_pooling else sizes
    delays = retry_delays(attempts)
    for attempt, delay in enumerate(delays, start=1):
        try:
            return await _create_pool(database, options)
        except Exception as error:
            if not (is_connection_loss(error) or isinstance(error, TimeoutError)):
                raise _unreachable(database, attempt, error) from error
            logger.warning(
                "cannot reach the database %s (%s); retrying (%d/%d) in %s s",
                database.shown,
                mask_url_passwords(_reason(error)),
                attempt + 1,
                attempts,
                delay,
                extra={"attempt": attempt + 1, "attempts": attempts},
            )
            await clock.sleep(delay)
    try:
        return await _create_pool(database, options)
    except Exception as error:
        raise _unreachable(database, len(delays) + 1, error) from error


async def _create_pool(database: DatabaseTarget, options: dict[str, int]) -> asyncpg.Pool:
    return await create_pool(database.dsn, timeout=CONNECT_TIMEOUT_SECONDS, **options)


def _unreachable(
    database: DatabaseTarget, attempt: int, error: Exception
) -> DatabaseUnreachableError:
    tried = f" after {attempt} attempts" if attempt > 1 else ""
    return DatabaseUnreachableError(
        mask_url_passwords(f"cannot reach the database {database.shown}{tried}: {_reason(error)}")
    )


def _reason(error: Exception) -> str:
    """``Type: message`` on one line; the type alone when there is no message."""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


async def open_work_store(pool: asyncpg.Pool, clock: Clock) -> AsyncIterator[PostgresWorkStore]:
    """Container resource: the work store on ``pool``, closed before the pool is.

    The store keeps one of the pool's connections between its statements; closing
    it first hands that connection back, so the pool's own close need not wait
    for it.
    """
    store = PostgresWorkStore(pool, clock)
    try:
        yield store
    finally:
        await store.close()


async def open_work_queue(pool: asyncpg.Pool, clock: Clock) -> AsyncIterator[PostgresWorkQueue]:
    """Container resource: the work queue on ``pool``, closed before the pool is.

    Like the store, it keeps one of the pool's connections between enqueues.
    """
    queue = PostgresWorkQueue(pool, clock)
    try:
        yield queue
    finally:
        await queue.close()


async def open_notifications(
    database: DatabaseTarget,
    *,
    listen_url: SecretStr | None = None,
    transaction_pooling: bool = False,
) -> AsyncIterator[PostgresWorkNotifications | None]:
    """Container resource: LISTEN for new work, stopped at shutdown; None when none can be.

    The listener connects to ``listen_url`` when one is given (a direct
    connection beside a pooler), else to ``database``. Through a pooler in
    transaction mode (``transaction_pooling``) without a ``listen_url`` there is
    no session to LISTEN in: there are no notifications and the worker polls.
    The listening connection opens on the first wait, not here, so a database
    that is slow to answer delays nothing but the first early wake-up.
    """
    if listen_url is None and transaction_pooling:
        logger.info(
            "no LISTEN through a transaction pooler: set %s to be woken early; polling",
            "WORKQUEUE_LISTEN_DATABASE_URL",
        )
        yield None
        return
    dsn = database.dsn if listen_url is None else listen_url.get_secret_value()
    notifications = PostgresWorkNotifications(dsn)
    try:
        yield notifications
    finally:
        await notifications.aclose()
