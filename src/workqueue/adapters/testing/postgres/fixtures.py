"""The kit's fixtures on a fresh migrated PostgreSQL database per test.

Needs the fixtures of :mod:`workqueue.adapters.testing.postgres.plugin` (``database_url``
and ``migrated_pool``). A store of one's own over the documented tables runs the
whole kit with::

    class TestMyStore(WorkQueueContractSuite, PostgresContractFixtures):
        def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
            return MyStore(pool, clock)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import ClassVar

import asyncpg
import pytest
import pytest_asyncio

from workqueue.adapters.postgres import (
    PostgresRefreshTokenStore,
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract import (
    Backdoor,
    ContractFixtures,
    QueueFactory,
    StoreFactory,
    StoreSubject,
)
from workqueue.adapters.testing.postgres.backdoor import PostgresBackdoor
from workqueue.domain import RefreshTokenStore, WorkQueue, WorkStore

__all__ = ["PostgresContractFixtures", "PostgresSubjects"]


async def _close(made: object) -> None:
    # Our stores and queues keep a pool connection between statements; giving it
    # back first spares the pool's close a wait for it.
    close = getattr(made, "close", None)
    if close is not None:
        await close()


class PostgresContractFixtures(ContractFixtures):
    """Every fixture of the kit on the test's own migrated database and one FakeClock.

    Override :meth:`make_store` (and :meth:`make_queue`) to put a store of your
    own under the kit. Each extra store or queue (``store_factory``,
    ``queue_factory``) gets a pool of its own of :attr:`extra_pool_size`
    connections: the race tests open about twenty, and a server allows 100.
    """

    extra_pool_size: ClassVar[int] = 2

    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        """The store under test on ``pool``; ours unless overridden."""
        return PostgresWorkStore(pool, clock)

    def make_queue(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkQueue:
        """The queue under test on ``pool``; ours unless overridden."""
        return PostgresWorkQueue(pool, clock)

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest_asyncio.fixture
    async def queue(  # type: ignore[override]  # pytest_asyncio.fixture keeps the function
        self, migrated_pool: asyncpg.Pool, clock: FakeClock
    ) -> AsyncIterator[WorkQueue]:
        queue = self.make_queue(migrated_pool, clock)
        yield queue
        await _close(queue)

    @pytest_asyncio.fixture
    async def store(  # type: ignore[override]  # pytest_asyncio.fixture keeps the function
        self, migrated_pool: asyncpg.Pool, clock: FakeClock
    ) -> AsyncIterator[WorkStore]:
        store = self.make_store(migrated_pool, clock)
        yield store
        await _close(store)

    @pytest.fixture
    def token_store(self, migrated_pool: asyncpg.Pool) -> RefreshTokenStore:
        return PostgresRefreshTokenStore(migrated_pool)

    @pytest_asyncio.fixture
    async def store_factory(  # type: ignore[override]  # pytest_asyncio.fixture keeps the function
        self, database_url: str, clock: FakeClock
    ) -> AsyncIterator[StoreFactory]:
        pools: list[asyncpg.Pool] = []
        made: list[WorkStore] = []

        async def another_store() -> WorkStore:
            pool = await create_pool(database_url, min_size=1, max_size=self.extra_pool_size)
            pools.append(pool)
            made.append(self.make_store(pool, clock))
            return made[-1]

        yield another_store
        for store in made:
            await _close(store)
        for pool in pools:
            await close_pool(pool)

    @pytest_asyncio.fixture
    async def queue_factory(  # type: ignore[override]  # pytest_asyncio.fixture keeps the function
        self, database_url: str, clock: FakeClock
    ) -> AsyncIterator[QueueFactory]:
        pools: list[asyncpg.Pool] = []
        made: list[WorkQueue] = []

        async def another_queue() -> WorkQueue:
            pool = await create_pool(database_url, min_size=1, max_size=self.extra_pool_size)
            pools.append(pool)
            made.append(self.make_queue(pool, clock))
            return made[-1]

        yield another_queue
        for queue in made:
            await _close(queue)
        for pool in pools:
            await close_pool(pool)

    @pytest.fixture
    def backdoor(self, migrated_pool: asyncpg.Pool, clock: FakeClock) -> Backdoor:
        return PostgresBackdoor(migrated_pool, clock)


class PostgresSubjects:
    """Fresh subjects on one database for
    :func:`~workqueue.adapters.testing.contract.store_state_machine`.

    The machine runs each example on an event loop of its own, outside pytest's
    fixtures; a test class hands it the test's database through :attr:`database_url`::

        subjects = PostgresSubjects()

        class TestAgainstTheModel(store_state_machine(subjects.open, subjects.close).TestCase):
            @pytest.fixture(autouse=True)
            def _database(self, database_url: str) -> Iterator[None]:
                subjects.database_url = database_url
                yield
                subjects.database_url = None

    Each example starts from empty tables and id 1.
    """

    def __init__(self) -> None:
        self.database_url: str | None = None
        self._pools: dict[int, asyncpg.Pool] = {}

    async def open(self) -> StoreSubject:
        """A fresh subject: tables truncated, ids restarted, a new FakeClock.

        :raises RuntimeError: if no test has set :attr:`database_url`.
        """
        if self.database_url is None:
            raise RuntimeError("PostgresSubjects.database_url is not set: set it from a fixture")
        pool = await create_pool(self.database_url, min_size=1, max_size=2)
        await pool.execute(
            "TRUNCATE work_items, refresh_tokens, work_schedules, work_kind_controls,"
            " work_kind_slots RESTART IDENTITY"
        )
        clock = FakeClock()
        subject = StoreSubject(
            clock=clock,
            queue=PostgresWorkQueue(pool, clock),
            store=PostgresWorkStore(pool, clock),
            read_items=PostgresBackdoor(pool, clock).all_items,
        )
        self._pools[id(subject)] = pool
        return subject

    async def close(self, subject: StoreSubject) -> None:
        """Close what :meth:`open` opened for ``subject``."""
        await _close(subject.queue)
        await _close(subject.store)
        await close_pool(self._pools.pop(id(subject)))
