"""The whole contract kit, run against the in-memory adapter."""

from __future__ import annotations

import pytest
from memory_backdoor import MemoryBackdoor

from adapters.memory import (
    InMemoryRefreshTokenStore,
    InMemoryState,
    InMemoryWorkMonitor,
    InMemoryWorkQueue,
    InMemoryWorkStore,
)
from adapters.testing import FakeClock
from adapters.testing.contract import (
    Backdoor,
    ContractFixtures,
    QueueFactory,
    StoreFactory,
    WorkQueueContractSuite,
)
from adapters.testing.contract.monitoring import MonitoringContract, MonitoringFixtures
from domain import RefreshTokenStore, WorkMonitor, WorkQueue, WorkStore


class MemoryFixtures(ContractFixtures):
    """Every fake on one fresh InMemoryState and one FakeClock per test."""

    @pytest.fixture
    def state(self) -> InMemoryState:
        return InMemoryState()

    @pytest.fixture
    def clock(self) -> FakeClock:
        return FakeClock()

    @pytest.fixture
    def queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return InMemoryWorkQueue(state, clock)

    @pytest.fixture
    def store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return InMemoryWorkStore(state, clock)

    @pytest.fixture
    def token_store(self, state: InMemoryState) -> RefreshTokenStore:
        return InMemoryRefreshTokenStore(state)

    @pytest.fixture
    def store_factory(self, state: InMemoryState, clock: FakeClock) -> StoreFactory:
        async def another_store() -> WorkStore:
            return InMemoryWorkStore(state, clock)

        return another_store

    @pytest.fixture
    def queue_factory(self, state: InMemoryState, clock: FakeClock) -> QueueFactory:
        async def another_queue() -> WorkQueue:
            return InMemoryWorkQueue(state, clock)

        return another_queue

    @pytest.fixture
    def backdoor(self, state: InMemoryState, clock: FakeClock) -> Backdoor:
        return MemoryBackdoor(state, clock)


class TestInMemoryAdapter(WorkQueueContractSuite, MemoryFixtures):
    pass


class MemoryMonitorFixtures(MemoryFixtures, MonitoringFixtures):
    @pytest.fixture
    def monitor(self, state: InMemoryState) -> WorkMonitor:
        return InMemoryWorkMonitor(state)


class TestInMemoryMonitor(MonitoringContract, MemoryMonitorFixtures):
    pass
