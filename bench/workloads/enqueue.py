"""W1 and W2: how fast items come into being, one at a time and in batches.

W1 awaits ``enqueue`` for each of N items in turn; W2 sends N items through
``enqueue_many`` in calls of ``batch_size``. Payloads are built before the clock
starts: what is timed is the queue's own work (validation, JSON, the round trip,
the insert and its NOTIFY).
"""

from __future__ import annotations

import time

from bench.figures import Figure, Target, WorkloadReport
from bench.kinds import NoopJob
from bench.server import BenchServer, checkpoint_and_vacuum
from bench.settings import BenchSettings
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkQueue, close_pool, create_pool
from workqueue.domain import EnqueueRequest

__all__ = ["batch_enqueue", "single_enqueue"]


async def single_enqueue(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """W1: ``single_enqueues`` sequential enqueues; jobs/s."""
    figure = Figure("w1", "W1 enqueue one at a time", "jobs/s", target=Target(2_500, True))
    report = WorkloadReport("W1", [figure])
    for run in range(1, settings.runs + 1):
        async with server.fresh_database(f"bench_w1_run{run}") as dsn:
            await checkpoint_and_vacuum(dsn)
            pool = await create_pool(dsn, min_size=1, max_size=4)
            try:
                queue = PostgresWorkQueue(pool, SystemClock())
                payloads = [NoopJob(seq=seq) for seq in range(settings.single_enqueues)]
                started = time.perf_counter()
                for payload in payloads:
                    await queue.enqueue(payload)
                elapsed = time.perf_counter() - started
            finally:
                await close_pool(pool)
        figure.values.append(settings.single_enqueues / elapsed)
        report.runs.append({"run": run, "items": settings.single_enqueues, "seconds": elapsed})
    return report


async def batch_enqueue(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """W2: ``batch_enqueues`` items through ``enqueue_many`` in calls of ``batch_size``; jobs/s."""
    figure = Figure("w2", "W2 batch enqueue", "jobs/s", target=Target(60_000, True))
    report = WorkloadReport("W2", [figure])
    size = settings.batch_size
    for run in range(1, settings.runs + 1):
        async with server.fresh_database(f"bench_w2_run{run}") as dsn:
            await checkpoint_and_vacuum(dsn)
            pool = await create_pool(dsn, min_size=1, max_size=4)
            try:
                queue = PostgresWorkQueue(pool, SystemClock())
                requests = [
                    EnqueueRequest(NoopJob(seq=seq)) for seq in range(settings.batch_enqueues)
                ]
                batches = [
                    requests[start : start + size] for start in range(0, len(requests), size)
                ]
                started = time.perf_counter()
                for batch in batches:
                    await queue.enqueue_many(batch)
                elapsed = time.perf_counter() - started
            finally:
                await close_pool(pool)
        figure.values.append(settings.batch_enqueues / elapsed)
        report.runs.append(
            {"run": run, "items": settings.batch_enqueues, "batch": size, "seconds": elapsed}
        )
    return report
