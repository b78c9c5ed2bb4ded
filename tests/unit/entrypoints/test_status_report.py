"""``workqueue status`` as an operator and a script read it, character for character."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest

from work_items import T0, running_item
from workqueue.adapters.memory import (
    InMemoryState,
    InMemoryWorkMonitor,
    InMemoryWorkQueue,
    InMemoryWorkStore,
)
from workqueue.adapters.testing import FakeClock
from workqueue.domain import (
    CapSource,
    RunOutcome,
    TokenCleanup,
    WorkItem,
    WorkItemRetention,
    WorkStatus,
)
from workqueue.entrypoints.status_report import (
    StatusReport,
    gather_status,
    render_json,
    render_text,
)

LEASE = timedelta(seconds=60)
# The kinds this report is given: its input, not the production list (rendering
# tests need a fixed one; tests of the production kinds derive them from WorkKind).
KINDS = ["token_cleanup", "work_item_retention"]
DATABASE = "postgresql://wq:***@db/queue"


class Queue:
    def __init__(self) -> None:
        self.state, self.clock = InMemoryState(), FakeClock()
        self.queue = InMemoryWorkQueue(self.state, self.clock)
        self.store = InMemoryWorkStore(self.state, self.clock)
        self.monitor = InMemoryWorkMonitor(self.state)

    async def fail_one(self, error: str) -> None:
        await self.queue.enqueue(TokenCleanup())
        claimed = await self.store.claim(["token_cleanup"], worker_id="w-old", lease_duration=LEASE)
        assert claimed is not None
        await self.store.finish(claimed.lease, RunOutcome.failed(error, None))

    async def report(self, **limits: int) -> StatusReport:
        return await gather_status(
            self.monitor, self.clock, store=self.store, kinds=KINDS, database=DATABASE, **limits
        )


@pytest.fixture
async def busy() -> Queue:
    """One failed, one running (heartbeat 1.56 s ago, progress reported) and one queued item,
    waiting ten minutes at priority 5."""
    world = Queue()
    await world.clock.advance(1)
    await world.fail_one("RuntimeError: disk full\nTraceback...")
    await world.queue.enqueue(WorkItemRetention())
    claimed = await world.store.claim(
        ["work_item_retention"], worker_id="w-1", lease_duration=LEASE
    )
    assert claimed is not None
    await world.clock.advance(3)
    await world.store.heartbeat(
        claimed.lease, progress={"zeta": "é", "deleted": 12}, lease_duration=LEASE
    )
    await world.clock.advance(1.56)
    await world.queue.enqueue(
        TokenCleanup(), dedup_key="periodic", priority=5, delay=timedelta(minutes=10)
    )
    return world


async def paused(world: Queue) -> Queue:
    """``world`` with both kinds paused, one with a reason."""
    await world.store.pause_kind("work_item_retention")
    await world.store.pause_kind("token_cleanup", reason="partner down\nuntil Monday")
    return world


async def capped(world: Queue) -> Queue:
    """``world`` with both kinds capped: the one running by its policy at 2 (its running
    item holding a slot), the other by an operator at 3, a second later."""
    await world.store.cap_kind("work_item_retention", 2, source=CapSource.POLICY)
    await world.clock.advance(1)
    await world.store.cap_kind("token_cleanup", 3)
    return world


async def test_the_text_report_in_full(busy: Queue) -> None:
    await capped(await paused(busy))
    assert render_text(await busy.report()) == (
        "database: postgresql://wq:***@db/queue\n"
        "\n"
        "kind                    queued    running  succeeded     failed  cancelled\n"
        "token_cleanup                1          0          0          1          0\n"
        "work_item_retention          0          1          0          0          0\n"
        "\n"
        "paused kinds: 2\n"
        "  token_cleanup since 2026-01-01T00:00:05Z: partner down\n"
        "  work_item_retention since 2026-01-01T00:00:05Z\n"
        "\n"
        "capped kinds: 2\n"
        "  token_cleanup at most 3 at once, 0 held now, set by an operator at"
        " 2026-01-01T00:00:06Z\n"
        "  work_item_retention at most 2 at once, 1 held now, set by its policy at"
        " 2026-01-01T00:00:05Z\n"
        "\n"
        "queued and running: 2\n"
        "  #2 work_item_retention running attempt=1 stalls=0 worker=w-1 heartbeat=2.6s ago"
        ' progress={"deleted":12,"zeta":"é"}\n'
        "  #3 token_cleanup queued attempt=0 stalls=0 priority=5"
        " waits until 2026-01-01T00:10:05Z\n"
        "\n"
        "failed or cancelled: 1\n"
        "  #1 token_cleanup failed attempt=1 stalls=0 finished=2026-01-01T00:00:01Z"
        " error: RuntimeError: disk full"
    )


async def test_the_json_report_in_full(busy: Queue) -> None:
    await capped(await paused(busy))
    assert (
        render_json(await busy.report())
        == """\
{
  "database": "postgresql://wq:***@db/queue",
  "now": "2026-01-01T00:00:06Z",
  "counts": {
    "token_cleanup": {
      "queued": 1,
      "running": 0,
      "succeeded": 0,
      "failed": 1,
      "cancelled": 0
    },
    "work_item_retention": {
      "queued": 0,
      "running": 1,
      "succeeded": 0,
      "failed": 0,
      "cancelled": 0
    }
  },
  "paused": [
    {
      "kind": "token_cleanup",
      "paused_at": "2026-01-01T00:00:05Z",
      "reason": "partner down\\nuntil Monday"
    },
    {
      "kind": "work_item_retention",
      "paused_at": "2026-01-01T00:00:05Z",
      "reason": null
    }
  ],
  "capped": [
    {
      "kind": "token_cleanup",
      "max_running": 3,
      "running": 0,
      "set_by": "operator",
      "set_at": "2026-01-01T00:00:06Z"
    },
    {
      "kind": "work_item_retention",
      "max_running": 2,
      "running": 1,
      "set_by": "policy",
      "set_at": "2026-01-01T00:00:05Z"
    }
  ],
  "active_total": 2,
  "active": [
    {
      "id": 2,
      "kind": "work_item_retention",
      "status": "running",
      "attempt": 1,
      "stalls": 0,
      "dedup_key": null,
      "worker_id": "w-1",
      "enqueued_at": "2026-01-01T00:00:01Z",
      "priority": 0,
      "run_at": "2026-01-01T00:00:01Z",
      "heartbeat_age_seconds": 2.6,
      "finished_at": null,
      "progress": {
        "zeta": "é",
        "deleted": 12
      },
      "error": null,
      "cancel_reason": null,
      "snoozes": 0,
      "failures": [],
      "result": null
    },
    {
      "id": 3,
      "kind": "token_cleanup",
      "status": "queued",
      "attempt": 0,
      "stalls": 0,
      "dedup_key": "periodic",
      "worker_id": null,
      "enqueued_at": "2026-01-01T00:00:05Z",
      "priority": 5,
      "run_at": "2026-01-01T00:10:05Z",
      "heartbeat_age_seconds": null,
      "finished_at": null,
      "progress": null,
      "error": null,
      "cancel_reason": null,
      "snoozes": 0,
      "failures": [],
      "result": null
    }
  ],
  "failed_total": 1,
  "recent_failures": [
    {
      "id": 1,
      "kind": "token_cleanup",
      "status": "failed",
      "attempt": 1,
      "stalls": 0,
      "dedup_key": null,
      "worker_id": "w-old",
      "enqueued_at": "2026-01-01T00:00:01Z",
      "priority": 0,
      "run_at": "2026-01-01T00:00:01Z",
      "heartbeat_age_seconds": null,
      "finished_at": "2026-01-01T00:00:01Z",
      "progress": null,
      "error": "RuntimeError: disk full\\nTraceback...",
      "cancel_reason": null,
      "snoozes": 0,
      "failures": [
        {
          "attempt": 1,
          "at": "2026-01-01T00:00:01Z",
          "error": "RuntimeError: disk full\\nTraceback..."
        }
      ],
      "result": null
    }
  ]
}"""
    )


async def test_an_item_that_failed_or_snoozed_before_says_how_often() -> None:
    world = Queue()
    await world.queue.enqueue(TokenCleanup())
    for outcome in (
        RunOutcome.retried("OSError: down", world.clock.now()),
        RunOutcome.snoozed(world.clock.now()),
        RunOutcome.retried("OSError: down", world.clock.now()),
    ):
        claimed = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
        assert claimed is not None
        await world.store.finish(claimed.lease, outcome)

    text = render_text(await world.report())

    assert "  #1 token_cleanup queued attempt=3 stalls=0 failures=2 snoozes=1\n" in text


async def test_an_item_due_now_waits_for_nothing(busy: Queue) -> None:
    await busy.queue.enqueue(TokenCleanup(), run_at=busy.clock.now())

    lines = render_text(await busy.report()).splitlines()

    assert "  #4 token_cleanup queued attempt=0 stalls=0" in lines


async def test_bounded_lists_say_how_many_of_how_many_they_show(busy: Queue) -> None:
    await busy.fail_one("second")
    await busy.queue.enqueue(TokenCleanup())

    lines = render_text(await busy.report(active_limit=1, failure_limit=1)).splitlines()

    assert "queued and running: 3 (every running and the oldest 1 queued shown)" in lines
    assert "failed or cancelled: 2 (newest 1 shown)" in lines
    assert [line for line in lines if line.startswith("  #")] == [
        "  #2 work_item_retention running attempt=1 stalls=0 worker=w-1 heartbeat=1.6s ago"
        ' progress={"deleted":12,"zeta":"é"}',
        # The waiting item is the oldest queued; the claim took the one enqueued after it.
        "  #3 token_cleanup queued attempt=0 stalls=0 priority=5 waits until 2026-01-01T00:10:05Z",
        "  #4 token_cleanup failed attempt=1 stalls=0 finished=2026-01-01T00:00:05Z error: second",
    ]


async def test_every_running_item_is_listed_however_long_the_backlog() -> None:
    world = Queue()
    running = []
    for _ in range(3):
        await world.queue.enqueue(TokenCleanup())
        claimed = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
        assert claimed is not None
        running.append(claimed.id)
    for _ in range(120):
        await world.queue.enqueue(WorkItemRetention())

    report = await world.report(active_limit=5)

    assert [item.id for item in report.active if item.status is WorkStatus.RUNNING] == running
    assert len(report.active) == 3 + 5
    assert report.counts["work_item_retention"] == {WorkStatus.QUEUED: 120}
    document = json.loads(render_json(report))
    assert [item["id"] for item in document["active"][:3]] == running
    assert "queued and running: 123 (every running and the oldest 5 queued shown)" in (
        render_text(report).splitlines()
    )


async def test_finished_items_are_not_live_and_kinds_nobody_serves_are_still_counted() -> None:
    world = Queue()
    await world.fail_one("gone")
    world.state.write(replace(world.state.items[1], kind="legacy"))

    report = await world.report()

    assert report.active == []
    assert report.counts == {
        "legacy": {WorkStatus.FAILED: 1},
        "token_cleanup": {},
        "work_item_retention": {},
    }


async def test_a_queued_item_keeps_no_heartbeat_age_from_an_earlier_attempt() -> None:
    world = Queue()
    await world.queue.enqueue(TokenCleanup())
    claimed = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
    assert claimed is not None
    await world.store.finish(claimed.lease, RunOutcome.released(None))

    report = await world.report()

    (item,) = report.active
    assert item.heartbeat_at is not None
    assert report.heartbeat_age(item) is None


def failure(error: str | None) -> WorkItem:
    return running_item(
        id=9,
        kind="token_cleanup",
        status=WorkStatus.FAILED,
        lease_expires_at=None,
        finished_at=T0,
        worker_id="w",
        error=error,
    )


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (None, ""),
        ("", ""),
        ("  \nfirst line\nsecond line", "first line"),
        ("x" * 200, "x" * 200),
        ("x" * 201, "x" * 197 + "..."),
    ],
    ids=["none", "empty", "first-line", "at-the-limit", "over-the-limit"],
)
def test_a_failure_shows_the_first_line_of_its_error_cut_to_200_characters(
    error: str | None, shown: str
) -> None:
    report = StatusReport(
        database=DATABASE,
        now=T0,
        counts={"token_cleanup": {WorkStatus.FAILED: 1}},
        active=[],
        failures=[failure(error)],
        pauses=[],
        caps=[],
    )

    last = render_text(report).splitlines()[-1]

    assert last == (
        f"  #9 token_cleanup failed attempt=1 stalls=0 finished=2026-01-01T00:00:00Z error: {shown}"
    )


async def test_a_running_item_whose_cancel_was_requested_says_so_and_a_finished_one_not() -> None:
    world = Queue()
    for _ in range(2):
        await world.queue.enqueue(TokenCleanup())
    running = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
    assert running is not None
    await world.store.cancel(running.id, reason="wrong input\nsecond line")
    finished = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
    assert finished is not None
    await world.store.cancel(finished.id, reason="too late")
    await world.store.finish(finished.lease, RunOutcome.failed("boom", None))

    report = await world.report()
    lines = render_text(report).splitlines()

    expected = (
        f"  #{running.id} token_cleanup running attempt=1 stalls=0 worker=w heartbeat=0.0s ago"
        " cancel requested: wrong input"
    )
    assert expected in lines
    assert not any("too late" in line for line in lines)
    assert any(line.startswith(f"  #{finished.id} token_cleanup failed") for line in lines)
    document = json.loads(render_json(report))
    assert document["active"][0]["cancel_reason"] == "wrong input\nsecond line"
