"""The kit's enqueue contract against every producer, and the transaction contracts.

The async queue on a pool is held to the whole kit in test_postgres_contract.py.
Here the enqueue contract runs again for the async queue on the caller's
connection, each call in a transaction of the caller's, and for the sync queue,
on a psycopg pool and on the caller's psycopg connection (through the kit's
SyncProducerAsWorkQueue); the transaction contracts run for both queues on the
caller's connection. Each test gets a database of its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import asyncpg
import psycopg
import pytest
import pytest_asyncio
from producer_fixtures import (
    AsyncpgTransactionFixtures,
    InATransactionEach,
    InATransactionEachSync,
    ProducerFixtures,
    PsycopgTransactionFixtures,
    open_psycopg_pool,
)

from workqueue.adapters.postgres import PostgresWorkQueue
from workqueue.adapters.psycopg import PsycopgWorkQueue
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import (
    AlphaJob,
    CallerTransactionContract,
    DedupAcrossTransactionsContract,
    EnqueueContract,
    SyncProducerAsWorkQueue,
    TimingContract,
)
from workqueue.domain import (
    EnqueueRequest,
    EnqueueResult,
    InsideTransactionError,
    StoreUnavailableError,
    WorkQueue,
    WorkSchedule,
)


class TestAsyncQueueOnTheCallersConnection(EnqueueContract, TimingContract, ProducerFixtures):
    @pytest_asyncio.fixture
    async def queue(self, database_url: str, clock: FakeClock) -> AsyncIterator[WorkQueue]:
        connection = await asyncpg.connect(database_url)
        try:
            yield InATransactionEach(PostgresWorkQueue(connection, clock), connection.transaction)
        finally:
            await connection.close()


class TestSyncQueueOnAPool(EnqueueContract, TimingContract, ProducerFixtures):
    @pytest.fixture
    def queue(self, database_url: str, clock: FakeClock) -> Iterator[WorkQueue]:
        with open_psycopg_pool(database_url) as pool:
            yield SyncProducerAsWorkQueue(PsycopgWorkQueue(pool, clock))


class TestSyncQueueOnTheCallersConnection(EnqueueContract, TimingContract, ProducerFixtures):
    @pytest.fixture
    def queue(self, database_url: str, clock: FakeClock) -> Iterator[WorkQueue]:
        with psycopg.connect(database_url) as connection:
            yield SyncProducerAsWorkQueue(InATransactionEachSync(connection, clock))


class TestAsyncQueueInTheCallersTransactions(
    CallerTransactionContract, DedupAcrossTransactionsContract, AsyncpgTransactionFixtures
):
    pass


class TestSyncQueueInTheCallersTransactions(
    CallerTransactionContract, DedupAcrossTransactionsContract, PsycopgTransactionFixtures
):
    pass


SCHEDULE = WorkSchedule(AlphaJob(number=1), interval=timedelta(hours=1))


class TestPeriodicEnqueuesOnTheCallersConnection:
    async def test_inside_the_callers_transaction_they_are_refused_sending_nothing(
        self, database_url: str
    ) -> None:
        connection = await asyncpg.connect(database_url)
        try:
            async with connection.transaction():
                with pytest.raises(InsideTransactionError, match="over a pool"):
                    await PostgresWorkQueue(connection, FakeClock()).enqueue_if_due(SCHEDULE)
                assert await connection.fetchval("SELECT 1") == 1
            assert await connection.fetchval("SELECT count(*) FROM work_items") == 0
        finally:
            await connection.close()

    async def test_outside_a_transaction_they_run_in_one_of_their_own(
        self, database_url: str
    ) -> None:
        connection = await asyncpg.connect(database_url)
        queue = PostgresWorkQueue(connection, FakeClock())
        try:
            created = await queue.enqueue_if_due(SCHEDULE)
            again = await queue.enqueue_if_due(SCHEDULE)

            assert created is not None
            assert created.created
            assert again is None
            assert not connection.is_in_transaction()
        finally:
            await connection.close()


class TestWhatAQueueIsGiven:
    def test_the_async_queue_refuses_anything_but_an_asyncpg_pool_or_connection(self) -> None:
        with pytest.raises(TypeError, match="needs an asyncpg Pool or Connection, not str"):
            PostgresWorkQueue("postgresql://db/app", FakeClock())  # type: ignore[arg-type]

    def test_the_sync_queue_refuses_anything_but_a_psycopg_connection_or_pool(self) -> None:
        with pytest.raises(TypeError, match="needs a psycopg Connection or ConnectionPool, not"):
            PsycopgWorkQueue(object(), FakeClock())  # type: ignore[arg-type]


class TestTheSyncQueueOnAPool:
    def test_each_enqueue_commits_and_the_pools_connection_comes_back_as_it_was(
        self, database_url: str
    ) -> None:
        with open_psycopg_pool(database_url) as pool:
            queue = PsycopgWorkQueue(pool, FakeClock())

            result = queue.enqueue(AlphaJob(number=1), dedup_key="k")
            batch = queue.enqueue_many(
                [EnqueueRequest(AlphaJob(), "k"), EnqueueRequest(AlphaJob())]
            )

            with psycopg.connect(database_url) as observer:
                assert observer.execute("SELECT count(*) FROM work_items").fetchone() == (2,)
            with pool.connection() as connection:
                assert connection.autocommit is False
                assert connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert batch[0] == EnqueueResult(id=result.id, created=False)

    def test_on_a_pool_of_autocommit_connections_they_stay_so(self, database_url: str) -> None:
        with open_psycopg_pool(database_url, kwargs={"autocommit": True}) as pool:
            PsycopgWorkQueue(pool, FakeClock()).enqueue(AlphaJob())

            with pool.connection() as connection:
                assert connection.autocommit is True

    def test_an_empty_batch_takes_no_connection(self, database_url: str) -> None:
        pool: Any = open_psycopg_pool(database_url)
        pool.close()

        # A closed pool would refuse any request for a connection.
        assert PsycopgWorkQueue(pool, FakeClock()).enqueue_many([]) == []


class TestTheSyncQueueOnALostConnection:
    @pytest.mark.parametrize("dedup_key", [None, "k"], ids=["without a key", "with a key"])
    def test_an_enqueue_raises_store_unavailable_and_writes_nothing(
        self, database_url: str, dedup_key: str | None
    ) -> None:
        with psycopg.connect(database_url, autocommit=True) as observer:
            with psycopg.connect(database_url) as connection:
                queue = PsycopgWorkQueue(connection, FakeClock())
                queue.enqueue(AlphaJob(number=1), dedup_key=dedup_key)
                observer.execute("SELECT pg_terminate_backend(%s)", (connection.info.backend_pid,))

                with pytest.raises(StoreUnavailableError):
                    queue.enqueue(AlphaJob(number=2), dedup_key=dedup_key)

            assert observer.execute("SELECT count(*) FROM work_items").fetchone() == (0,)
