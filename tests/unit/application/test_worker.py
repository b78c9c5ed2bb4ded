"""The worker loop: recover, schedule, run until nothing is claimable, idle, stop cleanly."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from datetime import timedelta

import pytest
from service_bench import Bench

from domain import StoreUnavailableError, WorkSchedule, WorkStatus


class BrokenNotifications:
    """A notification channel that fails at once every time it is asked to wait."""

    def __init__(self) -> None:
        self.waits = 0

    async def wait_for_work(self, kinds: Collection[str]) -> None:
        self.waits += 1
        raise StoreUnavailableError("listener connection lost")


async def statuses(bench: Bench, item_ids: list[int]) -> list[WorkStatus]:
    return [(await bench.item(item_id)).status for item_id in item_ids]


class TestCycle:
    async def test_a_cycle_recovers_schedules_and_runs_items_until_none_is_claimable(
        self, bench: Bench
    ) -> None:
        stale = await bench.enqueue("stale")
        await bench.claim_as_dead_worker()
        await bench.clock.advance(61)
        fresh = [await bench.enqueue("x"), await bench.enqueue("y")]
        tick = WorkSchedule(payload=bench.payload("tick", beta=True), interval=timedelta(hours=1))
        worker = bench.worker(schedules=[tick])

        executed = await worker.run_cycle()

        assert executed == 4
        assert bench.script.started == ["stale", "x", "y", "tick"]
        assert await statuses(bench, [stale, *fresh]) == [WorkStatus.SUCCEEDED] * 3
        assert await worker.run_cycle() == 0

    async def test_a_cycle_counts_failed_items_as_run(self, bench: Bench) -> None:
        bench.script.fail_with("bad", RuntimeError("no"))
        await bench.enqueue("bad")
        await bench.enqueue("good")

        assert await bench.worker().run_cycle() == 2


class TestIdle:
    async def test_an_idle_worker_looks_again_after_the_poll_interval(self, bench: Bench) -> None:
        worker = bench.worker(poll_interval=5)
        running = asyncio.create_task(worker.run())
        await bench.clock.settle()
        await bench.enqueue("late")

        await bench.clock.advance(4.9)
        assert bench.script.started == []
        await bench.clock.advance(0.1)
        assert bench.script.started == ["late"]

        worker.stop()
        await running

    async def test_a_notification_wakes_an_idle_worker_before_the_poll_interval(
        self, bench: Bench
    ) -> None:
        worker = bench.worker(notifications=bench.notifications)
        running = asyncio.create_task(worker.run())
        await bench.clock.settle()
        before = bench.clock.now()

        await bench.enqueue("urgent")
        await bench.clock.settle()

        assert bench.script.started == ["urgent"]
        assert bench.clock.now() == before
        worker.stop()
        await running

    async def test_a_failing_notification_wait_falls_back_to_polling(self, bench: Bench) -> None:
        notifications = BrokenNotifications()
        worker = bench.worker(notifications=notifications)
        running = asyncio.create_task(worker.run())
        await bench.clock.settle()  # a worker spinning on the failed wait would never settle
        await bench.enqueue("late")

        await bench.clock.advance(4.9)
        assert bench.script.started == []
        await bench.clock.advance(0.1)
        assert bench.script.started == ["late"]
        assert notifications.waits == 2

        worker.stop()
        await running


class TestStop:
    async def test_stop_releases_the_running_item_and_run_returns_at_once(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        worker = bench.worker()
        running = asyncio.create_task(worker.run())
        await bench.clock.settle()
        before = bench.clock.now()

        worker.stop()
        await bench.clock.settle()

        assert running.done()
        assert running.result() is None
        assert bench.clock.now() == before
        assert bench.script.cancelled == ["a"]
        item = await bench.item(item_id)
        assert (item.status, item.stalls) == (WorkStatus.QUEUED, 0)

    async def test_a_stopped_worker_claims_nothing_and_stop_may_be_repeated(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        worker = bench.worker()

        worker.stop()
        worker.stop()
        await worker.run()

        assert bench.script.started == []
        assert await statuses(bench, [item_id]) == [WorkStatus.QUEUED]

    async def test_a_stop_just_after_a_handler_returned_completes_its_item_and_claims_no_more(
        self, bench: Bench
    ) -> None:
        worker = bench.worker()

        async def stop_the_worker_soon(ctx: object) -> None:
            # Arrives after this handler has returned, before its item is completed.
            asyncio.get_running_loop().call_soon(worker.stop)

        bench.script.on("a", stop_the_worker_soon)
        ids = [await bench.enqueue("a"), await bench.enqueue("b")]

        await worker.run()

        assert bench.script.started == ["a"]
        assert await statuses(bench, ids) == [WorkStatus.SUCCEEDED, WorkStatus.QUEUED]

    async def test_cancelling_a_running_worker_releases_its_item(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        running = asyncio.create_task(bench.worker().run())
        await bench.clock.settle()

        running.cancel()
        await bench.clock.settle()

        assert running.cancelled()
        item = await bench.item(item_id)
        assert (item.status, item.stalls) == (WorkStatus.QUEUED, 0)

    async def test_a_worker_runs_once_at_a_time(self, bench: Bench) -> None:
        worker = bench.worker()
        running = asyncio.create_task(worker.run())
        await bench.clock.settle()

        with pytest.raises(RuntimeError, match="already running"):
            await worker.run()

        worker.stop()
        await running


class TestOutage:
    async def test_an_unreachable_store_is_logged_once_and_the_worker_carries_on(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.worker")
        bench.state.unavailable = True
        worker = bench.worker(poll_interval=5)
        running = asyncio.create_task(worker.run())

        await bench.clock.advance(20)
        assert not running.done()
        outage_lines = [r for r in caplog.records if "store unavailable" in r.getMessage()]
        assert len(outage_lines) == 1
        assert outage_lines[0].levelno == logging.WARNING

        bench.state.unavailable = False
        await bench.enqueue("a")
        await bench.clock.advance(5)

        assert bench.script.started == ["a"]
        assert "store reachable again after 25.0 s" in caplog.text
        worker.stop()
        await running

    def test_a_poll_interval_must_be_positive(self, bench: Bench) -> None:
        with pytest.raises(ValueError, match="poll_interval"):
            bench.worker(poll_interval=0)
