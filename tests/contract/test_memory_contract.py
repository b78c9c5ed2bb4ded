"""The whole contract kit, run against the in-memory adapter with the kit's own fixtures."""

from __future__ import annotations

from adapters.testing.contract import MemoryContractFixtures, WorkQueueContractSuite


class TestInMemoryAdapter(WorkQueueContractSuite, MemoryContractFixtures):
    pass
