"""``workqueue pause KIND`` and ``workqueue resume KIND``: an operator stops one kind and starts
it again, with one line saying what happened; 0 when done, 1 when a resume had nothing to do,
2 for bad input."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from worker_world import PRODUCTION_KINDS, WorkerWorld

from workqueue.domain import MAX_PAUSE_REASON_LENGTH, KindPause, WorkItem, WorkItemRetention

LEASE = timedelta(seconds=60)
RETENTION = "work_item_retention"


def claim(world: WorkerWorld) -> WorkItem | None:
    return asyncio.run(world.store.claim([RETENTION], worker_id="w-1", lease_duration=LEASE))


class TestPause:
    def test_a_paused_kind_is_claimed_by_no_worker_and_the_line_says_until_when(
        self, world: WorkerWorld
    ) -> None:
        asyncio.run(world.queue.enqueue(WorkItemRetention()))
        world.clock.advance(1.25)  # said to the second

        run = world.cli("pause", RETENTION)

        assert (run.status, run.out, run.err) == (
            0,
            "work_item_retention is paused since 2026-01-01T00:00:01Z: no worker claims it until "
            "`workqueue resume work_item_retention`; its running items finish\n",
            "",
        )
        assert claim(world) is None

    def test_the_reason_is_stored_and_said(self, world: WorkerWorld) -> None:
        run = world.cli("pause", RETENTION, "--reason", " disk nearly full ")

        assert run.status == 0
        assert run.out.endswith("; its running items finish (reason: disk nearly full)\n")
        assert world.state.pauses[RETENTION] == KindPause(
            RETENTION, world.clock.now(), "disk nearly full"
        )

    def test_pausing_a_paused_kind_says_the_pause_in_force(self, world: WorkerWorld) -> None:
        world.cli("pause", RETENTION, "--reason", "first")
        world.clock.advance(90)

        run = world.cli("pause", RETENTION, "--reason", "second")

        assert run.status == 0
        assert run.out.startswith("work_item_retention is paused since 2026-01-01T00:00:00Z:")
        assert run.out.endswith("(reason: first)\n")

    def test_an_unknown_kind_is_bad_input_and_pauses_nothing(self, world: WorkerWorld) -> None:
        run = world.cli("pause", "work_item_retension")

        assert (run.status, run.out) == (2, "")
        assert run.err.startswith(
            "workqueue: unknown kind 'work_item_retension' "
            f"(known kinds: {', '.join(PRODUCTION_KINDS)})"
        )
        assert world.state.pauses == {}

    def test_a_reason_no_store_can_hold_is_bad_input(self, world: WorkerWorld) -> None:
        run = world.cli("pause", RETENTION, "--reason", "x" * (MAX_PAUSE_REASON_LENGTH + 1))

        assert (run.status, run.out) == (2, "")
        assert run.err == (
            f"workqueue: a pause reason is at most {MAX_PAUSE_REASON_LENGTH} characters, "
            f"not {MAX_PAUSE_REASON_LENGTH + 1}\n"
        )
        assert world.state.pauses == {}

    def test_a_schema_not_current_is_a_failure_and_nothing_is_paused(
        self, world: WorkerWorld
    ) -> None:
        world.schema.missing = ["0009_kind_pauses"]

        run = world.cli("pause", RETENTION)

        assert run.status == 1
        assert "workqueue migrate" in run.err
        assert world.state.pauses == {}


class TestResume:
    def test_a_resumed_kind_is_claimed_again(self, world: WorkerWorld) -> None:
        enqueued = asyncio.run(world.queue.enqueue(WorkItemRetention()))
        world.cli("pause", RETENTION)

        run = world.cli("resume", RETENTION)

        assert (run.status, run.out, run.err) == (
            0,
            "resumed work_item_retention: workers claim its items again\n",
            "",
        )
        claimed = claim(world)
        assert claimed is not None
        assert claimed.id == enqueued.id

    def test_a_kind_that_is_not_paused_has_nothing_to_do(self, world: WorkerWorld) -> None:
        run = world.cli("resume", RETENTION)

        assert (run.status, run.out, run.err) == (
            1,
            "nothing to do: work_item_retention is not paused\n",
            "",
        )

    def test_any_paused_kind_resumes_even_one_no_application_serves_now(
        self, world: WorkerWorld
    ) -> None:
        asyncio.run(world.store.pause_kind("retired_kind"))

        assert world.cli("resume", "retired_kind").status == 0
        assert world.state.pauses == {}

    def test_a_schema_not_current_is_a_failure_and_the_pause_holds(
        self, world: WorkerWorld
    ) -> None:
        world.cli("pause", RETENTION)
        world.schema.missing = ["0009_kind_pauses"]

        run = world.cli("resume", RETENTION)

        assert run.status == 1
        assert "workqueue migrate" in run.err
        assert list(world.state.pauses) == [RETENTION]
