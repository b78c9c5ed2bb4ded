"""An in-memory queue behind the web view: fakes, a FakeClock and an HTTP client on the app."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
from worker_world import FakeSchema

from workqueue.adapters.memory import (
    InMemoryState,
    InMemoryWorkMonitor,
    InMemoryWorkQueue,
    InMemoryWorkStore,
)
from workqueue.adapters.testing import FakeClock
from workqueue.domain import (
    RunOutcome,
    TokenCleanup,
    WorkItem,
    WorkItemRetention,
    WorkPayload,
    WorkSchedule,
    WorkStore,
)
from workqueue.entrypoints.web.actions import WebActions
from workqueue.entrypoints.web.app import create_app
from workqueue.entrypoints.web.overview import OverviewReader
from workqueue.entrypoints.web.reads import WebServices

LEASE = timedelta(seconds=60)
PAYLOADS: dict[str, type[WorkPayload]] = {
    "token_cleanup": TokenCleanup,
    "work_item_retention": WorkItemRetention,
}


def decode(kind: str, payload: Mapping[str, Any]) -> WorkPayload:
    return PAYLOADS[kind].model_validate(payload)


KINDS = ("token_cleanup", "work_item_retention")


SCHEDULES = (
    WorkSchedule(TokenCleanup(), interval=timedelta(days=1)),
    WorkSchedule(WorkItemRetention(), cron="0 3 * * *", timezone="Europe/Paris"),
)
"""The built-in kinds' schedules, the retention on a calendar."""


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
    async def client(
        self, *, token: str | None = None, store: WorkStore | None = None
    ) -> AsyncIterator[httpx.AsyncClient]:
        """A client of the view; with ``token``, the view has its actions (on ``store``)."""
        actions = None
        if token is not None:
            actions = WebActions(token, store or self.store, self.queue, decode)
        services = WebServices(
            monitor=self.monitor,
            overview=self.overview,
            schema=self.schema,
            clock=self.clock,
            actions=actions,
            schedules=SCHEDULES,
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
        await self.store.finish(item.lease, RunOutcome.failed(error, {"step": 1}))
        return item
