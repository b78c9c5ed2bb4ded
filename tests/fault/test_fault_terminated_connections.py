"""``pg_terminate_backend`` on a worker's connections: its pool's, and its listening one.

An operator (or a failover, or an idle-session timeout) may end any session at
any moment. A worker whose pool connections are cut mid-claim, mid-heartbeat or
mid-complete must carry on with fresh ones and lose nothing; one whose listening
connection is cut must listen again and still be woken by new work.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator

import asyncpg
import pytest
from fault_database import audit, enqueue_chores, item_row, unfinished_count
from fault_figures import FaultSize, report_figures
from fault_fleet import FAULT_SETTINGS, LANES, Fleet, FleetWorker, eventually
from fault_kinds import Chore

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

MAX_STALLS = int(FAULT_SETTINGS["WORKQUEUE_MAX_STALLS"])
LISTENING_AGAIN = r"INFO \S+: listening for work on \S+ again"
# A run of items that a cut connection ends hands back the item it held for its next
# turn: that attempt never started, and ends without a stall.
RELEASED = r"item (\d+) released on shutdown \(attempt (\d+)\)"

# The listening connection is the one whose last statement was its LISTEN (or the
# liveness ping it sends every 30 s, longer than these tests); every other session
# of a worker belongs to its pool.
_TERMINATE_LISTENER = """
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname = current_database() AND application_name = $1 AND query ILIKE 'LISTEN%'
"""
_TERMINATE_POOL = """
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname = current_database() AND application_name = $1 AND query NOT ILIKE 'LISTEN%'
"""
_LISTENING = """
SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND application_name = $1 AND query ILIKE 'LISTEN%'
"""


@pytest.fixture
async def connection(fault_database: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(fault_database)
    try:
        yield connection
    finally:
        await connection.close()


async def listening(connection: asyncpg.Connection, worker: FleetWorker) -> None:
    async def has_listener() -> bool:
        sessions: int = await connection.fetchval(_LISTENING, worker.worker_id)
        return sessions == 1

    await eventually(
        has_listener, within=20, what=f"{worker.worker_id} listening", context=worker.output
    )


@pytest.mark.parametrize("lanes", LANES, indirect=True, ids=lambda n: f"lanes{n}")
async def test_workers_whose_connections_are_terminated_under_load_lose_nothing(
    fault_database: str,
    fleet: Fleet,
    connection: asyncpg.Connection,
    size: FaultSize,
    lanes: int,
) -> None:
    workers = [fleet.start() for _ in range(size.workers)]
    # Idle first, so that every worker has opened its listening connection.
    for worker in workers:
        await listening(connection, worker)
    enqueued = set(
        await enqueue_chores(fault_database, [Chore(naps=(0.05,), jitter=0.3)] * size.items)
    )
    started = time.monotonic()
    terminated = {"pool": 0, "listener": 0}
    listeners_cut: set[str] = set()
    while await unfinished_count(connection) > 0:
        assert time.monotonic() - started < 60 + size.items * 0.2, fleet.outputs()
        await asyncio.sleep(random.uniform(0.3, 0.8))
        worker = random.choice(workers)
        if random.random() < 0.25:
            cut = await connection.fetchval(_TERMINATE_LISTENER, worker.worker_id)
            terminated["listener"] += cut
            if cut:
                listeners_cut.add(worker.worker_id)
        else:
            terminated["pool"] += await connection.fetchval(_TERMINATE_POOL, worker.worker_id)
    elapsed = time.monotonic() - started
    for worker in workers:
        if worker.worker_id in listeners_cut:
            await worker.wait_for_line(LISTENING_AGAIN)
    exits = await fleet.stop_all()

    released = {
        (int(match[1]), int(match[2]))
        for worker in workers
        for match in worker.lines_matching(RELEASED)
    }
    result = await audit(
        fault_database, enqueued=enqueued, max_stalls=MAX_STALLS, released=released
    )
    report_figures(
        "terminated_connections",
        lanes=lanes,
        items=len(enqueued),
        workers=size.workers,
        pool_sessions_terminated=terminated["pool"],
        listeners_terminated=terminated["listener"],
        stalls=result.total_stalls,
        lost=result.lost(enqueued),
        stale_writes=len(result.stale_writes),
        seconds=f"{elapsed:.1f}",
    )
    assert result.problems == [], "\n".join(result.problems[:20])
    # Only an item held for a next turn was released: none whose handler had started.
    assert released.isdisjoint(result.runs), sorted(released & set(result.runs))
    assert terminated["pool"] >= 1
    assert set(exits.values()) == {0}, fleet.outputs()


async def test_an_idle_worker_whose_listening_connection_is_terminated_still_hears_of_new_work(
    fault_database: str, fleet: Fleet, connection: asyncpg.Connection
) -> None:
    # A poll interval far longer than the test: only a notification can wake it in time.
    worker = fleet.start(WORKQUEUE_POLL_INTERVAL="120")
    await listening(connection, worker)

    assert await connection.fetchval(_TERMINATE_LISTENER, worker.worker_id) == 1
    await worker.wait_for_output("lost the connection listening for work")
    await worker.wait_for_line(LISTENING_AGAIN)
    await listening(connection, worker)
    # The reconnection wakes the worker for one cycle; let it settle back into its wait.
    await asyncio.sleep(1.0)
    enqueued_at = time.monotonic()
    (item_id,) = await enqueue_chores(fault_database, [Chore(naps=(0.0,))])

    async def done() -> bool:
        return (await item_row(connection, item_id)).status == "succeeded"

    picked_up_after = await eventually(
        done, within=10, what="the new item done", context=worker.output
    )
    report_figures(
        "terminated_listener",
        listeners_terminated=1,
        picked_up_after=f"{time.monotonic() - enqueued_at:.2f}s",
        poll_interval="120s",
    )
    assert picked_up_after < 10
    assert (await fleet.stop_all()) == {worker.worker_id: 0}
