"""Heartbeats as HOT updates: how many heartbeat updates PostgreSQL did in place.

Busy items run ``busy_seconds`` each under ``busy_workers`` executors (one pool
each, in this process: they mostly sleep) that heartbeat every
``busy_heartbeat_interval`` seconds, writing a fresh progress snapshot each time.
Each busy item sits among ``busy_neighbours`` queued items of a kind nobody
claims, on top of ``finished_rows`` of history, so the pages around it are as
full as the table's fillfactor lets inserts make them.

What is counted: the phase's change in ``pg_stat_user_tables.n_tup_upd`` (every
update of ``work_items``) and ``n_tup_hot_upd`` (those done as HOT updates), read
after the executors' connections closed (a backend flushes its statistics when
it exits). A claim and a completion change ``status``, which the partial indexes'
predicates read, so they are never HOT; the updates left after subtracting one
claim and one completion per item are the heartbeats. The store's own count of
heartbeats that held their lease agrees, but for the few in flight when their
item finished: the keeper is cancelled while the UPDATE has already run. The HOT
ratio is the HOT updates over those heartbeat updates.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

import asyncpg
from pydantic import JsonValue

from bench.assembly import bench_registry
from bench.figures import Figure, Target, WorkloadReport
from bench.kinds import BusyJob, ParkedJob
from bench.server import BenchServer, checkpoint_and_vacuum
from bench.settings import BenchSettings
from bench.statements import BENCH_SQL
from bench.workloads.ceiling import seed_finished
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import (
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from workqueue.application import ExecutorSettings, WorkExecutor
from workqueue.domain import EnqueueRequest, HeartbeatAnswer, Lease, ProgressSnapshot

__all__ = ["heartbeats"]

_HOT_TARGET = 90.0
_STATS_TIMEOUT = 15.0


class _HeartbeatCountingStore(PostgresWorkStore):
    """The PostgreSQL store, counting the heartbeats that found their lease held."""

    beats = 0

    async def heartbeat(
        self, lease: Lease, *, progress: JsonValue | ProgressSnapshot, lease_duration: timedelta
    ) -> HeartbeatAnswer:
        answer = await super().heartbeat(lease, progress=progress, lease_duration=lease_duration)
        if answer is not HeartbeatAnswer.LOST:
            self.beats += 1
        return answer


async def heartbeats(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """The HOT ratio of heartbeat updates, in %."""
    report = WorkloadReport(
        "HOT",
        [
            Figure(
                "hot_ratio",
                "heartbeats done as HOT updates",
                "%",
                target=Target(_HOT_TARGET, True),
            ),
            Figure("hot_heartbeats", "heartbeats per run", "updates"),
        ],
    )
    for run in range(1, settings.runs + 1):
        details = await _heartbeats_once(server, settings, run)
        report.figure("hot_ratio").values.append(details["hot_ratio"])
        report.figure("hot_heartbeats").values.append(details["heartbeats"])
        report.runs.append({"run": run, **details})
    return report


async def _heartbeats_once(
    server: BenchServer, settings: BenchSettings, run: int
) -> dict[str, Any]:
    async with server.fresh_database(f"bench_hot_run{run}") as dsn:
        await seed_finished(dsn, settings.finished_rows)
        await _enqueue_busy_among_neighbours(dsn, settings)
        await checkpoint_and_vacuum(dsn)
        before = await _updates(dsn, at_least=0)
        clock = SystemClock()
        executor_settings = ExecutorSettings(
            heartbeat_interval=timedelta(seconds=settings.busy_heartbeat_interval),
            lease_duration=timedelta(seconds=60),
        )
        pools = [
            await create_pool(dsn, min_size=1, max_size=1) for _ in range(settings.busy_workers)
        ]
        stores = [_HeartbeatCountingStore(pool, clock) for pool in pools]
        try:
            executors = [
                WorkExecutor(
                    store,
                    bench_registry(clock=clock),
                    clock,
                    worker_id=f"bench-hot-{index}",
                    settings=executor_settings,
                )
                for index, store in enumerate(stores)
            ]
            started = time.perf_counter()
            counts = await asyncio.gather(*(_run_until_empty(executor) for executor in executors))
            seconds = time.perf_counter() - started
        finally:
            for pool in pools:
                await close_pool(pool)
        items = sum(counts)
        beats = sum(store.beats for store in stores)
        # One claim and one completion per item, never HOT; the rest are heartbeats.
        expected = before[0] + 2 * items + beats
        after = await _updates(dsn, at_least=expected)
    updates, hot = after[0] - before[0], after[1] - before[1]
    heartbeat_updates = updates - 2 * items
    return {
        "items": items,
        "seconds": seconds,
        "heartbeats": beats,
        "updates": updates,
        "hot_updates": hot,
        "heartbeat_updates": heartbeat_updates,
        "hot_ratio": 100.0 * hot / heartbeat_updates if heartbeat_updates else 0.0,
    }


async def _enqueue_busy_among_neighbours(dsn: str, settings: BenchSettings) -> None:
    requests: list[EnqueueRequest] = []
    for _ in range(settings.busy_items):
        requests += [EnqueueRequest(ParkedJob()) for _ in range(settings.busy_neighbours)]
        requests.append(EnqueueRequest(BusyJob(seconds=settings.busy_seconds)))
    pool = await create_pool(dsn, min_size=1, max_size=1)
    try:
        await PostgresWorkQueue(pool, SystemClock()).enqueue_many(requests)
    finally:
        await close_pool(pool)


async def _run_until_empty(executor: WorkExecutor) -> int:
    ran = 0
    while await executor.run_next() is not None:
        ran += 1
    return ran


async def _updates(dsn: str, *, at_least: int) -> tuple[int, int]:
    """``(n_tup_upd, n_tup_hot_upd)`` of work_items, once n_tup_upd reaches ``at_least``.

    Backends report their statistics when they exit or go idle, a moment after
    the fact; this waits for them.

    :raises TimeoutError: if the counters do not get there within 15 s.
    """
    deadline = time.monotonic() + _STATS_TIMEOUT
    connection = await asyncpg.connect(dsn)
    try:
        while True:
            await connection.execute(BENCH_SQL["clear_statistics_snapshot"])
            row = await connection.fetchrow(BENCH_SQL["table_updates"])
            updates, hot = (row["n_tup_upd"], row["n_tup_hot_upd"]) if row else (0, 0)
            if updates >= at_least:
                return updates, hot
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"n_tup_upd of work_items stayed at {updates}, expected {at_least}"
                )
            await asyncio.sleep(0.1)
    finally:
        await connection.close()
