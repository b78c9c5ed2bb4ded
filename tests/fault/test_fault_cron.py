"""A cron schedule run by a fleet that is killed and restarted: one item per fire time,
none again for a fire time already run, and one for the fire times missed meanwhile."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import asyncpg
import pytest
from fault_database import audit, unfinished_count
from fault_figures import report_figures
from fault_fleet import FAULT_SETTINGS, Fleet, eventually

from workqueue.domain import PERIODIC_DEDUP_KEY

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

MAX_STALLS = int(FAULT_SETTINGS["WORKQUEUE_MAX_STALLS"])
EVERY_SECOND = "* * * * * *"
WORKERS = 3
DOWN = 2.5  # seconds with no worker: two or three fire times pass unrun


async def fire_times(connection: asyncpg.Connection) -> list[tuple[int, datetime]]:
    """Each item's id and the fire time its dedup key names, in id order."""
    rows = await connection.fetch("SELECT id, dedup_key FROM work_items ORDER BY id")
    prefix = f"{PERIODIC_DEDUP_KEY}@"
    return [
        (row["id"], datetime.fromisoformat(row["dedup_key"].removeprefix(prefix))) for row in rows
    ]


async def test_a_fleet_restarted_across_fire_times_runs_each_once_and_the_missed_ones_once(
    fault_database: str, fleet: Fleet
) -> None:
    connection = await asyncpg.connect(fault_database)
    try:

        async def items_at_least(count: int) -> bool:
            return len(await fire_times(connection)) >= count

        first = [fleet.start(FAULT_CRON=EVERY_SECOND) for _ in range(WORKERS)]
        await eventually(
            lambda: items_at_least(3), within=60, what="three fire times run", context=fleet.outputs
        )
        for worker in first:
            worker.kill()
        before = await fire_times(connection)
        down_at = time.time()
        await asyncio.sleep(DOWN)
        up_at = time.time()

        for _ in range(WORKERS):
            fleet.start(FAULT_CRON=EVERY_SECOND)
        await eventually(
            lambda: items_at_least(len(before) + 3),
            within=60,
            what="three more fire times run",
            context=fleet.outputs,
        )
        exits = await fleet.stop_all()
        after = (await fire_times(connection))[len(before) :]

        # What the stopped workers released, a worker with no schedule finishes.
        fleet.start()

        async def drained() -> bool:
            return await unfinished_count(connection) == 0

        await eventually(drained, within=30, what="every item finished", context=fleet.outputs)
        exits |= await fleet.stop_all()
    finally:
        await connection.close()

    result = await audit(
        fault_database,
        enqueued={item_id for item_id, _ in before + after},
        max_stalls=MAX_STALLS,
        releases_allowed=True,
    )
    times = [fire for _, fire in before + after]
    missed = [fire for _, fire in after if fire.timestamp() < up_at]
    report_figures(
        "cron_restart",
        workers=WORKERS,
        before_kill=len(before),
        after_restart=len(after),
        down=f"{DOWN:.1f}s",
        first_after_restart=after[0][1].isoformat(),
        last_before_kill=before[-1][1].isoformat(),
        missed_run=len(missed),
    )
    assert result.problems == [], "\n".join(result.problems[:20])
    assert set(exits.values()) == {0}, fleet.outputs()
    # One item per fire time, in the order of the fire times.
    assert times == sorted(set(times)), times
    # Nothing again for a fire time run before the kill; of those missed while no
    # worker ran, at most one (the newest at the restart).
    assert after[0][1] > before[-1][1]
    assert len(missed) <= 1, (missed, down_at, up_at)
    # Every fire time is one of the calendar's (whole seconds), not a worker's clock.
    assert all(fire.microsecond == 0 for fire in times), times
