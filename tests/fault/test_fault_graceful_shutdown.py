"""SIGTERM to every worker under load: each hands its item back and exits 0; a restart finishes.

A graceful stop is not a fault: the item goes back to ``queued`` with its attempt
counted and no stall, so the next worker starts it afresh without the stall limit
coming any closer.
"""

from __future__ import annotations

import asyncio
import signal
import time

import asyncpg
import pytest
from fault_database import audit, enqueue_chores, unfinished_count
from fault_figures import FaultSize, report_figures
from fault_fleet import FAULT_SETTINGS, LANES, Fleet, eventually
from fault_kinds import Chore

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

MAX_STALLS = int(FAULT_SETTINGS["WORKQUEUE_MAX_STALLS"])


@pytest.mark.parametrize("lanes", LANES, indirect=True, ids=lambda n: f"lanes{n}")
async def test_sigterm_under_load_releases_every_item_without_a_stall_and_a_restart_finishes(
    fault_database: str, fleet: Fleet, size: FaultSize, lanes: int
) -> None:
    # Long chores, so that every worker's every lane is mid-item when the signal comes.
    items = max(size.workers * lanes * 4, size.items // 20)
    enqueued = set(await enqueue_chores(fault_database, [Chore(naps=(1.0,), jitter=1.0)] * items))
    first_shift = [fleet.start() for _ in range(size.workers)]
    connection = await asyncpg.connect(fault_database)
    try:

        async def all_busy() -> bool:
            running: int = await connection.fetchval(
                "SELECT count(*) FROM work_items WHERE status = 'running'"
            )
            return running == size.workers * lanes

        await eventually(all_busy, within=30, what="every lane busy", context=fleet.outputs)
        # A worker still importing has no signal handler yet (see Fleet.stop_all).
        for worker in first_shift:
            await worker.wait_for_output("worker started")
        held = {
            row["id"]: (row["attempt"], row["worker_id"])
            for row in await connection.fetch(
                "SELECT id, attempt, worker_id FROM work_items WHERE status = 'running'"
            )
        }
        signalled = time.monotonic()
        for worker in first_shift:
            worker.send(signal.SIGTERM)
        exits = [await worker.exit_status(within=15) for worker in first_shift]
        stop_seconds = time.monotonic() - signalled
        after_stop = {
            row["id"]: (row["status"], row["attempt"], row["stalls"], row["worker_id"])
            for row in await connection.fetch(
                "SELECT id, status, attempt, stalls, worker_id FROM work_items"
                " WHERE id = ANY($1::bigint[])",
                list(held),
            )
        }
        running_after_stop: int = await connection.fetchval(
            "SELECT count(*) FROM work_items WHERE status = 'running'"
        )
        released = [
            item_id
            for item_id, (attempt, _) in held.items()
            if after_stop[item_id] == ("queued", attempt, 0, None)
        ]

        second_shift = [fleet.start() for _ in range(size.workers)]

        async def drained() -> bool:
            return await unfinished_count(connection) == 0

        await eventually(drained, within=60 + items * 1.5, what="a drained queue")
        await asyncio.gather(*(worker.wait_for_output("worker started") for worker in second_shift))
    finally:
        await connection.close()

    final_exits = await fleet.stop_all()
    result = await audit(
        fault_database, enqueued=enqueued, max_stalls=MAX_STALLS, releases_allowed=True
    )
    report_figures(
        "graceful_shutdown",
        lanes=lanes,
        items=items,
        workers=size.workers,
        sigterms=len(first_shift),
        released=len(released),
        stalls=result.total_stalls,
        lost=result.lost(enqueued),
        stale_writes=len(result.stale_writes),
        all_stopped_after=f"{stop_seconds:.2f}s",
    )
    assert exits == [0] * len(first_shift), fleet.outputs()
    assert running_after_stop == 0
    # An item held at the signal is either handed back unchanged but for its worker,
    # or was finished in the instant before the signal landed.
    assert all(item_id in released or after_stop[item_id][0] == "succeeded" for item_id in held), (
        after_stop
    )
    assert len(released) >= 1
    outputs = {worker.worker_id: worker.output() for worker in first_shift}
    for item_id in released:
        _, holder = held[item_id]
        assert f"item {item_id} released on shutdown" in outputs[holder], outputs[holder]
    assert result.problems == [], "\n".join(result.problems[:20])
    assert result.total_stalls == 0
    assert {item.attempt for item in result.items if item.id in released} == {2}
    assert set(final_exits.values()) == {0}
