"""The whole contract kit, run against the in-memory adapter with the kit's own fixtures."""

from __future__ import annotations

import pytest

from adapters.memory import InMemoryState, InMemoryWorkMonitor
from adapters.testing.contract import MemoryContractFixtures, WorkQueueContractSuite
from adapters.testing.contract.monitoring import MonitoringContract, MonitoringFixtures
from domain import WorkMonitor


class MemoryFixtures(MemoryContractFixtures):
    """Every fake on one fresh InMemoryState and one FakeClock per test (the kit's fixtures)."""


class TestInMemoryAdapter(WorkQueueContractSuite, MemoryFixtures):
    pass


class MemoryMonitorFixtures(MemoryFixtures, MonitoringFixtures):
    @pytest.fixture
    def monitor(self, state: InMemoryState) -> WorkMonitor:
        return InMemoryWorkMonitor(state)


class TestInMemoryMonitor(MonitoringContract, MemoryMonitorFixtures):
    pass
