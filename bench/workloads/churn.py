"""C1-C2: throughput while the table churns, for minutes, and through a held transaction.

- **C1, a sustained drain**: one worker process at N = 64 lanes (``workqueue
  worker --concurrency 64``) drains no-op items that a steady producer enqueues
  at ``churn_rate`` jobs/s (batches every 0.1 s) for ``churn_seconds``, nothing
  else running, autovacuum as the server has it. Every 10 s: the items finished
  in the window (jobs/s), the p99 pickup of the items that started in it
  (``started_at - enqueued_at``), the dead and live tuples of every queue table,
  the size of ``work_items`` and each of its indexes, and the autovacuum runs so
  far. Targets: throughput in the last minute at least 0.9x the first minute;
  the dead tuples stay bounded (the most seen is reported).
- **C2, the same with a held transaction**: as C1, with one more session that, at
  ``churn_hold_at`` seconds, opens a REPEATABLE READ transaction, reads a row (so
  its snapshot holds back the horizon that VACUUM may clean up to) and sits idle
  in it for ``churn_hold_seconds``, then rolls back. Targets: the p99 pickup during
  the hold at most 3x the clean p99 (the minute before the hold); back within
  1.5x of it within 30 s of the release; throughput during the hold at the
  offered rate (reported as a share of it).

The windows are written whole to the JSON file; the table shows the targets.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from bench.figures import Figure, Target, WorkloadReport
from bench.kinds import NoopJob
from bench.server import BenchServer, checkpoint_and_vacuum
from bench.settings import BenchSettings
from bench.workloads.worker_process import WorkerProcess, WorkerProcessSpec, spawn_context
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkQueue, close_pool, create_pool
from workqueue.domain import EnqueueRequest

__all__ = ["churn"]

_WINDOW = 10.0
_TICK = 0.1
_QUEUE_TABLES = ("work_items", "work_schedules", "refresh_tokens")
_TABLE_STATS = """
SELECT relname, n_live_tup, n_dead_tup, autovacuum_count, autoanalyze_count
FROM pg_stat_user_tables WHERE relname = ANY ($1::text[])
"""
_SIZES = """
SELECT c.relname, pg_relation_size(c.oid) AS bytes
FROM pg_class AS c
WHERE c.oid = 'work_items'::regclass
   OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'work_items'::regclass)
"""
_WINDOW_FIGURES = """
SELECT
    (SELECT count(*) FROM work_items WHERE finished_at >= $1 AND finished_at < $2) AS finished,
    (SELECT percentile_cont(0.99) WITHIN GROUP (
         ORDER BY extract(epoch FROM started_at - enqueued_at))
     FROM work_items WHERE started_at >= $1 AND started_at < $2) AS p99_pickup
"""
# How close to the clean p99 the pickup must come back after the release.
_RECOVERED = 1.5


@dataclass(slots=True)
class _Window:
    """The figures of one window of the run, as the JSON file keeps them."""

    start: float
    jobs_per_s: float
    p99_pickup_ms: float | None
    holding: bool
    tables: dict[str, dict[str, int]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)


async def churn(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """C1 and C2 (see the module), ``settings.runs`` times each."""
    report = WorkloadReport(
        "C",
        [
            Figure("c1_first_minute", "C1 N=64 steady drain, first minute", "jobs/s"),
            Figure("c1_last_minute", "C1 N=64 steady drain, last minute", "jobs/s"),
            Figure("c1_ratio", "C1 last minute / first minute", "x", target=Target(0.9, True)),
            Figure("c1_most_dead", "C1 most dead tuples in work_items", "tuples"),
            Figure("c1_most_size", "C1 largest work_items + indexes", "MB"),
            Figure("c1_autovacuums", "C1 autovacuum runs on work_items", "runs"),
            Figure("c2_clean_p99", "C2 p99 pickup, the minute before the hold", "ms"),
            Figure("c2_hold_p99", "C2 p99 pickup during the hold (worst window)", "ms"),
            Figure("c2_p99_ratio", "C2 hold p99 / clean p99", "x", target=Target(3.0, False)),
            Figure(
                "c2_recovery",
                "C2 back within 1.5x the clean p99 after",
                "s",
                target=Target(30.0, False),
            ),
            Figure(
                "c2_hold_rate",
                "C2 throughput during the hold / offered",
                "x",
                target=Target(0.95, True),
            ),
            Figure("c2_most_dead", "C2 most dead tuples in work_items", "tuples"),
        ],
    )
    for run in range(1, settings.runs + 1):
        steady = await _churn_once(server, settings, f"bench_c1_run{run}", hold=False)
        windows = steady["windows"]
        per_minute = int(60 / _WINDOW)
        first = _mean([w.jobs_per_s for w in windows[:per_minute]])
        last = _mean([w.jobs_per_s for w in windows[-per_minute:]])
        report.figure("c1_first_minute").values.append(first)
        report.figure("c1_last_minute").values.append(last)
        report.figure("c1_ratio").values.append(last / first if first else 0.0)
        report.figure("c1_most_dead").values.append(_most_dead(windows))
        report.figure("c1_most_size").values.append(_most_size(windows) / 1e6)
        report.figure("c1_autovacuums").values.append(_autovacuums(windows))
        held = await _churn_once(server, settings, f"bench_c2_run{run}", hold=True)
        hold = _hold_figures(held["windows"], settings)
        for key, value in hold.items():
            report.figure(key).values.append(value)
        report.figure("c2_most_dead").values.append(_most_dead(held["windows"]))
        report.runs.append(
            {
                "run": run,
                "offered_jobs_per_s": settings.churn_rate,
                "autovacuum": steady["autovacuum"],
                "c1": [_document(w) for w in windows],
                "c2": [_document(w) for w in held["windows"]],
                "c2_figures": hold,
            }
        )
    return report


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _most_dead(windows: list[_Window]) -> float:
    return float(max((w.tables.get("work_items", {}).get("dead", 0) for w in windows), default=0))


def _autovacuums(windows: list[_Window]) -> float:
    """Autovacuum runs on work_items by the last window (the database is fresh)."""
    last = windows[-1].tables.get("work_items", {}) if windows else {}
    return float(last.get("autovacuums", 0))


def _most_size(windows: list[_Window]) -> float:
    return float(max((sum(w.sizes.values()) for w in windows), default=0))


def _hold_figures(windows: list[_Window], settings: BenchSettings) -> dict[str, float]:
    """The C2 figures of one run's windows (see the module)."""
    start, end = settings.churn_hold_at, settings.churn_hold_at + settings.churn_hold_seconds
    before = [w for w in windows if start - 60 <= w.start < start and w.p99_pickup_ms]
    during = [w for w in windows if start <= w.start and w.start + _WINDOW <= end]
    clean = max((w.p99_pickup_ms or 0.0 for w in before), default=0.0)
    worst = max((w.p99_pickup_ms or 0.0 for w in during), default=0.0)
    recovery = float(settings.churn_seconds)  # never, unless a window says otherwise
    for window in windows:
        if window.start >= end and (window.p99_pickup_ms or 0.0) <= _RECOVERED * clean:
            recovery = window.start + _WINDOW - end
            break
    rate = _mean([w.jobs_per_s for w in during]) / settings.churn_rate
    return {
        "c2_clean_p99": clean,
        "c2_hold_p99": worst,
        "c2_p99_ratio": worst / clean if clean else 0.0,
        "c2_recovery": recovery,
        "c2_hold_rate": rate,
    }


def _document(window: _Window) -> dict[str, Any]:
    return {
        "start_s": window.start,
        "jobs_per_s": window.jobs_per_s,
        "p99_pickup_ms": window.p99_pickup_ms,
        "holding": window.holding,
        "tables": window.tables,
        "sizes": window.sizes,
    }


async def _churn_once(
    server: BenchServer, settings: BenchSettings, name: str, *, hold: bool
) -> dict[str, Any]:
    async with server.fresh_database(name) as dsn:
        worker = WorkerProcess(
            spawn_context(),
            WorkerProcessSpec(
                dsn=dsn,
                worker_id=name,
                log_level=settings.log_level,
                event_loop=settings.event_loop,
                log_path=str(settings.log_path),
                concurrency=settings.churn_lanes,
            ),
        )
        worker.start()
        try:
            await worker.ready()
            await checkpoint_and_vacuum(dsn)
            worker.go()
            async with _connected(dsn) as watcher, _connected(dsn) as holder:
                # Off, the dead tuples grow whatever the queue does: say so beside them.
                autovacuum = await watcher.fetchval("SHOW autovacuum")
                print(f"  {name}: autovacuum {autovacuum}", flush=True)
                holding = _Holding(holder)
                producer = asyncio.create_task(_produce(dsn, settings))
                holds = asyncio.create_task(holding.hold(settings)) if hold else None
                try:
                    windows = await _watch(watcher, settings, holding)
                finally:
                    producer.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await producer
                    if holds is not None:
                        holds.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await holds
        finally:
            await worker.stop()
    return {"windows": windows, "autovacuum": autovacuum}


class _Holding:
    """An idle-in-transaction session whose snapshot holds back VACUUM's horizon."""

    def __init__(self, connection: asyncpg.Connection) -> None:
        self._connection = connection
        self.now = False

    async def hold(self, settings: BenchSettings) -> None:
        await asyncio.sleep(settings.churn_hold_at)
        transaction = self._connection.transaction(isolation="repeatable_read")
        await transaction.start()
        try:
            await self._connection.fetchval("SELECT count(*) FROM work_items WHERE id = 1")
            self.now = True
            await asyncio.sleep(settings.churn_hold_seconds)
        finally:
            self.now = False
            await transaction.rollback()


async def _produce(dsn: str, settings: BenchSettings) -> None:
    """Enqueue ``churn_rate`` jobs/s in batches every tick, catching up if a tick runs late."""
    pool = await create_pool(dsn, min_size=1, max_size=2)
    try:
        queue = PostgresWorkQueue(pool, SystemClock())
        started = time.monotonic()
        sent = 0
        seq = 0
        while True:
            due = int((time.monotonic() - started) * settings.churn_rate)
            if due > sent:
                batch = [EnqueueRequest(NoopJob(seq=seq + n)) for n in range(due - sent)]
                await queue.enqueue_many(batch)
                seq += len(batch)
                sent = due
            await asyncio.sleep(_TICK)
    finally:
        await close_pool(pool)


async def _watch(
    connection: asyncpg.Connection, settings: BenchSettings, holding: _Holding
) -> list[_Window]:
    """Sample every window until the run's time is up."""
    windows: list[_Window] = []
    began = datetime.now(UTC)
    for index in range(int(settings.churn_seconds / _WINDOW)):
        window_start = began + timedelta(seconds=index * _WINDOW)
        window_end = window_start + timedelta(seconds=_WINDOW)
        await asyncio.sleep(max((window_end - datetime.now(UTC)).total_seconds(), 0))
        held = holding.now
        # Items started near the end of the window finish a moment later.
        await asyncio.sleep(0.2)
        row = await connection.fetchrow(_WINDOW_FIGURES, window_start, window_end)
        assert row is not None
        tables = {
            r["relname"]: {
                "live": r["n_live_tup"],
                "dead": r["n_dead_tup"],
                "autovacuums": r["autovacuum_count"],
                "autoanalyzes": r["autoanalyze_count"],
            }
            for r in await connection.fetch(_TABLE_STATS, list(_QUEUE_TABLES))
        }
        sizes = {r["relname"]: r["bytes"] for r in await connection.fetch(_SIZES)}
        p99 = row["p99_pickup"]
        windows.append(
            _Window(
                start=index * _WINDOW,
                jobs_per_s=row["finished"] / _WINDOW,
                p99_pickup_ms=None if p99 is None else float(p99) * 1000,
                holding=held,
                tables=tables,
                sizes=sizes,
            )
        )
        print(
            f"  {index * _WINDOW:5.0f} s {row['finished'] / _WINDOW:7.0f} jobs/s"
            f" p99 {0 if p99 is None else float(p99) * 1000:7.1f} ms"
            f" dead {tables.get('work_items', {}).get('dead', 0):>8}"
            f"{' (held)' if held else ''}",
            flush=True,
        )
    return windows


@contextlib.asynccontextmanager
async def _connected(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(dsn)
    try:
        yield connection
    finally:
        await connection.close()
