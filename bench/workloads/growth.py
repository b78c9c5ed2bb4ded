"""W5 and the retention purge: the claim path next to a small and a large history.

Each run seeds two fresh databases with finished rows (``growth_rows``: 10,000
and 1,000,000, written by ``INSERT ... SELECT generate_series``, finished 60 days
ago), enqueues ``growth_cycles`` items in each, and times that many claim +
complete cycles through the store, one after the other on one connection per
database. The two databases take turns, 50 cycles each, so that whatever else
the machine does (a checkpoint, a neighbour's fsyncs) falls on both alike. W5 is
the large table's mean cycle time over the small one's.

Then, on the large database, the retention path purges the seeded rows (older
than the 30-day retention) exactly as a worker does: a ``WorkItemRetention`` item
enqueued and run by a :class:`~workqueue.application.WorkExecutor` with the production
registry and handlers. Meanwhile a second connection enqueues, claims and
completes bench items one after the other, timing every claim: the longest one
is how long a purge can hold claims up.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

from bench.assembly import bench_registry
from bench.figures import Figure, Target, WorkloadReport
from bench.kinds import NoopJob
from bench.measure import percentile
from bench.server import BenchServer, checkpoint_and_vacuum
from bench.settings import BenchSettings
from bench.workloads.ceiling import seed_finished
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import (
    PostgresRefreshTokenStore,
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from workqueue.application import ExecutionStatus, KindRegistry, WorkExecutor
from workqueue.domain import EnqueueRequest, RunOutcome, TokenCleanup, WorkItemRetention, WorkKind
from workqueue.entrypoints.worker.handlers import TokenCleanupHandler, WorkItemRetentionHandler

__all__ = ["growth", "mean_cycles"]

_LEASE = timedelta(seconds=60)
_RETENTION = timedelta(days=30)
_RETENTION_BATCH = 1_000
_GROWTH_LIMIT = 1.5
# Cycles one database runs before the other takes its turn.
_TURN = 50


async def growth(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """W5 (cycle times and their ratio) and the longest claim during a purge."""
    small, large = settings.growth_rows
    report = WorkloadReport(
        "W5",
        [
            Figure("w5_small", f"W5 claim + complete, {small:,} finished rows", "µs"),
            Figure("w5_large", f"W5 claim + complete, {large:,} finished rows", "µs"),
            Figure(
                "w5_ratio",
                f"W5 ratio {large:,} / {small:,}",
                "x",
                target=Target(_GROWTH_LIMIT, False),
            ),
            Figure("purge_seconds", f"retention purge of {large:,} rows", "s"),
            Figure("purge_claim_p99", "claim during the purge, p99", "ms"),
            Figure("purge_claim_max", "claim during the purge, longest", "ms"),
        ],
    )
    for run in range(1, settings.runs + 1):
        async with (
            server.fresh_database(f"bench_w5_small_run{run}") as small_dsn,
            server.fresh_database(f"bench_w5_large_run{run}") as large_dsn,
        ):
            await seed_finished(small_dsn, small)
            await seed_finished(large_dsn, large)
            small_cycle, large_cycle = await mean_cycles(
                (small_dsn, large_dsn), settings.growth_cycles, settings.batch_size
            )
            purge = await _purge_with_claims(large_dsn, expected=large)
        report.figure("w5_small").values.append(small_cycle * 1e6)
        report.figure("w5_large").values.append(large_cycle * 1e6)
        report.figure("w5_ratio").values.append(large_cycle / small_cycle)
        report.figure("purge_seconds").values.append(purge["seconds"])
        report.figure("purge_claim_p99").values.append(purge["claim_p99_ms"])
        report.figure("purge_claim_max").values.append(purge["claim_max_ms"])
        report.runs.append(
            {
                "run": run,
                "cycle_seconds_small": small_cycle,
                "cycle_seconds_large": large_cycle,
                "purge": purge,
            }
        )
    return report


async def mean_cycles(dsns: tuple[str, str], cycles: int, batch_size: int) -> tuple[float, float]:
    """Seconds per claim + complete cycle in each database, over ``cycles`` fresh items each."""
    clock = SystemClock()
    pools = [await create_pool(dsn, min_size=1, max_size=1) for dsn in dsns]
    try:
        for dsn, pool in zip(dsns, pools, strict=True):
            queue = PostgresWorkQueue(pool, clock)
            for start in range(0, cycles, batch_size):
                count = min(batch_size, cycles - start)
                await queue.enqueue_many(
                    [EnqueueRequest(NoopJob(seq=start + n)) for n in range(count)]
                )
            await checkpoint_and_vacuum(dsn)
        stores = [PostgresWorkStore(pool, clock) for pool in pools]
        kinds = bench_registry().kinds
        spent = [0.0, 0.0]
        for turn in range(0, cycles, _TURN):
            for index, store in enumerate(stores):
                started = time.perf_counter()
                for _ in range(min(_TURN, cycles - turn)):
                    item = await store.claim(kinds, worker_id="bench-w5", lease_duration=_LEASE)
                    if item is None:
                        raise RuntimeError("W5 ran out of queued items")
                    await store.finish(item.lease, RunOutcome.succeeded(None))
                spent[index] += time.perf_counter() - started
        return spent[0] / cycles, spent[1] / cycles
    finally:
        for pool in pools:
            await close_pool(pool)


async def _purge_with_claims(dsn: str, *, expected: int) -> dict[str, Any]:
    clock = SystemClock()
    maintenance_pool = await create_pool(dsn, min_size=1, max_size=4)
    claimer_pool = await create_pool(dsn, min_size=1, max_size=1)
    try:
        store = PostgresWorkStore(maintenance_pool, clock)
        registry = KindRegistry(
            WorkKind,
            [TokenCleanup, WorkItemRetention],
            [
                TokenCleanupHandler(PostgresRefreshTokenStore(maintenance_pool), clock),
                WorkItemRetentionHandler(store, clock, _RETENTION, batch_size=_RETENTION_BATCH),
            ],
        )
        maintenance = WorkExecutor(store, registry, clock, worker_id="bench-retention")
        retention = await PostgresWorkQueue(maintenance_pool, clock).enqueue(WorkItemRetention())
        await checkpoint_and_vacuum(dsn)

        claimer_queue = PostgresWorkQueue(claimer_pool, clock)
        claimer_store = PostgresWorkStore(claimer_pool, clock)
        kinds = bench_registry().kinds
        claims: list[float] = []
        started = time.perf_counter()
        purging = asyncio.create_task(maintenance.run_next())
        while not purging.done():
            await claimer_queue.enqueue(NoopJob(seq=len(claims)))
            before = time.perf_counter()
            item = await claimer_store.claim(
                kinds, worker_id="bench-claimer", lease_duration=_LEASE
            )
            claims.append(time.perf_counter() - before)
            if item is not None:
                await claimer_store.finish(item.lease, RunOutcome.succeeded(None))
        outcome = await purging
        seconds = time.perf_counter() - started
        purged = await store.get(retention.id)
    finally:
        await close_pool(claimer_pool)
        await close_pool(maintenance_pool)
    if outcome is None or outcome.status is not ExecutionStatus.SUCCEEDED or purged is None:
        raise RuntimeError(f"the retention item did not succeed: {outcome}")
    deleted = purged.progress["deleted"] if isinstance(purged.progress, dict) else None
    if deleted != expected:
        raise RuntimeError(f"retention deleted {deleted} rows, not the {expected} seeded")
    return {
        "deleted": deleted,
        "seconds": seconds,
        "claims": len(claims),
        "claim_p50_ms": percentile(claims, 0.5) * 1e3,
        "claim_p99_ms": percentile(claims, 0.99) * 1e3,
        "claim_max_ms": max(claims) * 1e3,
    }
