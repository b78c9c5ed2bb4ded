"""The whole contract kit, run against the PostgreSQL adapter on a real server.

Each test gets a database of its own (the ``database_url`` fixture of
tests/conftest.py), so the kit's tests see empty tables and fresh ids.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import asyncpg
import pytest
import pytest_asyncio
from postgres_backdoor import PostgresBackdoor

from adapters.postgres import (
    PostgresRefreshTokenStore,
    PostgresWorkMonitor,
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from adapters.testing import FakeClock
from adapters.testing.contract import (
    ContractFixtures,
    QueueFactory,
    StoreFactory,
    StoreSubject,
    WorkQueueContractSuite,
    store_state_machine,
)
from adapters.testing.contract.monitoring import MonitoringContract, MonitoringFixtures
from domain import RefreshTokenStore, WorkMonitor, WorkQueue, WorkStore


class PostgresFixtures(ContractFixtures):
    """Every adapter on one fresh database and one FakeClock per test."""

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def queue(self, migrated_pool: asyncpg.Pool, clock: FakeClock) -> WorkQueue:
        return PostgresWorkQueue(migrated_pool, clock)

    @pytest.fixture
    def store(self, migrated_pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return PostgresWorkStore(migrated_pool, clock)

    @pytest.fixture
    def token_store(self, migrated_pool: asyncpg.Pool) -> RefreshTokenStore:
        return PostgresRefreshTokenStore(migrated_pool)

    @pytest_asyncio.fixture
    async def store_factory(
        self, database_url: str, clock: FakeClock
    ) -> AsyncIterator[StoreFactory]:
        # Each extra store has a pool of its own: the concurrent-claim test opens
        # 20 of them, so each stays small (the server allows 100 connections).
        pools: list[asyncpg.Pool] = []

        async def another_store() -> WorkStore:
            pool = await create_pool(database_url, min_size=1, max_size=2)
            pools.append(pool)
            return PostgresWorkStore(pool, clock)

        yield another_store
        for pool in pools:
            await close_pool(pool)

    @pytest_asyncio.fixture
    async def queue_factory(
        self, database_url: str, clock: FakeClock
    ) -> AsyncIterator[QueueFactory]:
        # Like store_factory: small pools of their own, one per extra queue.
        pools: list[asyncpg.Pool] = []

        async def another_queue() -> WorkQueue:
            pool = await create_pool(database_url, min_size=1, max_size=2)
            pools.append(pool)
            return PostgresWorkQueue(pool, clock)

        yield another_queue
        for pool in pools:
            await close_pool(pool)

    @pytest.fixture
    def backdoor(self, migrated_pool: asyncpg.Pool, clock: FakeClock) -> PostgresBackdoor:
        return PostgresBackdoor(migrated_pool, clock)


class TestPostgresAdapter(WorkQueueContractSuite, PostgresFixtures):
    pass


# The kit's state machine runs each Hypothesis example on an asyncio.Runner of its
# own, outside pytest's fixtures; the test's database reaches it through here.
_state_machine_database: dict[str, str] = {}
_state_machine_pools: dict[int, asyncpg.Pool] = {}


async def open_postgres_store() -> StoreSubject:
    pool = await create_pool(_state_machine_database["url"], min_size=1, max_size=2)
    # Every example starts from empty tables and id 1, like a fresh database.
    await pool.execute("TRUNCATE work_items, refresh_tokens RESTART IDENTITY")
    clock = FakeClock()
    subject = StoreSubject(
        clock=clock,
        queue=PostgresWorkQueue(pool, clock),
        store=PostgresWorkStore(pool, clock),
        read_items=PostgresBackdoor(pool, clock).all_items,
    )
    _state_machine_pools[id(subject)] = pool
    return subject


async def close_postgres_store(subject: StoreSubject) -> None:
    await close_pool(_state_machine_pools.pop(id(subject)))


class TestPostgresStoreAgainstTheModel(
    store_state_machine(open_postgres_store, close_postgres_store).TestCase  # type: ignore[name-defined,misc]
):
    @pytest.fixture(autouse=True)
    def _database(self, database_url: str) -> Iterator[None]:
        _state_machine_database["url"] = database_url
        yield
        del _state_machine_database["url"]


class PostgresMonitorFixtures(PostgresFixtures, MonitoringFixtures):
    @pytest.fixture
    def monitor(self, migrated_pool: asyncpg.Pool) -> WorkMonitor:
        return PostgresWorkMonitor(migrated_pool)


class TestPostgresMonitor(MonitoringContract, PostgresMonitorFixtures):
    pass
