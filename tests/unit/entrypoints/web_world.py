"""An in-memory queue behind the web view: fakes, a FakeClock and an HTTP client on the app.

The world's store and monitor refuse what PostgreSQL refuses and the in-memory
adapters would take (an id beyond ``bigint``, text with a NUL character), so a
route that would send such a value to the database fails here as it would there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import httpx
from worker_world import FakeSchema

from workqueue.adapters.memory import (
    InMemoryActivityLog,
    InMemoryState,
    InMemoryWorkMonitor,
    InMemoryWorkQueue,
    InMemoryWorkStore,
)
from workqueue.adapters.testing import FakeClock
from workqueue.application.registry import KindCatalog
from workqueue.domain import (
    BulkBatch,
    CancelOutcome,
    EnqueueResult,
    KindPause,
    PayloadDecoder,
    RunOutcome,
    TokenCleanup,
    WorkItem,
    WorkItemRetention,
    WorkPayload,
    WorkSchedule,
    WorkStore,
    checked_cancel_reason,
    checked_pause,
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
CATALOG = KindCatalog([payload.kind for payload in PAYLOADS.values()], PAYLOADS.values())
"""The payload models the view's requeue validates against, as the container's catalog."""

decode = CATALOG.decode

KINDS = ("token_cleanup", "work_item_retention")

HOST = "view"
"""The host the world's client names in its requests: the one the view is told to serve."""

SCHEDULES = (
    WorkSchedule(TokenCleanup(), interval=timedelta(days=1)),
    WorkSchedule(WorkItemRetention(), cron="0 3 * * *", timezone="Europe/Paris"),
)
"""The built-in kinds' schedules, the retention on a calendar."""

_BIGINT = range(-(2**63), 2**63)


class RefusedByPostgreSQLError(Exception):
    """What asyncpg raises for a value PostgreSQL cannot take."""


def as_postgresql_would(*values: object) -> None:
    """Raise as asyncpg and PostgreSQL do for an int beyond ``bigint`` or text with a NUL."""
    for value in values:
        if isinstance(value, int) and value not in _BIGINT:
            raise RefusedByPostgreSQLError(
                f"invalid input for query argument $1: {value} (value out of int64 range)"
            )
        if isinstance(value, str) and "\x00" in value:
            raise RefusedByPostgreSQLError('invalid byte sequence for encoding "UTF8": 0x00')


class PostgresLikeStore(InMemoryWorkStore):
    """The in-memory store, refusing the values PostgreSQL refuses (see the module)."""

    async def get(self, item_id: int) -> WorkItem | None:
        as_postgresql_would(item_id)
        return await super().get(item_id)

    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        as_postgresql_would(item_id, reason)
        return await super().cancel(item_id, reason=reason)

    async def resume_kind(self, kind: str) -> bool:
        as_postgresql_would(kind)
        return await super().resume_kind(kind)

    async def requeue_failed(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, decode: PayloadDecoder
    ) -> BulkBatch:
        as_postgresql_would(kind, after_id, up_to_id, limit)
        return await super().requeue_failed(
            kind, after_id=after_id, up_to_id=up_to_id, limit=limit, decode=decode
        )

    async def cancel_queued(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, reason: str
    ) -> BulkBatch:
        checked_cancel_reason(reason)
        as_postgresql_would(kind, after_id, up_to_id, limit, reason)
        return await super().cancel_queued(
            kind, after_id=after_id, up_to_id=up_to_id, limit=limit, reason=reason
        )


class PostgresLikeMonitor(InMemoryWorkMonitor):
    """The in-memory monitor, refusing the values PostgreSQL refuses (see the module)."""

    async def item(self, item_id: int) -> WorkItem | None:
        as_postgresql_would(item_id)
        return await super().item(item_id)

    async def queued(
        self, *, kind: str | None = None, after_id: int = 0, limit: int
    ) -> list[WorkItem]:
        as_postgresql_would(kind, after_id, limit)
        return await super().queued(kind=kind, after_id=after_id, limit=limit)


class PermissionDeniedError(Exception):
    """asyncpg's InsufficientPrivilegeError, as far as the view looks at it."""

    sqlstate = "42501"


def _denied(table: str = "work_items") -> PermissionDeniedError:
    return PermissionDeniedError(f"permission denied for table {table}")


class ReadOnlyStore(PostgresLikeStore):
    """The store of a role with only SELECT on work_items and work_kind_pauses (a view): it reads;
    a cancel, a pause and a resume are refused, and so are the bulk requeue and cancel."""

    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        # The values are checked before the statement runs, the grants when it runs.
        as_postgresql_would(item_id, reason)
        raise _denied()

    async def pause_kind(self, kind: str, *, reason: str | None = None) -> KindPause:
        checked_pause(kind, reason)
        raise _denied("work_kind_controls")

    async def resume_kind(self, kind: str) -> bool:
        as_postgresql_would(kind)
        raise _denied("work_kind_controls")

    async def requeue_failed(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, decode: PayloadDecoder
    ) -> BulkBatch:
        # Its first statement locks the batch's rows (FOR UPDATE), which needs UPDATE.
        as_postgresql_would(kind, after_id, up_to_id, limit)
        raise _denied()

    async def cancel_queued(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, reason: str
    ) -> BulkBatch:
        checked_cancel_reason(reason)
        as_postgresql_would(kind, after_id, up_to_id, limit, reason)
        raise _denied()


class ReadOnlyQueue(InMemoryWorkQueue):
    """The queue of a role with only SELECT on work_items: every enqueue is refused."""

    async def enqueue(self, payload: WorkPayload, **options: Any) -> EnqueueResult:
        raise _denied()


@dataclass
class WebWorld:
    state: InMemoryState = field(default_factory=InMemoryState)
    clock: FakeClock = field(default_factory=FakeClock)
    schema: FakeSchema = field(default_factory=FakeSchema)

    def __post_init__(self) -> None:
        self.queue = InMemoryWorkQueue(self.state, self.clock)
        self.store = PostgresLikeStore(self.state, self.clock)
        self.monitor = PostgresLikeMonitor(self.state)
        self.overview = OverviewReader(self.monitor, self.clock, kinds=KINDS)
        self.activity = InMemoryActivityLog(self.state, self.clock)

    @asynccontextmanager
    async def client(
        self,
        *,
        token: str | None = None,
        store: WorkStore | None = None,
        read_only: bool = False,
        allowed_hosts: Collection[str] = (HOST,),
    ) -> AsyncIterator[httpx.AsyncClient]:
        """A client of the view serving ``allowed_hosts``, its requests naming :data:`HOST`.

        With ``token`` the view has its actions, on ``store`` (the world's by default),
        or as a role with only SELECT when ``read_only``.
        """
        actions = None
        if token is not None:
            store, queue = store or self.store, self.queue
            if read_only:
                store = ReadOnlyStore(self.state, self.clock)
                queue = ReadOnlyQueue(self.state, self.clock)
            actions = WebActions(token, store, queue, decode)
        services = WebServices(
            monitor=self.monitor,
            overview=self.overview,
            schema=self.schema,
            clock=self.clock,
            actions=actions,
            schedules=SCHEDULES,
            activity=self.activity,
        )
        app = create_app(services, allowed_hosts=allowed_hosts)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{HOST}") as client:
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

    async def failed_with_a_stale_payload(self) -> WorkItem:
        """A failed retention whose stored payload its model no longer takes."""
        item = await self.running(worker_id="w-old", kind="work_item_retention")
        await self.store.finish(item.lease, RunOutcome.failed("boom", None))
        stored = self.state.read(item.id)
        assert stored is not None
        return self.state.write(replace(stored, payload={"retention_days": "soon"}))
