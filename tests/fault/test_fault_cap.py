"""A kind capped at 3, drained by 4 processes x 10 lanes while workers are killed at random.

Issue 28's fault test (docs/adr/0035): a watcher reads the ``running`` rows of the
kind every few milliseconds and never sees more than the cap; the slot a killed
worker held is freed by lease recovery (the kind keeps draining), nothing is lost,
no write is stale, and the items start in claim order (FIFO here: one priority).
A quarter of the attempts fail on purpose, so retries go back through the slots
too.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from fault_database import audit, enqueue_chores
from fault_figures import report_figures
from fault_fleet import FAULT_SETTINGS, Fleet
from fault_kills import kill_until_drained, watching
from fault_kinds import Chore, FaultKind

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkStore, close_pool, create_pool

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

CAP = 3
LANES = 10
WORKERS = 4
ITEMS = 150
LEASE = float(FAULT_SETTINGS["WORKQUEUE_LEASE_DURATION"])
POLL = float(FAULT_SETTINGS["WORKQUEUE_POLL_INTERVAL"])
MAX_STALLS = int(FAULT_SETTINGS["WORKQUEUE_MAX_STALLS"])
# Two items' first attempts may start out of id order by at most this much: those
# of one statement (a completion that claims several) start as their lanes get to them.
START_SLACK = 1.0


async def cap_the_chores(url: str) -> None:
    pool = await create_pool(url, min_size=1, max_size=1)
    try:
        cap = await PostgresWorkStore(pool, SystemClock()).cap_kind(FaultKind.CHORE.value, CAP)
    finally:
        await close_pool(pool)
    assert cap is not None
    assert cap.max_running == CAP


class RunningWatch:
    """Counts the chores ``running`` at once, from a connection of its own, until stopped."""

    def __init__(self, connection: asyncpg.Connection) -> None:
        self._connection = connection
        self.most = 0
        self.reads = 0

    async def watch(self) -> None:
        while True:
            running = await self._connection.fetchval(
                "SELECT count(*) FROM work_items WHERE kind = $1 AND status = 'running'",
                FaultKind.CHORE.value,
            )
            self.most = max(self.most, running)
            self.reads += 1
            await asyncio.sleep(0.005)


@contextlib.asynccontextmanager
async def counting_running(url: str) -> AsyncIterator[RunningWatch]:
    connection = await asyncpg.connect(url)
    watch = RunningWatch(connection)
    task = asyncio.create_task(watch.watch())
    try:
        yield watch
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await connection.close()


async def first_attempt_starts(url: str) -> list[tuple[int, float]]:
    """(item id, when its handler first started, epoch seconds), by id, of the items
    whose first attempt reached its handler (a worker killed just after its claim
    leaves none)."""
    connection = await asyncpg.connect(url)
    try:
        rows = await connection.fetch(
            "SELECT item_id, extract(epoch FROM started_at)::float8 AS started "
            "FROM fault_runs WHERE attempt = 1 ORDER BY item_id"
        )
    finally:
        await connection.close()
    return [(row["item_id"], row["started"]) for row in rows]


def started_out_of_order(starts: list[tuple[int, float]]) -> list[int]:
    """The items, of ``starts`` by id, whose first attempt started more than
    :data:`START_SLACK` before that of an item with a lower id."""
    latest = float("-inf")
    early = []
    for item_id, started in starts:
        if started < latest - START_SLACK:
            early.append(item_id)
        latest = max(latest, started)
    return early


async def test_a_capped_kind_never_runs_more_than_its_cap_while_workers_are_killed(
    fault_database: str, tmp_path: Path
) -> None:
    await cap_the_chores(fault_database)
    fleet = Fleet(fault_database, tmp_path, WORKQUEUE_CONCURRENCY=str(LANES))
    try:
        chore = Chore(naps=(0.05,), jitter=0.1, fail_rate=0.25)
        enqueued = set(await enqueue_chores(fault_database, [chore] * ITEMS))
        started = time.monotonic()
        for worker in [fleet.start() for _ in range(WORKERS)]:
            await worker.wait_for_output("worker started", within=60)

        async with (
            counting_running(fault_database) as running,
            watching(fault_database) as (
                watch,
                connection,
            ),
        ):
            kills = await kill_until_drained(
                fleet, watch, connection, started=started, deadline=120 + ITEMS * 0.3
            )
            await watch.until_settled(within=LEASE + POLL + 10)
        elapsed = time.monotonic() - started
        exits = await fleet.stop_all()
    finally:
        fleet.close()

    result = await audit(fault_database, enqueued=enqueued, max_stalls=MAX_STALLS)
    starts = await first_attempt_starts(fault_database)
    out_of_order = started_out_of_order(starts)
    report_figures(
        "cap",
        lanes=LANES,
        workers=WORKERS,
        cap=CAP,
        items=len(enqueued),
        kills=kills,
        most_running=running.most,
        running_reads=running.reads,
        retries=result.retries,
        lost=result.lost(enqueued),
        stale_writes=len(result.stale_writes),
        seconds=f"{elapsed:.1f}",
    )
    assert result.problems == [], "\n".join(result.problems[:20])
    assert result.lost(enqueued) == 0
    assert kills >= 1
    assert running.reads > 100
    assert running.most <= CAP
    assert running.most == CAP, "the cap never filled: the test would not see it exceeded"
    assert out_of_order == []
    assert set(exits.values()) == {0}
