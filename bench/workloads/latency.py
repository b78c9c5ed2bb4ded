"""W4: from enqueue to handler start, for an idle worker woken by LISTEN/NOTIFY.

One worker process idles with the production poll interval (5 s), so only a
notification can wake it in time. The coordinator enqueues one item, waits until
its handler has started, waits ``latency_gap`` more so the worker is idle again
(it completes the item and finds nothing to claim), and repeats. The latency is
the handler's start minus the moment just before ``enqueue`` was called, both read
from CLOCK_MONOTONIC, which every process on the machine shares. The first
``latency_warmup`` enqueues warm the connections and are not counted.
"""

from __future__ import annotations

import asyncio
import time
from multiprocessing.connection import Connection

from bench.figures import Figure, Target, WorkloadReport
from bench.kinds import NoopJob, monotonic_ns
from bench.measure import percentile
from bench.server import BenchServer, checkpoint_and_vacuum
from bench.settings import BenchSettings
from bench.workloads.worker_process import WorkerProcess, WorkerProcessSpec, spawn_context
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkQueue, close_pool, create_pool

__all__ = ["latency"]

_START_TIMEOUT = 30.0
_SETTLE = 0.5


async def latency(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """W4: p50, p95 and max of enqueue → handler start, in ms."""
    report = WorkloadReport(
        "W4",
        [
            Figure("w4_p50", "W4 enqueue → handler start, p50", "ms", target=Target(2.5, False)),
            Figure("w4_p95", "W4 enqueue → handler start, p95", "ms", target=Target(5.0, False)),
            Figure("w4_max", "W4 enqueue → handler start, max", "ms"),
        ],
    )
    for run in range(1, settings.runs + 1):
        latencies = await _latency_once(server, settings, run)
        p50, p95, worst = percentile(latencies, 0.5), percentile(latencies, 0.95), max(latencies)
        report.figure("w4_p50").values.append(p50)
        report.figure("w4_p95").values.append(p95)
        report.figure("w4_max").values.append(worst)
        report.runs.append(
            {"run": run, "enqueues": len(latencies), "p50": p50, "p95": p95, "max": worst}
        )
    return report


async def _latency_once(server: BenchServer, settings: BenchSettings, run: int) -> list[float]:
    async with server.fresh_database(f"bench_w4_run{run}") as dsn:
        worker = WorkerProcess(
            spawn_context(),
            WorkerProcessSpec(
                dsn=dsn,
                worker_id="bench-w4",
                log_level=settings.log_level,
                event_loop=settings.event_loop,
                log_path=str(settings.log_path),
                report_starts=True,
            ),
        )
        worker.start()
        try:
            await worker.ready()
            await checkpoint_and_vacuum(dsn)
            worker.go()
            # Let its first cycle find nothing and the loop settle into its idle wait.
            await asyncio.sleep(_SETTLE)
            pool = await create_pool(dsn, min_size=1, max_size=4)
            try:
                queue = PostgresWorkQueue(pool, SystemClock())
                total = settings.latency_warmup + settings.latency_enqueues
                latencies = []
                for seq in range(total):
                    payload = NoopJob(seq=seq)
                    enqueued_ns = monotonic_ns()
                    await queue.enqueue(payload)
                    started_ns = await _handler_start(worker.starts, seq)
                    if seq >= settings.latency_warmup:
                        latencies.append((started_ns - enqueued_ns) / 1e6)
                    await asyncio.sleep(settings.latency_gap)
            finally:
                await close_pool(pool)
        finally:
            await worker.stop()
    return latencies


async def _handler_start(starts: Connection, seq: int) -> int:
    """The start time the worker reports for item ``seq``.

    :raises TimeoutError: if none comes within half a minute (the poll interval
        is 5 s, so even a lost notification is answered long before).
    """
    deadline = time.monotonic() + _START_TIMEOUT
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not await asyncio.to_thread(starts.poll, remaining):
            raise TimeoutError(f"no handler started for item {seq} within {_START_TIMEOUT} s")
        reported_seq, started_ns = starts.recv()
        if reported_seq == seq:
            return int(started_ns)
