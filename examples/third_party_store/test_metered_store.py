from __future__ import annotations

import asyncpg
from metered_store import MeteredWorkStore

from adapters.memory import InMemoryState, InMemoryWorkStore
from adapters.postgres import PostgresWorkStore
from adapters.testing import FakeClock
from adapters.testing.contract import (
    MemoryContractFixtures,
    StoreCapabilities,
    WorkQueueContractSuite,
)
from adapters.testing.postgres import PostgresContractFixtures
from domain import WorkStore

NO_REFRESH_TOKENS = StoreCapabilities(refresh_tokens=False)  # skipped, with the reason


class TestMeteredInMemory(WorkQueueContractSuite, MemoryContractFixtures):
    store_capabilities = NO_REFRESH_TOKENS

    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return MeteredWorkStore(InMemoryWorkStore(state, clock))


class TestMeteredOnPostgres(WorkQueueContractSuite, PostgresContractFixtures):
    store_capabilities = NO_REFRESH_TOKENS

    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return MeteredWorkStore(PostgresWorkStore(pool, clock))
