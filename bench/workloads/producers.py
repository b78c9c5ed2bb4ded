"""P1-P4: producing inside the caller's transaction, async and sync, against baselines.

- **P1**: the async queue one enqueue at a time, through the pool (each enqueue
  its own transaction, as W1) and inside one open transaction on one connection
  (begun and committed once, both timed). Target: the transaction path is at
  least as fast.
- **P2, P3**: the sync producer on a psycopg connection one enqueue at a time,
  against a bare psycopg loop of INSERTs of the same rows, with the same commit
  pattern: each row committed on its own (autocommit) in P2, all in one
  transaction committed at the end in P3. Two connections, and each side takes
  its turns on both of them, alternately (so in P3 each connection's transaction
  holds half of each side's rows, and its commit is counted half to each).
  Target: at least 0.9 of the bare loop.
- **P4**: the sync producer's ``enqueue_many`` of ``batch_size`` items per call,
  each call its own transaction, against psycopg's ``executemany`` of the same
  INSERT for the same rows (pipelined: one round trip per batch), one transaction
  per batch. Target: at least 0.9.
- The sync producer on a psycopg pool, one at a time, beside the bare loop of P2:
  reported, no target.

The two sides of each pair run on one fresh database and take turns, a chunk of
:data:`CHUNK` items (or one batch) at a time, each side's time summed: whatever
else the machine does in the meantime falls on both alike, which on a shared
2-core machine moves the figures far more than either side's own cost. The
payloads and rows are built before the clock starts; the bare loops encode each
row's JSON and read the time inside the loop, as an enqueue does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from bench.figures import Figure, Target, WorkloadReport
from bench.kinds import BenchKind, NoopJob
from bench.server import BenchServer, checkpoint_and_vacuum
from bench.settings import BenchSettings
from bench.statements import BENCH_SQL
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkQueue, close_pool, create_pool
from workqueue.adapters.psycopg import PsycopgWorkQueue
from workqueue.domain import EnqueueRequest

__all__ = ["CHUNK", "producers"]

CHUNK = 100
"""Items one side enqueues before the other side's turn (one-at-a-time pairs)."""

_KIND = BenchKind.NOOP.value

Step = Callable[[int, int], None]
"""Enqueue the items from ``start`` on, ``count`` of them."""


async def producers(server: BenchServer, settings: BenchSettings) -> WorkloadReport:
    """P1-P4 (see the module); jobs/s, and ratios within each run."""
    batch = settings.batch_size
    figures = [
        Figure("p1_pool", "P1 async enqueue one at a time, pool", "jobs/s"),
        Figure("p1_tx", "P1 async enqueue one at a time, one open transaction", "jobs/s"),
        Figure("p1_ratio", "P1 ratio transaction / pool", "x", target=Target(1.0, True)),
        Figure("p2_bare", "P2 bare psycopg INSERT loop, each committed", "jobs/s"),
        Figure("p2_sync", "P2 sync enqueue one at a time, each committed", "jobs/s"),
        Figure("p2_ratio", "P2 ratio sync / bare", "x", target=Target(0.9, True)),
        Figure("p3_bare", "P3 bare psycopg INSERT loop, one transaction", "jobs/s"),
        Figure("p3_sync", "P3 sync enqueue one at a time, one transaction", "jobs/s"),
        Figure("p3_ratio", "P3 ratio sync / bare", "x", target=Target(0.9, True)),
        Figure("p4_bare", f"P4 bare psycopg executemany, {batch:,} per transaction", "jobs/s"),
        Figure("p4_sync", f"P4 sync enqueue_many, {batch:,} per call", "jobs/s"),
        Figure("p4_ratio", "P4 ratio sync / bare", "x", target=Target(0.9, True)),
        Figure("pool_bare", "bare psycopg INSERT loop, each committed (beside the pool)", "jobs/s"),
        Figure("pool_sync", "sync enqueue one at a time, psycopg pool", "jobs/s"),
    ]
    report = WorkloadReport("P", figures)
    pairs: dict[str, tuple[str, str, Callable[[str, BenchSettings], Awaitable[Sides]]]] = {
        "p1": ("p1_tx", "p1_pool", _p1),
        "p2": ("p2_sync", "p2_bare", lambda dsn, s: _sync_pair(dsn, s, autocommit=True)),
        "p3": ("p3_sync", "p3_bare", lambda dsn, s: _sync_pair(dsn, s, autocommit=False)),
        "p4": ("p4_sync", "p4_bare", _p4),
        "pool": ("pool_sync", "pool_bare", _pool_pair),
    }
    for run in range(1, settings.runs + 1):
        measured: dict[str, float] = {}
        for name, (ours, baseline, measure) in pairs.items():
            async with server.fresh_database(f"bench_{name}_run{run}") as dsn:
                await checkpoint_and_vacuum(dsn)
                sides = await measure(dsn, settings)
            measured[ours] = sides.items / sides.ours
            measured[baseline] = sides.items / sides.baseline
            report.figure(ours).values.append(measured[ours])
            report.figure(baseline).values.append(measured[baseline])
            if name != "pool":
                report.figure(f"{name}_ratio").values.append(sides.baseline / sides.ours)
        report.runs.append({"run": run, "jobs_per_second": measured})
    return report


class Sides:
    """The seconds each side of a pair took for the same number of items."""

    def __init__(self, items: int) -> None:
        self.items = items
        self.ours = 0.0
        self.baseline = 0.0


def _take_turns(items: int, chunk: int, ours: Sequence[Step], baseline: Sequence[Step]) -> Sides:
    """Run both sides over ``items`` in turns of ``chunk``, who goes first alternating.

    Given a step per connection, each side moves to the next connection every turn,
    the baseline a connection ahead of ours: over two turns each side has gone first
    on one connection and second on the other, the same for both.
    """
    sides = Sides(items)
    for turn, start in enumerate(range(0, items, chunk)):
        count = min(chunk, items - start)
        order = [
            ("ours", ours[turn % len(ours)]),
            ("baseline", baseline[(turn + 1) % len(baseline)]),
        ]
        for side, step in order if turn % 2 == 0 else reversed(order):
            started = time.perf_counter()
            step(start, count)
            setattr(sides, side, getattr(sides, side) + time.perf_counter() - started)
    return sides


async def _p1(dsn: str, settings: BenchSettings) -> Sides:
    items = settings.producer_enqueues
    payloads = [NoopJob(seq=seq) for seq in range(items)]
    pool = await create_pool(dsn, min_size=2, max_size=4)
    try:
        through_pool = PostgresWorkQueue(pool, SystemClock())
        sides = Sides(items)
        async with pool.acquire() as connection:
            in_transaction = PostgresWorkQueue(connection, SystemClock())
            started = time.perf_counter()
            transaction = connection.transaction()
            await transaction.start()
            sides.ours += time.perf_counter() - started
            for turn, start in enumerate(range(0, items, CHUNK)):
                chunk = payloads[start : start + CHUNK]
                order = [("ours", in_transaction), ("baseline", through_pool)]
                for side, queue in order if turn % 2 == 0 else reversed(order):
                    started = time.perf_counter()
                    for payload in chunk:
                        await queue.enqueue(payload)
                    setattr(sides, side, getattr(sides, side) + time.perf_counter() - started)
            started = time.perf_counter()
            await transaction.commit()
            sides.ours += time.perf_counter() - started
        await through_pool.close()
    finally:
        await close_pool(pool)
    return sides


async def _sync_pair(dsn: str, settings: BenchSettings, *, autocommit: bool) -> Sides:
    items = settings.producer_enqueues
    payloads = [NoopJob(seq=seq) for seq in range(items)]
    rows = [{"seq": seq} for seq in range(items)]
    with ExitStack() as stack:
        # Each side takes turns on both connections (see _take_turns): which of two
        # server processes answers a connection, and how well the machine places it
        # beside the client, moved the same loop on two connections by up to a
        # quarter for a whole run.
        connections = [
            stack.enter_context(psycopg.connect(dsn, autocommit=autocommit)) for _ in range(2)
        ]
        sides = _take_turns(
            items,
            CHUNK,
            [_producer_step(PsycopgWorkQueue(c, SystemClock()), payloads) for c in connections],
            [_bare_step(c, rows) for c in connections],
        )
        # Each transaction holds half of each side's rows: its commit is shared alike.
        for connection in connections:
            started = time.perf_counter()
            connection.commit()
            share = (time.perf_counter() - started) / 2
            sides.ours += share
            sides.baseline += share
    return sides


async def _pool_pair(dsn: str, settings: BenchSettings) -> Sides:
    items = settings.producer_enqueues
    with ExitStack() as stack:
        pool = stack.enter_context(ConnectionPool(dsn, min_size=1, max_size=4, open=True))
        pool.wait()
        bare_connection = stack.enter_context(psycopg.connect(dsn, autocommit=True))
        return _take_turns(
            items,
            CHUNK,
            [
                _producer_step(
                    PsycopgWorkQueue(pool, SystemClock()), [NoopJob(seq=s) for s in range(items)]
                )
            ],
            [_bare_step(bare_connection, [{"seq": seq} for seq in range(items)])],
        )


async def _p4(dsn: str, settings: BenchSettings) -> Sides:
    items, size = settings.batch_enqueues, settings.batch_size
    requests = [EnqueueRequest(NoopJob(seq=seq)) for seq in range(items)]
    rows = [{"seq": seq} for seq in range(items)]
    insert = BENCH_SQL["bare_insert"]
    with (
        psycopg.connect(dsn, autocommit=True) as producers_connection,
        psycopg.connect(dsn, autocommit=True) as bare_connection,
    ):
        queue = PsycopgWorkQueue(producers_connection, SystemClock())

        def ours(start: int, count: int) -> None:
            queue.enqueue_many(requests[start : start + count])

        def baseline(start: int, count: int) -> None:
            with bare_connection.transaction(), bare_connection.cursor() as cursor:
                now = datetime.now(UTC)
                cursor.executemany(
                    insert,
                    [(_KIND, json.dumps(row), now) for row in rows[start : start + count]],
                    returning=True,
                )
                while True:
                    cursor.fetchone()
                    if not cursor.nextset():
                        break

        return _take_turns(items, size, [ours], [baseline])


def _producer_step(queue: PsycopgWorkQueue, payloads: Sequence[NoopJob]) -> Step:
    def step(start: int, count: int) -> None:
        for payload in payloads[start : start + count]:
            queue.enqueue(payload)

    return step


def _bare_step(connection: psycopg.Connection[Any], rows: Sequence[dict[str, int]]) -> Step:
    insert = BENCH_SQL["bare_insert"]
    cursor = connection.cursor()

    def step(start: int, count: int) -> None:
        for row in rows[start : start + count]:
            cursor.execute(insert, (_KIND, json.dumps(row), datetime.now(UTC)))
            cursor.fetchone()

    return step
