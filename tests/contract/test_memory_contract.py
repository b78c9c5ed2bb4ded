"""The whole contract kit, run against the in-memory adapter with the kit's own fixtures."""

from __future__ import annotations

from adapters.testing.contract import MemoryContractFixtures, WorkQueueContractSuite


class MemoryFixtures(MemoryContractFixtures):
    """Every fake on one fresh InMemoryState and one FakeClock per test (the kit's fixtures)."""


class TestInMemoryAdapter(WorkQueueContractSuite, MemoryFixtures):
    pass
