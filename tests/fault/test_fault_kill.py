"""Workers killed at random while they drain the queue: nothing is lost, nothing stays stuck.

A driver SIGKILLs a random worker every one to two seconds and starts a new one in
its place. A quarter of the attempts fail on purpose, so the chore kind's retry
policy is at work meanwhile: every item ends succeeded or failed within its
attempts plus its stalls. Whatever the killed worker held stays ``running`` under a lease nobody
renews; lease recovery (run by the surviving workers) must put it back within
the lease plus one poll interval, and the item must then be done by someone else.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fault_database import audit, enqueue_chores, unfinished_count
from fault_figures import FaultSize, report_figures
from fault_fleet import FAULT_SETTINGS, LANES, Fleet, eventually
from fault_kills import kill_until_drained, watching
from fault_kinds import Chore

from workqueue.adapters.testing.postgres.pgbouncer import PgBouncer

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

LEASE = float(FAULT_SETTINGS["WORKQUEUE_LEASE_DURATION"])
POLL = float(FAULT_SETTINGS["WORKQUEUE_POLL_INTERVAL"])
MAX_STALLS = int(FAULT_SETTINGS["WORKQUEUE_MAX_STALLS"])
# Recovery runs between items, so the bound is lease + poll + the longest chore a
# recovering worker may be busy with, + slack for this watcher's polling and for
# process scheduling on a loaded machine.
RECOVERY_SLACK = 0.75


@pytest.mark.parametrize("lanes", LANES, indirect=True, ids=lambda n: f"lanes{n}")
async def test_killed_workers_lose_nothing_and_their_items_are_recovered_within_lease_and_poll(
    fault_database: str, fleet: Fleet, size: FaultSize, lanes: int
) -> None:
    await kill_workers_while_they_drain(fault_database, fleet, size, figures="kill", lanes=lanes)


async def test_killed_workers_of_lanes_through_pgbouncer_lose_nothing_and_are_recovered(
    fault_database: str, pgbouncer: PgBouncer, tmp_path: Path, size: FaultSize
) -> None:
    lanes = LANES[-1]
    fleet = Fleet(
        pgbouncer.url_for(fault_database),
        tmp_path,
        WORKQUEUE_CONCURRENCY=str(lanes),
        WORKQUEUE_TRANSACTION_POOLING="true",
    )
    try:
        await kill_workers_while_they_drain(
            fault_database, fleet, size, figures="kill_through_pgbouncer", lanes=lanes, pooled=True
        )
    finally:
        fleet.close()
    assert "polling" in fleet.workers[0].output()


async def kill_workers_while_they_drain(
    fault_database: str,
    fleet: Fleet,
    size: FaultSize,
    *,
    figures: str,
    lanes: int,
    pooled: bool = False,
) -> None:
    """SIGKILL a random worker every 1-2 s, replacing it, until the queue is drained.

    ``fault_database`` is a direct URL (for the watch); ``fleet`` may work through
    a pooler (``pooled``), where a dead worker's server sessions live on.
    """
    nap, jitter = 0.05, 0.2
    bound = LEASE + POLL + nap + jitter + RECOVERY_SLACK
    chore = Chore(naps=(nap,), jitter=jitter, fail_rate=0.25)
    enqueued = set(await enqueue_chores(fault_database, [chore] * size.items))
    deadline = 60 + size.items * 0.15
    started = time.monotonic()
    for worker in [fleet.start() for _ in range(size.workers)]:
        await worker.wait_for_output("worker started", within=60)

    async with watching(fault_database, pooled=pooled) as (watch, connection):
        kills = await kill_until_drained(
            fleet, watch, connection, started=started, deadline=deadline
        )

        await watch.until_settled(within=LEASE + POLL + 10)
        elapsed = time.monotonic() - started

    exits = await fleet.stop_all()
    result = await audit(fault_database, enqueued=enqueued, max_stalls=MAX_STALLS)
    report_figures(
        figures,
        lanes=lanes,
        items=len(enqueued),
        workers=size.workers,
        kills=kills,
        killed_items=len(watch.recoveries),
        stalls=result.total_stalls,
        stalled_out=len(result.stalled_out),
        retries=result.retries,
        failed_for_good=len(result.failed_for_good),
        lost=result.lost(enqueued),
        stale_writes=len(result.stale_writes),
        longest_recovery=f"{watch.longest:.2f}s",
        recovery_bound=f"{bound:.2f}s",
        seconds=f"{elapsed:.1f}",
    )
    assert result.problems == [], "\n".join(result.problems[:20])
    assert result.lost(enqueued) == 0
    assert result.retries > 0, "no attempt failed: the retry policy was never at work"
    assert set(exits.values()) == {0}, fleet.outputs()
    assert kills >= 1
    assert watch.longest <= bound, watch.recoveries
    assert result.total_stalls == len(watch.recoveries)


async def test_a_killed_worker_s_item_is_recovered_while_the_others_are_still_busy(
    fault_database: str, fleet: Fleet
) -> None:
    # No replacement starts, so no fresh worker's first cycle recovers the item: the
    # busy survivors must, although the queue never runs dry for them meanwhile.
    nap = 0.5
    enqueued = set(await enqueue_chores(fault_database, [Chore(naps=(nap,))] * 80))
    for _ in range(3):
        fleet.start()

    async with watching(fault_database) as (watch, connection):

        async def busy() -> bool:
            running: int = await connection.fetchval(
                "SELECT count(*) FROM work_items WHERE status = 'running'"
            )
            return running == 3

        await eventually(busy, within=20, what="three busy workers", context=fleet.outputs)
        # The worker that started its item last is the surest to be mid-item.
        victim_id = await connection.fetchval(
            "SELECT worker_id FROM work_items WHERE status = 'running'"
            " ORDER BY started_at DESC LIMIT 1"
        )
        victim = next(worker for worker in fleet.workers if worker.worker_id == victim_id)
        victim.kill()
        await watch.killed(connection, victim.worker_id, time.monotonic())

        await watch.until_settled(within=30)
        left = await unfinished_count(connection)

    bound = LEASE + POLL + nap + RECOVERY_SLACK
    report_figures(
        "kill_while_busy",
        items=len(enqueued),
        kills=1,
        killed_items=len(watch.recoveries),
        longest_recovery=f"{watch.longest:.2f}s",
        recovery_bound=f"{bound:.2f}s",
        unfinished_at_recovery=left,
    )
    assert len(watch.recoveries) == 1, "the victim held no item when it was killed"
    assert left > 1, "the queue ran dry first; the test needs more work"
    assert watch.longest <= bound
