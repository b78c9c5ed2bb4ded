"""A worker of N executors runs N items at once, each lane one item at a time, FIFO between them.

One recovery pass, one scheduler and one notification wait serve every lane; a
notification wakes as many lanes as there is work; a lost lease cancels only its
own handler; a stop releases every running and held item without a stall.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import pytest
from service_bench import Bench
from worker_bench import (
    WORKER_LOG,
    RoundTripStore,
    count_lines,
    start,
    statuses,
    stopped,
    takes,
    worker_lines,
)

from workqueue.application import ExecutorLanes, LeaseRecovery, Worker, WorkScheduler
from workqueue.application.tally import Tally
from workqueue.domain import StoreUnavailableError, WorkContext, WorkNotifications, WorkStatus


def lanes_worker(
    bench: Bench,
    store: RoundTripStore,
    lanes: int,
    *,
    notifications: WorkNotifications | None = None,
    poll_interval: float = 5.0,
) -> Worker:
    return Worker(
        executor=[bench.executor(store=store) for _ in range(lanes)],
        scheduler=WorkScheduler(bench.queue, []),
        recovery=LeaseRecovery(store),  # type: ignore[arg-type]
        clock=bench.clock,
        poll_interval=timedelta(seconds=poll_interval),
        notifications=notifications,
    )


Running = list[tuple[Worker, asyncio.Task[None]]]


class TestSeveralItemsAtOnce:
    async def test_n_lanes_run_n_items_at_once_and_the_rest_as_lanes_come_free(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        labels = ["a", "b", "c", "d", "e"]
        takes(bench, 2, *labels)
        ids = [await bench.enqueue(label) for label in labels]
        the_worker = lanes_worker(bench, store, 3)

        await start(bench, the_worker, running)
        assert bench.script.started == ["a", "b", "c"]

        await bench.clock.advance(2)
        assert bench.script.started == labels
        await bench.clock.advance(2)
        assert await statuses(bench, ids) == [WorkStatus.SUCCEEDED] * 5
        assert bench.script.most_running == 3

    async def test_each_lane_claims_its_next_item_along_with_the_last_completion(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        labels = ["a", "b", "c", "d", "e", "f"]
        takes(bench, 1, *labels)
        for label in labels:
            await bench.enqueue(label)

        await start(bench, lanes_worker(bench, store, 2), running)
        await bench.clock.advance(3)

        assert bench.script.returned == labels
        assert (store.count("finish succeeded"), store.count("complete_and_claim")) == (0, 6)

    async def test_lanes_take_the_items_oldest_first(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        labels = [f"item-{index}" for index in range(8)]
        takes(bench, 1, *labels)
        for label in labels:
            await bench.enqueue(label)

        await start(bench, lanes_worker(bench, store, 4), running)
        await bench.clock.advance(1)

        assert bench.script.started == labels

    async def test_a_worker_of_one_executor_given_as_a_list_runs_one_item_at_a_time(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        takes(bench, 2, "a", "b")
        await bench.enqueue("a")
        await bench.enqueue("b")
        the_worker = lanes_worker(bench, store, 1)

        await start(bench, the_worker, running)

        assert (the_worker.concurrency, bench.script.started) == (1, ["a"])

    async def test_a_cycle_of_a_worker_of_lanes_recovers_schedules_and_leaves_the_items_to_them(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        takes(bench, 1, "a")
        item_id = await bench.enqueue("a")
        the_worker = lanes_worker(bench, store, 2)

        await start(bench, the_worker, running)

        assert (store.count("recover_expired"), bench.script.started) == (1, ["a"])
        await bench.clock.advance(1)
        assert await statuses(bench, [item_id]) == [WorkStatus.SUCCEEDED]

    def test_a_worker_of_no_executor_is_refused(self, bench: Bench) -> None:
        with pytest.raises(ValueError) as refused:
            Worker(
                executor=[],
                scheduler=WorkScheduler(bench.queue, []),
                recovery=LeaseRecovery(bench.store),
                clock=bench.clock,
            )

        assert str(refused.value) == "a worker needs at least one executor"

    async def test_lanes_run_items_when_woken_until_told_to_stop(self, bench: Bench) -> None:
        lanes = ExecutorLanes([bench.executor(), bench.executor()], Tally(bench.clock))
        ended = lanes.start()
        await bench.enqueue("a")
        lanes.wake()
        await bench.clock.settle()
        assert (bench.script.returned, ended.done()) == (["a"], False)

        lanes.stop()
        lanes.stop()
        await bench.enqueue("b")
        lanes.wake()
        await bench.clock.settle()

        assert (bench.script.started, ended.done()) == (["a"], True)


class TestWakingLanes:
    async def test_one_notified_item_wakes_two_lanes_not_all_of_them(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        bench.script.block("urgent")
        await start(
            bench, lanes_worker(bench, store, 6, notifications=bench.notifications), running
        )
        claims_before = store.count("claim")

        await bench.enqueue("urgent")
        await bench.clock.settle()

        assert bench.script.started == ["urgent"]
        # The lane that got it, and the one it woke, which found nothing.
        assert store.count("claim") - claims_before == 2

    async def test_each_lane_that_gets_an_item_wakes_one_more_until_the_work_is_shared_out(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        takes(bench, 10, "a", "b", "c")
        await start(
            bench, lanes_worker(bench, store, 6, notifications=bench.notifications), running
        )
        claims_before = store.count("claim")

        async with asyncio.TaskGroup() as group:
            for label in ["a", "b", "c"]:
                group.create_task(bench.enqueue(label))
        await bench.clock.settle()

        assert sorted(bench.script.started) == ["a", "b", "c"]
        assert bench.script.running == 3
        assert store.count("claim") - claims_before <= 4

    async def test_an_idle_lane_is_woken_by_the_poll_when_no_notification_comes(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        takes(bench, 20, "long")
        await bench.enqueue("long")
        await start(bench, lanes_worker(bench, store, 2, poll_interval=5), running)
        await bench.enqueue("late")

        await bench.clock.advance(4.9)
        assert bench.script.started == ["long"]
        await bench.clock.advance(0.1)
        assert bench.script.started == ["long", "late"]


class TestOnePassForAllLanes:
    async def test_busy_lanes_get_one_recovery_pass_per_poll_interval_between_them(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        labels = ["a", "b", "c"]
        takes(bench, 12, *labels)
        for label in labels:
            await bench.enqueue(label)
        await start(bench, lanes_worker(bench, store, 3, poll_interval=5), running)
        assert store.count("recover_expired") == 1

        await bench.clock.advance(10)

        assert store.count("recover_expired") == 3

    async def test_a_dead_workers_item_is_recovered_and_run_beside_busy_lanes(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        takes(bench, 600, "busy")
        await bench.enqueue("orphan")
        orphan = await bench.claim_as_dead_worker()
        await bench.enqueue("busy")
        await start(bench, lanes_worker(bench, store, 2, poll_interval=5), running)

        await bench.clock.advance(65)

        assert bench.script.started == ["busy", "orphan"]
        assert (await bench.item(orphan.id)).status == WorkStatus.SUCCEEDED

    async def test_what_the_lanes_ran_is_one_line_for_them_all(
        self,
        bench: Bench,
        store: RoundTripStore,
        running: Running,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        caplog.set_level(logging.INFO, logger=WORKER_LOG)
        labels = ["a", "b", "c", "d"]
        takes(bench, 1, *labels)
        for label in labels:
            await bench.enqueue(label, beta=label == "c")
        the_worker = lanes_worker(bench, store, 2, poll_interval=5)

        task = await start(bench, the_worker, running)
        await bench.clock.advance(5)
        await stopped(bench, the_worker, task)

        assert count_lines(caplog) == ["ran 4 items in 2.000 s: 4 succeeded (alpha 3, beta 1)"]
        assert worker_lines(caplog)[0] == (
            "INFO",
            "worker worker-1 started for kinds alpha, beta, 2 items at a time",
        )


class TestEachLeaseItsOwn:
    async def test_a_lost_lease_cancels_only_its_own_handler(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        releases = {label: bench.script.block(label) for label in ["kept", "lost"]}
        kept = await bench.enqueue("kept")
        lost = await bench.enqueue("lost")
        await start(bench, lanes_worker(bench, store, 2), running)
        assert sorted(bench.script.started) == ["kept", "lost"]

        bench.take_over(lost)
        await bench.clock.advance(2)

        assert bench.script.cancelled == ["lost"]
        assert bench.script.running == 1
        releases["kept"].set()
        await bench.clock.settle()
        assert (await bench.item(kept)).status == WorkStatus.SUCCEEDED
        assert (await bench.item(lost)).worker_id == "worker-2"


class TestStopping:
    async def test_a_stop_releases_every_running_item_without_a_stall_or_a_wait(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        labels = ["a", "b", "c"]
        for label in labels:
            bench.script.block(label)
        ids = [await bench.enqueue(label) for label in labels]
        the_worker = lanes_worker(bench, store, 3)
        task = await start(bench, the_worker, running)
        before = bench.clock.now()

        await stopped(bench, the_worker, task)

        assert sorted(bench.script.cancelled) == labels
        assert await statuses(bench, ids) == [WorkStatus.QUEUED] * 3
        assert [(await bench.item(item_id)).stalls for item_id in ids] == [0, 0, 0]
        assert bench.clock.now() == before

    async def test_a_stop_just_after_the_handlers_returned_completes_their_items_only(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        the_worker = lanes_worker(bench, store, 2)
        both_running = asyncio.Barrier(2)

        async def stop_the_worker_soon(ctx: WorkContext) -> None:
            await both_running.wait()
            # Arrives after both handlers have returned, before their items are completed.
            asyncio.get_running_loop().call_soon(the_worker.stop)

        for label in ["a", "b"]:
            bench.script.on(label, stop_the_worker_soon)
        ids = [await bench.enqueue(label) for label in ["a", "b", "c", "d"]]

        task = await start(bench, the_worker, running)
        await stopped(bench, the_worker, task)

        assert bench.script.started == ["a", "b"]
        assert await statuses(bench, ids) == [WorkStatus.SUCCEEDED] * 2 + [WorkStatus.QUEUED] * 2

    async def test_cancelling_a_worker_of_lanes_releases_every_item(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        for label in ["a", "b"]:
            bench.script.block(label)
        ids = [await bench.enqueue(label) for label in ["a", "b"]]
        task = await start(bench, lanes_worker(bench, store, 2), running)

        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        assert await statuses(bench, ids) == [WorkStatus.QUEUED] * 2

    async def test_a_handler_that_ignores_its_cancellation_holds_up_only_its_own_release(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        ready = asyncio.Event()

        async def stubborn(ctx: WorkContext) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                await ready.wait()

        bench.script.on("stubborn", stubborn)
        bench.script.block("plain")
        stubborn_id = await bench.enqueue("stubborn")
        plain_id = await bench.enqueue("plain")
        the_worker = lanes_worker(bench, store, 2)
        task = await start(bench, the_worker, running)

        the_worker.stop()
        await bench.clock.settle()

        assert await statuses(bench, [stubborn_id, plain_id]) == [
            WorkStatus.RUNNING,
            WorkStatus.QUEUED,
        ]
        ready.set()
        await stopped(bench, the_worker, task)
        assert (await bench.item(stubborn_id)).status == WorkStatus.SUCCEEDED


class ClaimsFailOnce:
    """The bench's store, whose first claim fails as an unreachable store's would."""

    def __init__(self, inner: RoundTripStore) -> None:
        self.inner = inner
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def claim(self, *args: Any, **kwargs: Any) -> Any:
        if not self.failed:
            self.failed = True
            raise StoreUnavailableError("connection lost")
        return await self.inner.claim(*args, **kwargs)


class TestAnUnreachableStore:
    async def test_a_lane_that_cannot_claim_says_so_and_sleeps_until_the_next_poll(
        self,
        bench: Bench,
        store: RoundTripStore,
        running: Running,
        debug_log: pytest.LogCaptureFixture,
    ) -> None:
        item_id = await bench.enqueue("later")
        failing = ClaimsFailOnce(store)
        the_worker = lanes_worker(bench, failing, 2, poll_interval=5)  # type: ignore[arg-type]

        await start(bench, the_worker, running)
        assert bench.script.started == []
        await bench.clock.advance(5)

        assert bench.script.started == ["later"]
        assert (await bench.item(item_id)).status == WorkStatus.SUCCEEDED
        lines = [(r.levelname, r.getMessage()) for r in debug_log.records if r.name == WORKER_LOG]
        assert ("DEBUG", "a lane stopped claiming: connection lost") in lines
