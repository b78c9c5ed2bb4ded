"""The store a worker counts through keeps every semantic of the store it wraps.

With ``WORKQUEUE_METRICS_PORT`` set, the executor and lease recovery use a
:class:`~workqueue.adapters.prometheus.CountingWorkStore` around the work store: the whole
contract kit runs against one around the in-memory store.
"""

from __future__ import annotations

from workqueue.adapters.memory import InMemoryState, InMemoryWorkStore
from workqueue.adapters.prometheus import CountingWorkStore, WorkerMetrics
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import MemoryContractFixtures, WorkQueueContractSuite
from workqueue.domain import WorkStore


class CountedMemoryFixtures(MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return CountingWorkStore(InMemoryWorkStore(state, clock), WorkerMetrics())


class TestACountedStore(WorkQueueContractSuite, CountedMemoryFixtures):
    pass
