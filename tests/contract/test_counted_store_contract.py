"""The store a worker counts through keeps every semantic of the store it wraps.

With ``WORKQUEUE_METRICS_PORT`` set, the executor and lease recovery use a
:class:`~adapters.prometheus.CountingWorkStore` around the work store: the whole
contract kit runs against one around the in-memory store.
"""

from __future__ import annotations

from adapters.memory import InMemoryState, InMemoryWorkStore
from adapters.prometheus import CountingWorkStore, WorkerMetrics
from adapters.testing import FakeClock
from adapters.testing.contract import MemoryContractFixtures, WorkQueueContractSuite
from domain import WorkStore


class CountedMemoryFixtures(MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return CountingWorkStore(InMemoryWorkStore(state, clock), WorkerMetrics())


class TestACountedStore(WorkQueueContractSuite, CountedMemoryFixtures):
    pass
