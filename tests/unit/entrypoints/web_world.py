"""An in-memory queue behind the web view: fakes, a FakeClock and an HTTP client on the app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta

import httpx
from worker_world import FakeSchema

from adapters.memory import InMemoryState, InMemoryWorkMonitor, InMemoryWorkQueue, InMemoryWorkStore
from adapters.testing import FakeClock
from domain import TokenCleanup, WorkItem, WorkItemRetention
from entrypoints.web.app import create_app
from entrypoints.web.overview import OverviewReader
from entrypoints.web.reads import WebServices

LEASE = timedelta(seconds=60)
# The kinds the overview is given: its input, not the production list.
KINDS = ("token_cleanup", "work_item_retention")


@dataclass
class WebWorld:
    state: InMemoryState = field(default_factory=InMemoryState)
    clock: FakeClock = field(default_factory=FakeClock)
    schema: FakeSchema = field(default_factory=FakeSchema)

    def __post_init__(self) -> None:
        self.queue = InMemoryWorkQueue(self.state, self.clock)
        self.store = InMemoryWorkStore(self.state, self.clock)
        self.monitor = InMemoryWorkMonitor(self.state)
        self.overview = OverviewReader(self.monitor, self.clock, kinds=KINDS)

    @asynccontextmanager
    async def client(self) -> AsyncIterator[httpx.AsyncClient]:
        services = WebServices(
            monitor=self.monitor, overview=self.overview, schema=self.schema, clock=self.clock
        )
        transport = httpx.ASGITransport(app=create_app(services))
        async with httpx.AsyncClient(transport=transport, base_url="http://view") as client:
            yield client
        await self.overview.close()

    async def running(self, *, worker_id: str = "w-1", kind: str = "token_cleanup") -> WorkItem:
        await self.queue.enqueue(TokenCleanup() if kind == "token_cleanup" else WorkItemRetention())
        claimed = await self.store.claim([kind], worker_id=worker_id, lease_duration=LEASE)
        assert claimed is not None
        return claimed

    async def failed(self, error: str) -> WorkItem:
        item = await self.running(worker_id="w-old")
        await self.store.fail(item.lease, error=error, progress={"step": 1})
        return item
