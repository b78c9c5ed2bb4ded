from __future__ import annotations

import asyncpg
from metered_store import MeteredWorkStore

from workqueue.adapters.memory import InMemoryState, InMemoryWorkStore
from workqueue.adapters.postgres import PostgresWorkStore
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import (
    MemoryContractFixtures,
    StoreCapabilities,
    WorkQueueContractSuite,
)
from workqueue.adapters.testing.postgres import PostgresContractFixtures
from workqueue.domain import WorkStore

NO_REFRESH_TOKENS = StoreCapabilities(refresh_tokens=False)  # skipped, with the reason


class TestMeteredInMemory(WorkQueueContractSuite, MemoryContractFixtures):
    store_capabilities = NO_REFRESH_TOKENS

    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return MeteredWorkStore(InMemoryWorkStore(state, clock))


class TestMeteredOnPostgres(WorkQueueContractSuite, PostgresContractFixtures):
    store_capabilities = NO_REFRESH_TOKENS

    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return MeteredWorkStore(PostgresWorkStore(pool, clock))
