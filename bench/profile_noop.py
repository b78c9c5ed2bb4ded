"""Where a no-op item's time goes: one worker process at N lanes, profiled (issue 15).

``python -m bench.profile_noop [--database-url URL] [--items 5000] [--concurrency 4]``

In a fresh database (created, migrated, dropped again) it:

1. drains ``items`` no-op items with one :class:`~workqueue.application.Worker` at N lanes in
   this process (uvloop, LISTEN, as :mod:`bench.workloads.worker_process` builds
   one), once plain (wall clock and CPU per item) and once under cProfile, whose
   own time per function is summed by part: our code (``src/``), asyncpg, the
   event loop and asyncio, logging, the rest;
2. times the claim statement (complete one lease and claim the next) from one
   connection, one after another, as a lane runs it: the round trip, the client
   CPU of it, ``SELECT 1`` for the bare round trip, the server's execution time
   (``EXPLAIN ANALYZE`` in a rolled-back transaction) and the same loop with
   ``synchronous_commit = off`` (the difference is the commit's WAL flush).

Not run by the tests; the figures are in README.md ("Several executors per process").
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg

from bench.assembly import bench_registry, build_worker, configure_bench_logging, run_on
from bench.kinds import NoopJob
from bench.statements import BENCH_SQL
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import (
    PostgresWorkNotifications,
    PostgresWorkQueue,
    close_pool,
    create_pool,
    migrate,
)
from workqueue.adapters.postgres.sql import load_statements
from workqueue.domain import EnqueueRequest

_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
_DATABASE = "bench_profile_noop"
_CLAIM = load_statements("store.sql")["claim"]
_PARTS = (
    ("our code (src/)", ("/src/",)),
    ("asyncpg", ("asyncpg",)),
    ("event loop, asyncio", ("asyncio", "uvloop")),
    ("logging", ("logging",)),
)


async def main(admin_dsn: str, items: int, concurrency: int) -> dict[str, Any]:
    """Both measurements in a fresh database; the figures as one JSON object."""
    dsn = await _fresh_database(admin_dsn)
    try:
        plain = await _drain(dsn, items, concurrency, profile=None)
        # CPU time, not wall: a lane waiting on the server is not counted as its cost.
        profile = cProfile.Profile(time.process_time)
        profiled = await _drain(dsn, items, concurrency, profile=profile)
        await _enqueue(dsn, items)
        statements = await _statements(dsn, items)
    finally:
        await _drop_database(admin_dsn)
    return {
        "items": items,
        "concurrency": concurrency,
        "plain": plain,
        "profiled": profiled,
        "profiled_cpu_us_per_item_by_part": _by_part(profile, items),
        "top_functions_own_cpu_us_per_item": _top(profile, items, 15),
        "statements_us": statements,
    }


async def _drain(
    dsn: str, items: int, concurrency: int, *, profile: cProfile.Profile | None
) -> dict[str, float]:
    await _enqueue(dsn, items)
    pool = await create_pool(dsn, min_size=1, max_size=3 + concurrency)
    try:
        async with PostgresWorkNotifications(dsn) as notifications:
            await notifications.listening()
            worker = build_worker(
                pool,
                bench_registry(),
                worker_id="profile",
                notifications=notifications,
                concurrency=concurrency,
                poll_interval=timedelta(seconds=5),
            )
            watcher = await asyncpg.connect(dsn)
            commits = await _commits(watcher)
            polls = 0
            try:
                if profile is not None:
                    profile.enable()
                cpu, wall = time.process_time(), time.perf_counter()
                running = asyncio.create_task(worker.run())
                while await watcher.fetchval(BENCH_SQL["unfinished"]):
                    polls += 1
                    await asyncio.sleep(0.02)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                if profile is not None:
                    profile.disable()
                worker.stop()
                await running
            finally:
                await close_pool(pool)
                await asyncio.sleep(1.0)  # the ended sessions' statistics reach the server's
                # Not the worker's: the watcher's polls (and the last, which found
                # none), the first reading's commit and the second's snapshot clear.
                commits = await _commits(watcher) - commits - polls - 3
                await watcher.close()
    finally:
        await close_pool(pool)  # again, if the drain failed before the first
    return {
        "jobs_per_s": items / wall,
        "cpu_ms_per_item": 1000.0 * cpu / items,
        "commits_per_item": commits / items,
    }


async def _commits(connection: asyncpg.Connection) -> int:
    await connection.execute("SELECT pg_stat_clear_snapshot()")
    committed: int = await connection.fetchval(
        "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
    )
    return committed


def _by_part(profile: cProfile.Profile, items: int) -> dict[str, float]:
    """Each part's own (not cumulative) profiled time per item, in µs."""
    totals = dict.fromkeys([name for name, _ in _PARTS] + ["other"], 0.0)
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    for (file_name, _, function), (_, _, own, _, _) in stats.items():
        where = f"{file_name}:{function}"
        part = next((name for name, marks in _PARTS if any(m in where for m in marks)), "other")
        totals[part] += own
    return {part: 1e6 * seconds / items for part, seconds in totals.items()}


def _top(profile: cProfile.Profile, items: int, count: int) -> dict[str, float]:
    """The ``count`` functions of most own time, per item, in µs."""
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    ranked = sorted(stats.items(), key=lambda entry: entry[1][2], reverse=True)[:count]
    return {
        f"{file_name.rsplit('/', 1)[-1]}:{line}:{function}": 1e6 * own / items
        for (file_name, line, function), (_, _, own, _, _) in ranked
    }


async def _statements(dsn: str, items: int) -> dict[str, float]:
    """The claim statement one after another on one connection, as a lane runs it."""
    connection = await asyncpg.connect(dsn)
    try:
        kinds = [await connection.fetchval("SELECT kind FROM work_items LIMIT 1")]
        claim = await connection.prepare(_CLAIM)
        held: list[Any] = [None, None]

        async def complete_and_claim() -> None:
            now = SystemClock().now()
            row = await claim.fetchrow(
                kinds, "profile", now, now + timedelta(minutes=5), *held, None
            )
            assert row is not None  # the statement always returns its one row
            held[:] = [row["id"], row["attempt"]]

        select_one = await connection.prepare("SELECT 1")
        third = items // 3
        figures = {
            **_prefixed("select_1_", await _timed(select_one.fetchval, third)),
            **_prefixed("claim_", await _timed(complete_and_claim, third)),
        }
        await connection.execute("SET synchronous_commit = off")
        figures |= _prefixed("claim_no_sync_commit_", await _timed(complete_and_claim, third))
        await connection.execute("SET synchronous_commit = on")
        figures["server_execution"] = await _execution_time(connection, kinds, held, 200)
    finally:
        await connection.close()
    return figures


async def _timed(call: Callable[[], Awaitable[Any]], times: int) -> dict[str, float]:
    walls, cpus = [], []
    for _ in range(times):
        cpu, wall = time.process_time(), time.perf_counter()
        await call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return {
        "round_trip": 1e6 * statistics.median(walls),
        "client_cpu": 1e6 * statistics.fmean(cpus),
    }


async def _execution_time(
    connection: asyncpg.Connection, kinds: list[str], held: list[Any], times: int
) -> float:
    """The claim statement's execution on the server, without its commit (rolled back)."""
    explain = await connection.prepare(f"EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) {_CLAIM}")
    spent: list[float] = []
    for _ in range(times):
        now = SystemClock().now()
        transaction = connection.transaction()
        await transaction.start()
        plan = await explain.fetchval(
            kinds, "profile", now, now + timedelta(minutes=5), *held, None
        )
        await transaction.rollback()
        spent.append(float(json.loads(plan)[0]["Execution Time"]))
    return 1000.0 * statistics.median(spent)


def _prefixed(prefix: str, figures: dict[str, float]) -> dict[str, float]:
    return {prefix + name: value for name, value in figures.items()}


async def _enqueue(dsn: str, items: int) -> None:
    pool = await create_pool(dsn, min_size=1, max_size=1)
    try:
        queue = PostgresWorkQueue(pool, SystemClock())
        for start in range(0, items, 1_000):
            batch = range(start, min(items, start + 1_000))
            await queue.enqueue_many([EnqueueRequest(NoopJob(seq=n)) for n in batch])
    finally:
        await close_pool(pool)


async def _fresh_database(admin_dsn: str) -> str:
    await _drop_database(admin_dsn)
    admin = await asyncpg.connect(admin_dsn)
    try:
        await admin.execute(f"CREATE DATABASE {_DATABASE}")
    finally:
        await admin.close()
    dsn = admin_dsn.rsplit("/", 1)[0] + "/" + _DATABASE
    await migrate(dsn)
    return dsn


async def _drop_database(admin_dsn: str) -> None:
    admin = await asyncpg.connect(admin_dsn)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {_DATABASE} WITH (FORCE)")
    finally:
        await admin.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=_DSN)
    parser.add_argument("--items", type=int, default=5_000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--log-path", default="/tmp/bench-profile-noop.log")
    args = parser.parse_args()
    configure_bench_logging("INFO", Path(args.log_path))
    result = run_on("uvloop", main(args.database_url, args.items, args.concurrency))
    print(json.dumps(result, indent=2))
