"""``workqueue show ID``: one item in full, with its result and every failure; 1 for no item."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

from worker_world import WorkerWorld

from workqueue.domain import RunOutcome, TokenCleanup, WorkItem

LEASE = timedelta(seconds=60)


async def retried_then_succeeded(world: WorkerWorld) -> WorkItem:
    """An item that failed once, snoozed once, then succeeded with a result."""
    await world.queue.enqueue(TokenCleanup(), dedup_key="nightly", priority=3)
    outcomes = [
        RunOutcome.retried("OSError: the partner is down", world.clock.now()),
        RunOutcome.snoozed(world.clock.now()),
        RunOutcome.succeeded({"done": 2}, {"deleted": 40}),
    ]
    for outcome in outcomes:
        claimed = await world.store.claim(["token_cleanup"], worker_id="w-1", lease_duration=LEASE)
        assert claimed is not None
        await world.clock.advance(2)
        await world.store.finish(claimed.lease, outcome)
    item = await world.store.get(claimed.id)
    assert item is not None
    return item


def test_the_text_shows_every_field_the_result_and_each_failure(world: WorkerWorld) -> None:
    item = asyncio.run(retried_then_succeeded(world))

    run = world.cli("show", str(item.id))

    assert run.status == 0
    assert run.out == (
        f"item {item.id}: token_cleanup, succeeded\n"
        "  attempt: 3\n"
        "  stalls: 0\n"
        "  snoozes: 1\n"
        "  priority: 3\n"
        "  dedup key: nightly\n"
        "  worker: w-1\n"
        "  enqueued: 2026-01-01T00:00:00Z\n"
        "  runs from: 2026-01-01T00:00:00Z\n"
        "  started: 2026-01-01T00:00:04Z\n"
        "  heartbeat: 2026-01-01T00:00:04Z\n"
        "  finished: 2026-01-01T00:00:06Z\n"
        "  payload: {}\n"
        '  progress: {"done":2}\n'
        '  result: {"deleted":40}\n'
        "  failures (1):\n"
        "    attempt 1 at 2026-01-01T00:00:02Z: OSError: the partner is down\n"
    )


def test_json_has_every_column(world: WorkerWorld) -> None:
    item = asyncio.run(retried_then_succeeded(world))

    run = world.cli("show", str(item.id), "--json")

    assert run.status == 0
    document = json.loads(run.out)
    assert document["result"] == {"deleted": 40}
    assert document["failures"] == [
        {"attempt": 1, "at": "2026-01-01T00:00:02Z", "error": "OSError: the partner is down"}
    ]
    assert (document["snoozes"], document["status"], document["lease_expires_at"]) == (
        1,
        "succeeded",
        None,
    )


def test_an_id_with_no_item_says_so_and_exits_one(world: WorkerWorld) -> None:
    run = world.cli("show", "404")

    assert (run.status, run.out) == (1, "no item 404\n")
