"""A worker that stops running mid-item, and comes back after its lease was given away.

SIGSTOP freezes a worker the way a VM pause or a long GC would; a handler that
blocks its event loop freezes the heartbeat alone. Either way the lease expires,
another worker reclaims the item, and the frozen one wakes up still believing in
its attempt. The fence must hold: nothing it writes changes the row, and the
item's outcome is the new attempt's.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import AsyncIterator

import asyncpg
import pytest
from fault_database import audit, enqueue_chores, item_row, run_of
from fault_figures import report_figures
from fault_fleet import FAULT_SETTINGS, LANES, Fleet, FleetWorker, eventually
from fault_kinds import Chore

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

LEASE = float(FAULT_SETTINGS["WORKQUEUE_LEASE_DURATION"])
POLL = float(FAULT_SETTINGS["WORKQUEUE_POLL_INTERVAL"])
MAX_STALLS = int(FAULT_SETTINGS["WORKQUEUE_MAX_STALLS"])
RECLAIM_WITHIN = LEASE + POLL + 5


@pytest.fixture
async def connection(fault_database: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(fault_database)
    try:
        yield connection
    finally:
        await connection.close()


async def started_by(
    connection: asyncpg.Connection, item_id: int, attempt: int, worker: FleetWorker
) -> float:
    """Wait until ``worker``'s handler has started ``attempt`` of the item; how long it took."""

    async def started() -> bool:
        run = await run_of(connection, item_id, attempt)
        return run is not None and run["worker"] == worker.worker_id

    return await eventually(
        started,
        within=RECLAIM_WITHIN + 10,
        what=f"attempt {attempt} of item {item_id} started by {worker.worker_id}",
        context=worker.output,
    )


async def two_workers_and_one_item(
    url: str, fleet: Fleet, connection: asyncpg.Connection, chore: Chore
) -> tuple[int, FleetWorker, FleetWorker]:
    """Start two workers, then enqueue ``chore``: the item, the one that took it, the other.

    Both run before the item exists, so the rescuer is polling by the time the lease
    runs out, however slowly a loaded machine starts processes.
    """
    workers = [fleet.start(), fleet.start()]
    for worker in workers:
        await worker.wait_for_output("worker started")
    (item_id,) = await enqueue_chores(url, [chore])

    async def taken() -> bool:
        return await run_of(connection, item_id, 1) is not None

    await eventually(taken, within=20, what=f"item {item_id} started", context=fleet.outputs)
    run = await run_of(connection, item_id, 1)
    assert run is not None
    first, other = workers if workers[0].worker_id == run["worker"] else workers[::-1]
    return item_id, first, other


async def finished(connection: asyncpg.Connection, item_id: int, fleet: Fleet) -> None:
    async def done() -> bool:
        return (await item_row(connection, item_id)).status in ("succeeded", "failed")

    await eventually(done, within=30, what=f"outcome of item {item_id}", context=fleet.outputs)


@pytest.mark.parametrize("lanes", LANES, indirect=True, ids=lambda n: f"lanes{n}")
async def test_a_paused_worker_wakes_to_a_lost_lease_and_the_new_attempt_decides_the_outcome(
    fault_database: str, fleet: Fleet, connection: asyncpg.Connection, lanes: int
) -> None:
    # The first attempt would nap far longer than the pause; the second takes 2 s, so
    # the paused worker wakes while the rescuer still holds the item.
    item_id, paused, rescuer = await two_workers_and_one_item(
        fault_database, fleet, connection, Chore(naps=(60.0, 2.0))
    )

    paused.send(signal.SIGSTOP)
    paused_at = time.monotonic()
    await started_by(connection, item_id, 2, rescuer)
    reclaimed_after = time.monotonic() - paused_at
    paused.send(signal.SIGCONT)
    await paused.wait_for_output("lost its lease")
    await finished(connection, item_id, fleet)

    # The paused worker carries on: with the rescuer gone, it does the next item.
    rescuer.send(signal.SIGTERM)
    assert await rescuer.exit_status() == 0, rescuer.output()
    (next_id,) = await enqueue_chores(fault_database, [Chore(naps=(0.1,))])
    await finished(connection, next_id, fleet)
    exits = await fleet.stop_all()

    item, later = await item_row(connection, item_id), await item_row(connection, next_id)
    first_run = await run_of(connection, item_id, 1)
    result = await audit(fault_database, enqueued={item_id, next_id}, max_stalls=MAX_STALLS)
    report_figures(
        "pause",
        lanes=lanes,
        items=2,
        pauses=1,
        reclaimed_after=f"{reclaimed_after:.2f}s",
        lost=result.lost({item_id, next_id}),
        stale_writes=len(result.stale_writes),
    )
    assert result.problems == [], "\n".join(result.problems)
    assert (item.status, item.attempt, item.stalls) == ("succeeded", 2, 1)
    assert item.worker_id == rescuer.worker_id
    assert item.progress is not None
    assert json.loads(item.progress) == {"worker": rescuer.worker_id, "attempt": 2}
    assert first_run is not None
    assert first_run["ended_at"] is None, "the paused attempt's handler was not cancelled"
    assert (later.status, later.worker_id) == ("succeeded", paused.worker_id)
    assert set(exits.values()) == {0}
    assert reclaimed_after <= RECLAIM_WITHIN


async def test_a_handler_that_blocks_its_loop_past_the_lease_completes_late_and_changes_no_row(
    fault_database: str, fleet: Fleet, connection: asyncpg.Connection
) -> None:
    # The first attempt blocks its worker's event loop for 6 s: no heartbeat leaves
    # meanwhile. Its handler then returns normally, and the worker sends a complete
    # for an attempt that is no longer the item's.
    item_id, stalled, rescuer = await two_workers_and_one_item(
        fault_database, fleet, connection, Chore(naps=(6.0, 3.0), hog_first=True)
    )
    await started_by(connection, item_id, 2, rescuer)
    await stalled.wait_for_output("completing it found the lease no longer held")
    await finished(connection, item_id, fleet)
    exits = await fleet.stop_all()

    item = await item_row(connection, item_id)
    late_run = await run_of(connection, item_id, 1)
    result = await audit(fault_database, enqueued={item_id}, max_stalls=MAX_STALLS)
    report_figures(
        "blocked_loop",
        items=1,
        pauses=1,
        lost=result.lost({item_id}),
        stale_writes=len(result.stale_writes),
    )
    assert result.problems == [], "\n".join(result.problems)
    assert late_run is not None
    assert (item.status, item.attempt, item.stalls) == ("succeeded", 2, 1)
    assert item.worker_id == rescuer.worker_id
    assert set(exits.values()) == {0}
