"""The lookup by dedup key of the contract kit, run against the in-memory monitor."""

from __future__ import annotations

import pytest

from workqueue.adapters.memory import InMemoryState, InMemoryWorkMonitor
from workqueue.adapters.testing.contract import MemoryContractFixtures
from workqueue.adapters.testing.contract.lookup import LookupContract
from workqueue.adapters.testing.contract.monitoring import MonitoringFixtures
from workqueue.domain import WorkMonitor


class MemoryMonitorFixtures(MemoryContractFixtures, MonitoringFixtures):
    """The kit's in-memory fixtures, and the monitor on their state."""

    @pytest.fixture
    def monitor(self, state: InMemoryState) -> WorkMonitor:
        return InMemoryWorkMonitor(state)


class TestInMemoryLookup(LookupContract, MemoryMonitorFixtures):
    pass
