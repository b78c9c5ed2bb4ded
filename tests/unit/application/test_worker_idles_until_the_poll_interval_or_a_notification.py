"""An idle worker waits the poll interval, or less when a notification says work came."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from datetime import timedelta

import pytest
from service_bench import Bench
from worker_bench import (
    SAFETY_NET,
    BrokenNotifications,
    RoundTripStore,
    WallClock,
    start,
    worker,
    worker_lines,
)

from workqueue.application import Worker
from workqueue.domain import StoreUnavailableError


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


class TestWhatTheWorkerIsWokenFor:
    async def test_an_idle_worker_waits_for_work_of_its_executors_kinds(self, bench: Bench) -> None:
        asked: list[frozenset[str]] = []

        class Recording:
            async def wait_for_work(self, kinds: Collection[str]) -> None:
                asked.append(frozenset(kinds))
                await asyncio.Event().wait()

        worker = bench.worker(notifications=Recording())
        running = asyncio.create_task(worker.run())
        await bench.clock.settle()
        worker.stop()
        await running

        assert asked == [frozenset({"alpha", "beta"})]
        assert bench.executor().kinds == frozenset({"alpha", "beta"})


class TestWakingUp:
    async def test_a_notification_soon_after_a_pass_goes_straight_to_claiming(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        the_worker = worker(bench, store, notifications=bench.notifications)
        await start(bench, the_worker, running)
        await bench.clock.advance(2)

        await bench.enqueue("urgent")
        await bench.clock.settle()

        assert bench.script.returned == ["urgent"]
        assert store.count("recover_expired") == 1

    async def test_a_notification_a_whole_poll_interval_after_the_pass_gets_a_full_cycle(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        the_worker = worker(bench, store, notifications=bench.notifications)
        await start(bench, the_worker, running)
        await bench.clock.advance(2)
        # The pass was at 0 s; a notification at 2 s goes straight to claiming, and the
        # worker idles again from 2 s, its poll due at 7 s.
        await bench.enqueue("first")
        await bench.clock.advance(3)
        calls_before = len(store.calls)

        await bench.enqueue("late")  # at 5 s, exactly a poll interval after the pass
        await bench.clock.settle()

        assert bench.script.returned == ["first", "late"]
        writes = [call for call in store.calls[calls_before:] if call != "next_run_at"]
        assert writes[:2] == ["recover_expired", "claim"]

    async def test_a_poll_after_the_wall_clock_stepped_back_still_recovers(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        wall = WallClock(bench)
        the_worker = worker(bench, store, clock=wall, notifications=bench.notifications)
        await start(bench, the_worker, running)
        await bench.clock.advance(4)

        wall.offset = -timedelta(minutes=1)
        await bench.clock.advance(1)

        assert store.count("recover_expired") == 2

    async def test_an_outage_is_waited_out_for_a_whole_poll_even_when_work_is_announced(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        bench.state.unavailable = True
        the_worker = worker(bench, store, notifications=bench.notifications)
        await start(bench, the_worker, running)
        bench.state.unavailable = False

        await bench.enqueue("urgent")
        await bench.clock.settle()
        assert bench.script.started == []
        await bench.clock.advance(5)

        assert bench.script.returned == ["urgent"]

    async def test_a_failed_notification_wait_is_logged_and_the_poll_still_ends_the_idle(
        self,
        bench: Bench,
        store: RoundTripStore,
        debug_log: pytest.LogCaptureFixture,
        running: list[tuple[Worker, asyncio.Task[None]]],
    ) -> None:
        class Broken:
            async def wait_for_work(self, kinds: Collection[str]) -> None:
                raise StoreUnavailableError("listener connection lost")

        await start(bench, worker(bench, store, notifications=Broken()), running)
        await bench.clock.advance(5)

        assert (
            "DEBUG",
            "waiting for work notifications failed: listener connection lost; polling instead",
        ) in worker_lines(debug_log)
        assert store.count("recover_expired") == 2

    async def test_an_idle_period_ends_only_after_the_notification_wait_has_unwound(
        self, bench: Bench, store: RoundTripStore
    ) -> None:
        class Unwinding:
            released = False

            async def wait_for_work(self, kinds: Collection[str]) -> None:
                try:
                    await asyncio.Event().wait()
                finally:
                    await asyncio.sleep(0)
                    await asyncio.sleep(0)
                    self.released = True

        listener = Unwinding()
        the_worker = worker(bench, store, notifications=listener)
        task = asyncio.create_task(the_worker.run())
        await bench.clock.settle()

        the_worker.stop()
        async with asyncio.timeout(SAFETY_NET):
            await task

        assert listener.released


class TestItemsThatWaitForTheirRunAt:
    async def test_an_idle_worker_wakes_when_a_waiting_item_becomes_due(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        await bench.enqueue("later", delay=2)
        the_worker = worker(bench, store)
        await start(bench, the_worker, running)

        await bench.clock.advance(1.9)
        assert bench.script.started == []
        await bench.clock.advance(0.1)

        assert bench.script.returned == ["later"]
        # Within a poll interval of the pass: straight to the claim, no second pass.
        assert store.count("recover_expired") == 1

    async def test_a_worker_wakes_for_an_item_due_in_less_than_a_second(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        await bench.enqueue("soon", delay=0.25)
        the_worker = worker(bench, store)
        await start(bench, the_worker, running)

        await bench.clock.advance(0.24)
        assert bench.script.started == []
        await bench.clock.advance(0.01)

        assert bench.script.returned == ["soon"]

    async def test_an_item_due_after_the_poll_interval_is_run_when_it_is_due(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        await bench.enqueue("much later", delay=7)
        the_worker = worker(bench, store)
        await start(bench, the_worker, running)

        await bench.clock.advance(5)
        assert store.count("recover_expired") == 2
        await bench.clock.advance(1.9)
        assert bench.script.started == []
        await bench.clock.advance(0.1)

        assert bench.script.returned == ["much later"]

    async def test_a_delayed_enqueue_while_idle_tells_the_worker_when_to_wake(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        the_worker = worker(bench, store, notifications=bench.notifications)
        await start(bench, the_worker, running)
        await bench.clock.advance(1)

        await bench.enqueue("soon", delay=1)
        await bench.clock.settle()
        assert bench.script.started == []
        await bench.clock.advance(1)

        assert bench.script.returned == ["soon"]

    async def test_a_store_that_cannot_say_when_leaves_the_worker_polling(
        self,
        bench: Bench,
        store: RoundTripStore,
        running: list[tuple[Worker, asyncio.Task[None]]],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        async def cannot_say(kinds: Collection[str]) -> None:
            raise StoreUnavailableError("connection lost")

        monkeypatch.setattr(bench.store, "next_run_at", cannot_say)
        await bench.enqueue("later", delay=2)
        the_worker = worker(bench, store)
        await start(bench, the_worker, running)

        await bench.clock.advance(4.9)
        assert bench.script.started == []
        await bench.clock.advance(0.1)

        assert bench.script.returned == ["later"]
