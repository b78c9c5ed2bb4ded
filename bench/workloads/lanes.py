"""L1-L3: several executors per worker process (``WORKQUEUE_CONCURRENCY``), and PgBouncer.

- **L1, I/O-bound in one process**: 400 items that each wait 200 ms (``bench_busy``,
  two 100 ms sleeps with a progress report) drained by one process at N = 20; the
  ideal is 400 x 0.2 s / 20 = 4 s. Target: at most 1.2x the ideal.
- **L2, no-op drain**: 5,000 no-op items on top of the ceiling's finished rows,
  drained by one process at N = 4, then (a fresh database) by four processes at
  N = 1, in the same run. Target: one process at N = 4 at least matches the four.
  Beside it the worker CPU per item (the processes' own CPU time from the go to
  the stop, divided by the items); target 0.25 ms.
- **L3, 200 workers through PgBouncer**: 4 processes x 50 executors through a real
  PgBouncer in transaction mode (at most 20 server connections), 2,000 items of
  200 ms, no LISTEN (the workers poll every 0.5 s). Reported: jobs/s, the most
  server connections seen on the database while they drained, the client
  connections PgBouncer served, and items lost (target 0). Needs pgbouncer and a
  server reachable over TCP (``--database-url``); skipped otherwise.

- **L4, PgQueuer 1.6 beside L2**: the same 5,000 no-op jobs drained by PgQueuer
  in its default mode (one ``QueueManager``, no concurrency limit, batches of 10;
  ``bench/pgqueuer_drain.py``) in a fresh database, right after L2, and then by
  one workqueue process at N = 10 (its lanes finishing together complete and
  claim up to ten items per statement, as PgQueuer takes ten per batch). It runs in a
  virtualenv of its own, named by ``BENCH_PGQUEUER_PYTHON`` (default
  ``.venv-pgqueuer/bin/python``); skipped when there is none. Target: workqueue's
  one process at N = 10 at least 1.0x PgQueuer; the ratio at N = 4 beside it.

Every worker is a process of its own (:mod:`bench.workloads.worker_process`), built
and ready before the clock starts; the clock runs from the go to the last
``finished_at``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg

from bench.figures import Figure, Target, WorkloadReport
from bench.kinds import BusyJob, NoopJob
from bench.server import BenchServer, checkpoint_and_vacuum
from bench.settings import BenchSettings
from bench.statements import BENCH_SQL
from bench.workloads.ceiling import seed_finished
from bench.workloads.worker_process import WorkerProcess, WorkerProcessSpec, spawn_context
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkQueue, close_pool, create_pool
from workqueue.adapters.testing.postgres.pgbouncer import (
    PgBouncer,
    find_pgbouncer,
    reaches_over_tcp,
)
from workqueue.domain import EnqueueRequest, WorkPayload

__all__ = ["enqueue_in_batches", "lanes"]

_POLL = 0.02
_DRAIN_TIMEOUT = 300.0
_IO_ITEMS, _IO_SECONDS, _IO_LANES = 400, 0.2, 20
_FLEET_PROCESSES, _FLEET_LANES, _FLEET_ITEMS, _FLEET_SERVER_CONNECTIONS = 4, 50, 2_000, 20
# PgQueuer's default mode takes jobs ten at a time; workqueue's lanes finishing
# together complete and claim up to N at a time (ADR 0023): L4 sets ten beside ten.
_L4_LANES = 10


async def lanes(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """L1-L3 (see the module), ``settings.runs`` times."""
    report = WorkloadReport(
        "L",
        [
            Figure("l1_seconds", f"L1 {_IO_ITEMS} x 200 ms, 1 process N={_IO_LANES}", "s"),
            Figure("l1_of_ideal", "L1 share of the ideal 4 s", "x", target=Target(1.2, False)),
            Figure("l2_one_process", "L2 no-op drain, 1 process N=4", "jobs/s"),
            Figure("l2_four_processes", "L2 no-op drain, 4 processes N=1", "jobs/s"),
            Figure("l2_ratio", "L2 1 process N=4 / 4 processes N=1", "x", target=Target(1.0, True)),
            Figure(
                "l2_cpu_n4", "L2 worker CPU per no-op item, N=4", "ms", target=Target(0.25, False)
            ),
            Figure("l2_cpu_n1", "L2 worker CPU per no-op item, 4 x N=1", "ms"),
            Figure("l4_pgqueuer", "L4 PgQueuer 1.6 default mode, no-op drain", "jobs/s"),
            Figure("l4_n10", f"L4 workqueue no-op drain, 1 process N={_L4_LANES}", "jobs/s"),
            Figure(
                "l4_ratio",
                f"L4 workqueue 1 process N={_L4_LANES} / PgQueuer",
                "x",
                target=Target(1.0, True),
            ),
            Figure("l4_ratio_n4", "L4 workqueue 1 process N=4 / PgQueuer", "x"),
            Figure("l3_jobs", "L3 200 workers via PgBouncer, 200 ms items", "jobs/s"),
            Figure("l3_server_connections", "L3 most server connections", "conns"),
            Figure("l3_lost", "L3 items lost", "items", target=Target(0, False)),
        ],
    )
    for run in range(1, settings.runs + 1):
        details: dict[str, Any] = {"run": run}
        io = await _drain(
            server,
            settings,
            f"bench_l1_run{run}",
            [BusyJob(seconds=_IO_SECONDS)] * _IO_ITEMS,
            processes=1,
            concurrency=_IO_LANES,
        )
        report.figure("l1_seconds").values.append(io["seconds"])
        ideal = _IO_ITEMS * _IO_SECONDS / _IO_LANES
        report.figure("l1_of_ideal").values.append(io["seconds"] / ideal)
        noops: list[WorkPayload] = [NoopJob(seq=n) for n in range(settings.drain_items)]
        one = await _drain(
            server, settings, f"bench_l2_n4_run{run}", noops, processes=1, concurrency=4
        )
        four = await _drain(
            server, settings, f"bench_l2_n1_run{run}", noops, processes=4, concurrency=1
        )
        report.figure("l2_one_process").values.append(one["jobs_per_s"])
        report.figure("l2_four_processes").values.append(four["jobs_per_s"])
        report.figure("l2_ratio").values.append(one["jobs_per_s"] / four["jobs_per_s"])
        report.figure("l2_cpu_n4").values.append(one["cpu_ms_per_item"])
        report.figure("l2_cpu_n1").values.append(four["cpu_ms_per_item"])
        details |= {"l1": io, "l2_n4": one, "l2_n1": four}
        pgqueuer = await _pgqueuer_drain(server, settings.drain_items, run)
        if pgqueuer is not None:
            ten = await _drain(
                server,
                settings,
                f"bench_l4_n10_run{run}",
                noops,
                processes=1,
                concurrency=_L4_LANES,
            )
            report.figure("l4_pgqueuer").values.append(pgqueuer["jobs_per_s"])
            report.figure("l4_n10").values.append(ten["jobs_per_s"])
            report.figure("l4_ratio").values.append(ten["jobs_per_s"] / pgqueuer["jobs_per_s"])
            report.figure("l4_ratio_n4").values.append(one["jobs_per_s"] / pgqueuer["jobs_per_s"])
            details["l4"] = pgqueuer
            details["l4_n10"] = ten
        fleet = await _through_pgbouncer(server, settings, run)
        if fleet is not None:
            report.figure("l3_jobs").values.append(fleet["jobs_per_s"])
            report.figure("l3_server_connections").values.append(fleet["server_connections"])
            report.figure("l3_lost").values.append(fleet["lost"])
            details["l3"] = fleet
        report.runs.append(details)
    return report


async def _pgqueuer_drain(server: BenchServer, items: int, run: int) -> dict[str, Any] | None:
    python = os.environ.get("BENCH_PGQUEUER_PYTHON", ".venv-pgqueuer/bin/python")
    if not os.access(python, os.X_OK):
        print(f"L4 skipped: no PgQueuer virtualenv at {python}", flush=True)
        return None
    script = Path(__file__).parent.parent / "pgqueuer_drain.py"
    async with server.fresh_database(f"bench_l4_run{run}") as dsn:
        process = await asyncio.create_subprocess_exec(
            python, str(script), dsn, str(items), stdout=asyncio.subprocess.PIPE
        )
        out, _ = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"the PgQueuer drain exited with {process.returncode}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


async def _through_pgbouncer(
    server: BenchServer, settings: BenchSettings, run: int
) -> dict[str, Any] | None:
    executable = find_pgbouncer()
    if executable is None or (os.geteuid() == 0 and not reaches_over_tcp(server.admin_dsn)):
        print("L3 skipped: needs pgbouncer and a server over TCP (--database-url)", flush=True)
        return None
    bouncer = PgBouncer(executable, server.admin_dsn, pool_size=_FLEET_SERVER_CONNECTIONS)
    try:
        return await _drain(
            server,
            settings,
            f"bench_l3_run{run}",
            [BusyJob(seconds=_IO_SECONDS)] * _FLEET_ITEMS,
            processes=_FLEET_PROCESSES,
            concurrency=_FLEET_LANES,
            through=bouncer,
        )
    finally:
        bouncer.stop()


async def _drain(
    server: BenchServer,
    settings: BenchSettings,
    name: str,
    payloads: list[WorkPayload],
    *,
    processes: int,
    concurrency: int,
    through: PgBouncer | None = None,
) -> dict[str, Any]:
    async with server.fresh_database(name) as dsn:
        await seed_finished(dsn, settings.finished_rows)
        await enqueue_in_batches(dsn, payloads, settings.batch_size)
        with tempfile.TemporaryDirectory(prefix="bench-cpu-") as cpu_dir:
            workers = [
                WorkerProcess(
                    spawn_context(),
                    WorkerProcessSpec(
                        dsn=dsn if through is None else through.url_for(dsn),
                        worker_id=f"{name}-{index}",
                        log_level=settings.log_level,
                        event_loop=settings.event_loop,
                        log_path=str(settings.log_path),
                        concurrency=concurrency,
                        transaction_pooling=through is not None,
                        poll_seconds=0.5 if through is not None else 5.0,
                        cpu_path=str(Path(cpu_dir) / f"{index}.cpu"),
                    ),
                )
                for index in range(processes)
            ]
            result = await _timed(dsn, settings, workers)
            cpu = sum(float((Path(cpu_dir) / f"{i}.cpu").read_text()) for i in range(processes))
    items = result["items"]
    return {
        **result,
        "processes": processes,
        "concurrency": concurrency,
        "cpu_seconds": cpu,
        "cpu_ms_per_item": 1000.0 * cpu / items if items else 0.0,
        "lost": len(payloads) - items,
    }


async def _timed(dsn: str, settings: BenchSettings, workers: list[WorkerProcess]) -> dict[str, Any]:
    for worker in workers:
        worker.start()
    try:
        await asyncio.gather(*(worker.ready() for worker in workers))
        await checkpoint_and_vacuum(dsn)
        async with _connected(dsn) as connection, _connected(dsn) as watcher:
            most = _MostConnections(watcher)
            watching = asyncio.create_task(most.watch())
            started = time.time()
            for worker in workers:
                worker.go()
            try:
                await _until_drained(connection)
            finally:
                watching.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watching
            last = await connection.fetchval(BENCH_SQL["last_finished_at"])
            finished = await connection.fetchval(BENCH_SQL["finished_count"])
    finally:
        await asyncio.gather(*(worker.stop() for worker in workers))
    seconds = last.timestamp() - started
    items = finished - settings.finished_rows
    return {
        "items": items,
        "seconds": seconds,
        "jobs_per_s": items / seconds,
        "server_connections": most.most,
    }


class _MostConnections:
    """The most sessions on the database, other than the benchmark's own two, while watched."""

    def __init__(self, connection: asyncpg.Connection) -> None:
        self._connection = connection
        self.most = 0

    async def watch(self) -> None:
        while True:
            count: int = await self._connection.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            )
            self.most = max(self.most, count - 2)
            await asyncio.sleep(0.1)


@contextlib.asynccontextmanager
async def _connected(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(dsn)
    try:
        yield connection
    finally:
        await connection.close()


async def enqueue_in_batches(dsn: str, payloads: list[WorkPayload], batch_size: int) -> None:
    """Enqueue ``payloads`` through the production queue, ``batch_size`` a round trip."""
    pool = await create_pool(dsn, min_size=1, max_size=1)
    try:
        queue = PostgresWorkQueue(pool, SystemClock())
        for start in range(0, len(payloads), batch_size):
            batch = payloads[start : start + batch_size]
            await queue.enqueue_many([EnqueueRequest(payload) for payload in batch])
    finally:
        await close_pool(pool)


async def _until_drained(connection: asyncpg.Connection) -> None:
    deadline = time.monotonic() + _DRAIN_TIMEOUT
    while await connection.fetchval(BENCH_SQL["unfinished"]):
        if time.monotonic() > deadline:
            raise TimeoutError(f"items were still queued or running after {_DRAIN_TIMEOUT} s")
        await asyncio.sleep(_POLL)
