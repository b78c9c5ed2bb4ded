"""W3: C workers drain N pre-enqueued items, beside the pgbench ceiling at the same C.

For each run and each C, the ceiling runs first, then the drain, so each drain
figure is divided by a ceiling measured moments before it (figures drift; a ratio
within one run does not drift as much).

The drain's table is shaped like the ceiling's: ``finished_rows`` finished items,
then N items enqueued through ``enqueue_many``. The C worker processes are built
and listening before the clock starts; the clock runs from the go until the last
item finished (the largest ``finished_at``, stamped by the workers' SystemClock,
which reads the same wall clock as the coordinator).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import asyncpg

from bench.figures import Figure, Target, WorkloadReport
from bench.kinds import NoopJob
from bench.server import BenchServer, checkpoint_and_vacuum
from bench.settings import BenchSettings
from bench.statements import BENCH_SQL
from bench.workloads.ceiling import pgbench_tps, seed_finished
from bench.workloads.worker_process import WorkerProcess, WorkerProcessSpec, spawn_context
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkQueue, close_pool, create_pool
from workqueue.domain import EnqueueRequest

__all__ = ["drain"]

_POLL = 0.02
_DRAIN_TIMEOUT = 300.0
_SHARE_OF_CEILING = 85.0


async def drain(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """W3 at every concurrency in ``settings.concurrencies``, with its ceiling."""
    figures: list[Figure] = []
    for clients in settings.concurrencies:
        figures += [
            Figure(f"ceiling_c{clients}", f"ceiling: pgbench -c {clients}", "items/s"),
            Figure(f"w3_c{clients}", f"W3 drain C={clients}", "jobs/s"),
            Figure(
                f"w3_c{clients}_share",
                f"W3 drain C={clients}, share of ceiling",
                "%",
                target=Target(_SHARE_OF_CEILING, True),
            ),
        ]
    report = WorkloadReport("W3", figures)
    for run in range(1, settings.runs + 1):
        for clients in settings.concurrencies:
            ceiling = await pgbench_tps(
                server,
                clients=clients,
                seconds=settings.pgbench_seconds,
                finished_rows=settings.finished_rows,
                database=f"bench_ceiling_c{clients}_run{run}",
            )
            details = await _drain_once(server, settings, clients, run)
            rate = details["jobs_per_s"]
            report.figure(f"ceiling_c{clients}").values.append(ceiling)
            report.figure(f"w3_c{clients}").values.append(rate)
            report.figure(f"w3_c{clients}_share").values.append(100.0 * rate / ceiling)
            report.runs.append({"run": run, "clients": clients, "ceiling": ceiling, **details})
    return report


async def _drain_once(
    server: BenchServer, settings: BenchSettings, clients: int, run: int
) -> dict[str, Any]:
    async with server.fresh_database(f"bench_w3_c{clients}_run{run}") as dsn:
        await seed_finished(dsn, settings.finished_rows)
        await _enqueue(dsn, settings.drain_items, settings.batch_size)
        context = spawn_context()
        workers = [
            WorkerProcess(
                context,
                WorkerProcessSpec(
                    dsn=dsn,
                    worker_id=f"bench-w3-c{clients}-{index}",
                    log_level=settings.log_level,
                    event_loop=settings.event_loop,
                    log_path=str(settings.log_path),
                ),
            )
            for index in range(clients)
        ]
        for worker in workers:
            worker.start()
        try:
            await asyncio.gather(*(worker.ready() for worker in workers))
            await checkpoint_and_vacuum(dsn)
            connection = await asyncpg.connect(dsn)
            try:
                started = time.time()
                for worker in workers:
                    worker.go()
                await _until_drained(connection)
                last = await connection.fetchval(BENCH_SQL["last_finished_at"])
                finished = await connection.fetchval(BENCH_SQL["finished_count"])
            finally:
                await connection.close()
        finally:
            await asyncio.gather(*(worker.stop() for worker in workers))
    seconds = last.timestamp() - started
    drained = finished - settings.finished_rows
    return {"items": drained, "seconds": seconds, "jobs_per_s": drained / seconds}


async def _enqueue(dsn: str, items: int, batch_size: int) -> None:
    pool = await create_pool(dsn, min_size=1, max_size=1)
    try:
        queue = PostgresWorkQueue(pool, SystemClock())
        for start in range(0, items, batch_size):
            count = min(batch_size, items - start)
            await queue.enqueue_many([EnqueueRequest(NoopJob(seq=start + n)) for n in range(count)])
    finally:
        await close_pool(pool)


async def _until_drained(connection: asyncpg.Connection) -> None:
    deadline = time.monotonic() + _DRAIN_TIMEOUT
    while await connection.fetchval(BENCH_SQL["unfinished"]):
        if time.monotonic() > deadline:
            raise TimeoutError(f"items were still queued or running after {_DRAIN_TIMEOUT} s")
        await asyncio.sleep(_POLL)
