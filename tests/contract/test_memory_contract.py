"""The whole contract kit, run against the in-memory adapter with the kit's own fixtures."""

from __future__ import annotations

import pytest

from workqueue.adapters.memory import InMemoryActivityLog, InMemoryState, InMemoryWorkMonitor
from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract import MemoryContractFixtures, WorkQueueContractSuite
from workqueue.adapters.testing.contract.activity import ActivityContract, ActivityFixtures
from workqueue.adapters.testing.contract.bulk import BulkScopeContract
from workqueue.adapters.testing.contract.lookup import LookupContract
from workqueue.adapters.testing.contract.monitoring import MonitoringContract, MonitoringFixtures
from workqueue.domain import ActivityLog, WorkMonitor


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


class TestInMemoryLookup(LookupContract, MemoryMonitorFixtures):
    pass


class TestInMemoryBulkScope(BulkScopeContract, MemoryMonitorFixtures):
    pass


class MemoryActivityFixtures(MemoryFixtures, ActivityFixtures):
    @pytest.fixture
    def activity_log(self, state: InMemoryState, clock: FakeClock) -> ActivityLog:
        return InMemoryActivityLog(state, clock)


class TestInMemoryActivity(ActivityContract, MemoryActivityFixtures):
    pass
