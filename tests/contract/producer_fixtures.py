"""The producers under test, on a real PostgreSQL: their queues, transactions and observers.

The contract kit declares what a producer's tests need (``queue``, or
``caller_transactions``, ``notifications`` and ``lock_waits``); this module builds
them for both producers: ``PostgresWorkQueue`` on the caller's asyncpg connection
and ``PsycopgWorkQueue`` on a psycopg connection or pool (through the kit's
``SyncProducerAsWorkQueue``). The store, back door and listener that watch them
are the PostgreSQL adapter's, on connections of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, TypeVar

import asyncpg
import psycopg
import pytest
import pytest_asyncio
from postgres_backdoor import PostgresBackdoor
from psycopg_pool import ConnectionPool

from workqueue.adapters.postgres import (
    PostgresWorkNotifications,
    PostgresWorkQueue,
    PostgresWorkStore,
)
from workqueue.adapters.psycopg import PsycopgWorkQueue
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import (
    CallerTransactionFactory,
    CallerTransactionFixtures,
    ContractFixtures,
    Isolation,
    LockWaits,
    SyncProducerAsWorkQueue,
)
from workqueue.adapters.testing.contract.sync_producer import in_a_thread
from workqueue.adapters.testing.contract.transactions import PATIENCE
from workqueue.domain import (
    EnqueueRequest,
    EnqueueResult,
    WorkNotifications,
    WorkPayload,
    WorkQueue,
    WorkSchedule,
)

__all__ = [
    "AsyncpgTransactionFixtures",
    "InATransactionEach",
    "InATransactionEachSync",
    "ProducerFixtures",
    "PsycopgTransactionFixtures",
    "open_psycopg_pool",
]

T = TypeVar("T")

_SAVEPOINT = "caller_savepoint"
_LOCK_WAITERS = (
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
)


def open_psycopg_pool(database_url: str, **kwargs: Any) -> ConnectionPool[Any]:
    """A small psycopg pool on ``database_url``, open and ready."""
    pool: ConnectionPool[Any] = ConnectionPool(
        database_url, min_size=1, max_size=2, open=True, **kwargs
    )
    pool.wait()
    return pool


class ProducerFixtures(ContractFixtures):
    """What watches a producer: one FakeClock, and the adapter's store and back door."""

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def store(self, migrated_pool: asyncpg.Pool, clock: FakeClock) -> PostgresWorkStore:
        return PostgresWorkStore(migrated_pool, clock)

    @pytest.fixture
    def backdoor(self, migrated_pool: asyncpg.Pool, clock: FakeClock) -> PostgresBackdoor:
        return PostgresBackdoor(migrated_pool, clock)


class ObserverFixtures(CallerTransactionFixtures):
    """A listener and a lock-wait watcher on the test's database."""

    @pytest_asyncio.fixture
    async def notifications(self, database_url: str) -> AsyncIterator[WorkNotifications]:
        async with PostgresWorkNotifications(database_url) as notifications:
            await asyncio.wait_for(notifications.listening(), PATIENCE)
            yield notifications

    @pytest_asyncio.fixture
    async def lock_waits(self, database_url: str) -> AsyncIterator[LockWaits]:
        observer = await asyncpg.connect(database_url)

        async def until_waiting(count: int) -> None:
            polls = int(PATIENCE / 0.01)
            for _ in range(polls):
                if await observer.fetchval(_LOCK_WAITERS) >= count:
                    return
                await asyncio.sleep(0.01)
            raise AssertionError(
                f"{count} transactions did not wait for a lock within {PATIENCE} s"
            )

        try:
            yield until_waiting
        finally:
            await observer.close()


class AsyncpgCallerTransaction:
    """A caller's transaction on an asyncpg connection, PostgresWorkQueue inside it."""

    def __init__(self, connection: asyncpg.Connection, clock: FakeClock) -> None:
        self._connection = connection
        self.queue: WorkQueue = PostgresWorkQueue(connection, clock)

    async def commit(self) -> None:
        await self._connection.execute("COMMIT")

    async def rollback(self) -> None:
        await self._connection.execute("ROLLBACK")

    async def savepoint(self) -> None:
        await self._connection.execute(f"SAVEPOINT {_SAVEPOINT}")

    async def rollback_to_savepoint(self) -> None:
        await self._connection.execute(f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}")

    async def fail_a_statement(self) -> None:
        with contextlib.suppress(asyncpg.DivisionByZeroError):
            await self._connection.execute("SELECT 1 / 0")

    async def caller_statement_runs(self) -> bool:
        try:
            await self._connection.execute("SELECT 1")
        except asyncpg.InFailedSQLTransactionError:
            return False
        return True

    async def limit_lock_waits(self, seconds: float) -> None:
        await self._connection.execute(
            "SELECT set_config('lock_timeout', $1, true)", f"{round(seconds * 1000)}ms"
        )


class AsyncpgTransactionFixtures(ObserverFixtures, ProducerFixtures):
    """Caller's transactions on plain asyncpg connections (no JSON codecs: a user's own)."""

    @pytest_asyncio.fixture
    async def caller_transactions(
        self, database_url: str, clock: FakeClock
    ) -> AsyncIterator[CallerTransactionFactory]:
        connections: list[asyncpg.Connection] = []

        async def open_transaction(
            isolation: Isolation = Isolation.READ_COMMITTED,
        ) -> AsyncpgCallerTransaction:
            connection = await asyncpg.connect(database_url)
            connections.append(connection)
            await connection.execute(f"BEGIN ISOLATION LEVEL {isolation.value.upper()}")
            return AsyncpgCallerTransaction(connection, clock)

        try:
            yield open_transaction
        finally:
            # Whatever is still open rolls back with its session.
            for connection in connections:
                connection.terminate()


class PsycopgCallerTransaction:
    """A caller's transaction on a psycopg connection, PsycopgWorkQueue inside it.

    The connection is not in autocommit mode, as SQLAlchemy's and Django's inside
    ``atomic()`` are not: psycopg opens the transaction with its first statement.
    Every call runs in a thread of its own.
    """

    def __init__(self, connection: psycopg.Connection[Any], clock: FakeClock) -> None:
        self._connection = connection
        self.queue: WorkQueue = SyncProducerAsWorkQueue(PsycopgWorkQueue(connection, clock))

    async def commit(self) -> None:
        await in_a_thread(self._connection.commit)

    async def rollback(self) -> None:
        await in_a_thread(self._connection.rollback)

    async def savepoint(self) -> None:
        await self._execute(f"SAVEPOINT {_SAVEPOINT}")

    async def rollback_to_savepoint(self) -> None:
        await self._execute(f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}")

    async def fail_a_statement(self) -> None:
        with contextlib.suppress(psycopg.errors.DivisionByZero):
            await self._execute("SELECT 1 / 0")

    async def caller_statement_runs(self) -> bool:
        try:
            await self._execute("SELECT 1")
        except psycopg.errors.InFailedSqlTransaction:
            return False
        return True

    async def limit_lock_waits(self, seconds: float) -> None:
        await self._execute(
            "SELECT set_config('lock_timeout', %s, true)", (f"{round(seconds * 1000)}ms",)
        )

    async def _execute(self, sql: str, parameters: Sequence[object] = ()) -> None:
        def execute() -> None:
            self._connection.execute(sql, parameters)  # type: ignore[arg-type]

        await in_a_thread(execute)


class PsycopgTransactionFixtures(ObserverFixtures, ProducerFixtures):
    """Caller's transactions on psycopg connections, one each."""

    @pytest.fixture
    def caller_transactions(
        self, database_url: str, clock: FakeClock
    ) -> Iterator[CallerTransactionFactory]:
        connections: list[psycopg.Connection[Any]] = []

        async def open_transaction(
            isolation: Isolation = Isolation.READ_COMMITTED,
        ) -> PsycopgCallerTransaction:
            connection = await in_a_thread(psycopg.connect, database_url)
            connections.append(connection)
            connection.isolation_level = psycopg.IsolationLevel[isolation.name]
            return PsycopgCallerTransaction(connection, clock)

        try:
            yield open_transaction
        finally:
            for connection in connections:
                connection.close()


class InATransactionEach:
    """A WorkQueue whose every call runs in a transaction of the caller's, then commits.

    How a web request enqueues: its own transaction around its writes and the
    enqueue. ``open_transaction`` opens the transaction (an async context manager)
    on the connection ``queue`` enqueues on.
    """

    def __init__(
        self,
        queue: WorkQueue,
        open_transaction: Callable[[], contextlib.AbstractAsyncContextManager[Any]],
    ) -> None:
        self._queue = queue
        self._open_transaction = open_transaction

    async def enqueue(self, payload: WorkPayload, **options: Any) -> EnqueueResult:
        async with self._open_transaction():
            return await self._queue.enqueue(payload, **options)

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        async with self._open_transaction():
            return await self._queue.enqueue_many(requests)

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        raise NotImplementedError("not part of the enqueue contract")


class InATransactionEachSync:
    """The sync producer's calls, each in a transaction of the caller's, then committed."""

    def __init__(self, connection: psycopg.Connection[Any], clock: FakeClock) -> None:
        self._connection = connection
        self._queue = PsycopgWorkQueue(connection, clock)

    def enqueue(self, payload: WorkPayload, **options: Any) -> EnqueueResult:
        with self._connection.transaction():
            return self._queue.enqueue(payload, **options)

    def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        with self._connection.transaction():
            return self._queue.enqueue_many(requests)
