"""On PostgreSQL, the lanes of one process renew all their leases in one statement per
interval: the items share each heartbeat's timestamp, and the statements are counted."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from enum import StrEnum

import asyncpg

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkQueue, PostgresWorkStore
from workqueue.adapters.prometheus import WorkerMetrics
from workqueue.application.execution import ExecutorSettings
from workqueue.application.registry import KindRegistry
from workqueue.domain import WorkContext, WorkHandler, WorkPayload
from workqueue.entrypoints.worker.container import executors_for

LANES = 3
INTERVAL = timedelta(milliseconds=200)


class HeldKind(StrEnum):
    HELD = "held_open"


class Held(WorkPayload):
    kind = HeldKind.HELD

    number: int


class HeldHandler(WorkHandler[Held]):
    """Reports its number as progress, then waits until the test lets every item go."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.all_started = asyncio.Event()
        self.started = 0

    async def handle(self, payload: Held, ctx: WorkContext) -> None:
        ctx.report_progress({"number": payload.number})
        self.started += 1
        if self.started == LANES:
            self.all_started.set()
        await self.go.wait()


async def test_three_lanes_renew_their_three_leases_in_one_statement_each_interval(
    migrated_pool: asyncpg.Pool,
) -> None:
    clock = SystemClock()
    for number in range(LANES):
        await PostgresWorkQueue(migrated_pool, clock).enqueue(Held(number=number))
    handler = HeldHandler()
    metrics = WorkerMetrics()
    store = PostgresWorkStore(migrated_pool, clock)
    executors = executors_for(
        store,
        KindRegistry(HeldKind, [Held], [handler]),
        clock,
        kinds={HeldKind.HELD.value},
        worker_id="lanes",
        settings=ExecutorSettings(heartbeat_interval=INTERVAL, lease_duration=timedelta(seconds=5)),
        concurrency=LANES,
        metrics=metrics,
    )
    runs = [asyncio.create_task(executor.run_next()) for executor in executors]
    try:
        async with asyncio.timeout(10):
            await handler.all_started.wait()
        await asyncio.sleep(INTERVAL.total_seconds() * 5.5)
        rows = await migrated_pool.fetch(
            "SELECT heartbeat_at, started_at, progress FROM work_items ORDER BY id"
        )
        statements = metrics.registry.get_sample_value("workqueue_worker_heartbeat_seconds_count")
    finally:
        handler.go.set()
        await asyncio.gather(*runs)
        await store.close()

    assert len({row["heartbeat_at"] for row in rows}) == 1, "one statement renewed all three"
    assert all(row["heartbeat_at"] > row["started_at"] for row in rows)
    assert [row["progress"] for row in rows] == [{"number": n} for n in range(LANES)]
    assert statements is not None
    # About five intervals passed: at most one statement each, where one per lease
    # would have been fifteen.
    assert 1 <= statements <= 6
