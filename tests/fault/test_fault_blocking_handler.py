"""A handler that blocks its event loop harms only its own item, while workers of four
lanes are killed at random (docs/adr/0036, issue "one blocking handler harms only itself").

A few poisoned chores block their process's loop for longer than the lease on every
attempt (``time.sleep``); the rest nap politely. A driver SIGKILLs a random worker
every one to two seconds and starts a new one in its place. Each poisoned item's
lease runs out on every attempt, so it stalls until it fails as stalled; its
lane-mates' leases are renewed by the loop watchdog meanwhile, so no other item
stalls but for the kills (nor fails as stalled but for them), and no handler finishes
twice but where a kill struck between its end and the write of its outcome.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest
from fault_database import audit, enqueue_chores, write_trails
from fault_figures import FaultSize, report_figures
from fault_fleet import FAULT_SETTINGS, Fleet
from fault_kills import kill_until_drained, watching
from fault_kinds import Chore

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

LEASE = float(FAULT_SETTINGS["WORKQUEUE_LEASE_DURATION"])
POLL = float(FAULT_SETTINGS["WORKQUEUE_POLL_INTERVAL"])
MAX_STALLS = int(FAULT_SETTINGS["WORKQUEUE_MAX_STALLS"])
LANES = 4
POISON_EVERY = 100
"""One chore in this many is poisoned."""
POISON_NAP = LEASE * 2
"""How long a poisoned chore blocks its loop, each attempt: two leases, so that its lease
has run out and been recovered by another worker before it can complete."""


async def test_a_handler_blocking_its_loop_stalls_out_alone_while_workers_are_killed(
    fault_database: str, tmp_path: Path, size: FaultSize
) -> None:
    polite = Chore(naps=(0.05,), jitter=0.2)
    poison = Chore(naps=(POISON_NAP,), hog_every=True)
    chores = [
        poison if n % POISON_EVERY == POISON_EVERY // 2 else polite for n in range(size.items)
    ]
    ids = await enqueue_chores(fault_database, chores)
    enqueued = set(ids)
    poisoned = {item_id for item_id, chore in zip(ids, chores, strict=True) if chore is poison}
    fleet = Fleet(fault_database, tmp_path, WORKQUEUE_CONCURRENCY=str(LANES))
    started = time.monotonic()
    deadline = 120 + size.items * 0.15
    try:
        for worker in [fleet.start() for _ in range(size.workers)]:
            await worker.wait_for_output("worker started", within=60)
        async with watching(fault_database) as (watch, connection):
            kills = await kill_until_drained(
                fleet, watch, connection, started=started, deadline=deadline
            )

            await watch.until_settled(within=LEASE + POLL + 10)
        exits = await fleet.stop_all()
        outputs = fleet.outputs()
    finally:
        fleet.close()
    result = await audit(fault_database, enqueued=enqueued, max_stalls=MAX_STALLS)

    killed = Counter(item_id for item_id, _ in watch.recoveries)
    stalled_out = {item.id for item in result.stalled_out}
    ordinary = [item for item in result.items if item.id not in poisoned]
    stalled_beyond_kills = [item.id for item in ordinary if item.stalls > killed[item.id]]
    # An ordinary item whose workers were killed under it max_stalls + 1 times stalls out
    # by right: the kills alone explain its stalls (stalled_beyond_kills says so).
    killed_out = {item.id for item in ordinary if item.id in stalled_out}
    # A handler that finished in an attempt whose worker was killed before the outcome
    # landed ran again by right (at least once): only the other finished runs count.
    ended = Counter(
        item_id
        for (item_id, attempt), run in result.runs.items()
        if item_id not in poisoned
        and run["ended_at"] is not None
        and not run["failed"]
        and (item_id, attempt) not in watch.recoveries
    )
    ended_twice = sorted(item_id for item_id, count in ended.items() if count > 1)
    report_figures(
        "blocking_handler",
        lanes=LANES,
        items=len(enqueued),
        poisoned=len(poisoned),
        workers=size.workers,
        kills=kills,
        killed_items=len(watch.recoveries),
        stalled_out=len(stalled_out),
        killed_out=len(killed_out),
        stalled_beyond_kills=len(stalled_beyond_kills),
        ended_twice=len(ended_twice),
        lost=result.lost(enqueued),
        stale_writes=len(result.stale_writes),
        seconds=f"{time.monotonic() - started:.1f}",
    )
    assert result.problems == [], "\n".join(result.problems[:20])
    assert result.lost(enqueued) == 0
    assert stalled_out - killed_out == poisoned, (sorted(stalled_out), sorted(poisoned))
    assert stalled_beyond_kills == [], await _stalls_explained(
        fault_database, stalled_beyond_kills, killed, watch.kills, fleet
    )
    assert {item.status for item in ordinary if item.id not in killed_out} == {"succeeded"}
    assert ended_twice == []
    assert "the event loop has been blocked for" in outputs
    assert set(exits.values()) == {0}, outputs


async def _stalls_explained(
    url: str, items: list[int], killed: Counter[int], kills: list[str], fleet: Fleet
) -> str:
    """What an ordinary item's stall beyond the kills left behind: its writes and runs,
    the kills, and every worker's lines naming it or the watchdog."""
    words = [f"item {item_id} " for item_id in items] + ["workqueue.watchdog"]
    return "\n".join(
        [
            f"stalled beyond the kills: {items}; recoveries after kills: {dict(killed)}",
            await write_trails(url, items),
            "--- kills:",
            *kills,
            "--- worker lines:",
            fleet.lines_naming(words),
        ]
    )
