"""``workqueue show ID`` shows every column: the whole JSON document, and the text
fields of running, cancel-requested and failed items; fields an item lacks are left out."""

from __future__ import annotations

import asyncio
import io
import json
from datetime import timedelta

from worker_world import WorkerWorld

from workqueue.domain import RunOutcome, TokenCleanup, WorkItem
from workqueue.entrypoints.commands.show import show_item

LEASE = timedelta(seconds=60)


async def claimed_item(world: WorkerWorld) -> WorkItem:
    await world.queue.enqueue(TokenCleanup())
    claimed = await world.store.claim(["token_cleanup"], worker_id="w-7", lease_duration=LEASE)
    assert claimed is not None
    return claimed


async def retried_then_succeeded(world: WorkerWorld) -> WorkItem:
    await world.queue.enqueue(TokenCleanup(), dedup_key="nightly", priority=3)
    for outcome in (
        RunOutcome.retried("OSError: the partner is down", world.clock.now()),
        RunOutcome.succeeded({"done": 2}, {"deleted": 40}),
    ):
        claimed = await world.store.claim(["token_cleanup"], worker_id="w-1", lease_duration=LEASE)
        assert claimed is not None
        await world.clock.advance(2)
        await world.store.finish(claimed.lease, outcome)
    item = await world.store.get(claimed.id)
    assert item is not None
    return item


def test_the_json_document_holds_every_column(world: WorkerWorld) -> None:
    item = asyncio.run(retried_then_succeeded(world))

    run = world.cli("show", str(item.id), "--json")

    assert run.status == 0
    assert json.loads(run.out) == {
        "id": item.id,
        "kind": "token_cleanup",
        "status": "succeeded",
        "attempt": 2,
        "stalls": 0,
        "snoozes": 0,
        "priority": 3,
        "dedup_key": "nightly",
        "worker_id": "w-1",
        "enqueued_at": "2026-01-01T00:00:00Z",
        "run_at": "2026-01-01T00:00:00Z",
        "started_at": "2026-01-01T00:00:02Z",
        "heartbeat_at": "2026-01-01T00:00:02Z",
        "lease_expires_at": None,
        "finished_at": "2026-01-01T00:00:04Z",
        "payload": {},
        "progress": {"done": 2},
        "result": {"deleted": 40},
        "error": None,
        "cancel_reason": None,
        "requeued_as": None,
        "failures": [
            {"attempt": 1, "at": "2026-01-01T00:00:02Z", "error": "OSError: the partner is down"}
        ],
    }


def test_a_running_item_shows_its_lease_and_a_requested_cancel_and_no_progress_yet(
    world: WorkerWorld,
) -> None:
    item = asyncio.run(claimed_item(world))
    asyncio.run(world.store.cancel(item.id, reason="not needed"))

    run = world.cli("show", str(item.id))

    assert run.out == (
        f"item {item.id}: token_cleanup, running\n"
        "  attempt: 1\n"
        "  stalls: 0\n"
        "  snoozes: 0\n"
        "  priority: 0\n"
        "  worker: w-7\n"
        "  enqueued: 2026-01-01T00:00:00Z\n"
        "  runs from: 2026-01-01T00:00:00Z\n"
        "  started: 2026-01-01T00:00:00Z\n"
        "  heartbeat: 2026-01-01T00:00:00Z\n"
        "  lease expires: 2026-01-01T00:01:00Z\n"
        "  payload: {}\n"
        "  cancel requested: not needed\n"
    )


def test_a_failed_item_shows_its_error(world: WorkerWorld) -> None:
    async def failed() -> int:
        item = await claimed_item(world)
        await world.store.finish(item.lease, RunOutcome.failed("ValueError: no", None))
        return item.id

    item_id = asyncio.run(failed())

    run = world.cli("show", str(item_id))

    assert "  error: ValueError: no\n" in run.out
    assert "progress" not in run.out
    assert "result" not in run.out


def test_show_prints_text_unless_asked_for_json(world: WorkerWorld) -> None:
    item = asyncio.run(claimed_item(world))
    out = io.StringIO()

    asyncio.run(show_item(world.container(), out, item_id=item.id))

    assert out.getvalue().startswith(f"item {item.id}: token_cleanup, running\n")


def test_the_json_document_of_a_running_item_has_its_lease(world: WorkerWorld) -> None:
    item = asyncio.run(claimed_item(world))

    document = json.loads(world.cli("show", str(item.id), "--json").out)

    assert (document["status"], document["worker_id"], document["lease_expires_at"]) == (
        "running",
        "w-7",
        "2026-01-01T00:01:00Z",
    )


def test_a_failed_item_a_bulk_requeue_took_shows_the_item_that_replaced_it(
    world: WorkerWorld,
) -> None:
    async def failed() -> int:
        item = await claimed_item(world)
        await world.store.finish(item.lease, RunOutcome.failed("ValueError: no", None))
        return item.id

    item_id = asyncio.run(failed())
    assert world.cli("requeue", "--kind", "token_cleanup", "--failed", "--yes").status == 0
    replaced = world.state.items[item_id].requeued_as
    assert replaced is not None

    text = world.cli("show", str(item_id)).out
    document = json.loads(world.cli("show", str(item_id), "--json").out)

    assert f"  error: ValueError: no\n  requeued as item: {replaced}\n  failures (1):" in text
    assert document["requeued_as"] == replaced
