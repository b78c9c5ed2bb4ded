"""The worker loop at its edges: when recovery runs, what it logs, and clocks that step back.

The store here answers like a real one, after a turn of the event loop, so a loop
that never waits shows up as an error of the FakeClock rather than as a hang.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from service_bench import Bench

from application import LeaseRecovery, Worker, WorkScheduler
from domain import StoreUnavailableError, WorkContext, WorkNotifications

WORKER_LOG = "workqueue.worker"
SAFETY_NET = 10.0


class RoundTripStore:
    """The bench's store, reached after one turn of the event loop, counting calls."""

    def __init__(self, bench: Bench) -> None:
        self.inner = bench.store
        self.calls: list[str] = []

    def count(self, name: str) -> int:
        return self.calls.count(name)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        async def round_trip(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            await asyncio.sleep(0)
            return await method(*args, **kwargs)

        return round_trip


class WallClock:
    """The bench's clock as a wall clock that the test can step back; sleeps are unaffected."""

    def __init__(self, bench: Bench) -> None:
        self.fake = bench.clock
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return self.fake.now() + self.offset

    async def sleep(self, seconds: float) -> None:
        await self.fake.sleep(seconds)


def worker(
    bench: Bench,
    store: RoundTripStore,
    *,
    clock: Any = None,
    notifications: WorkNotifications | None = None,
    poll_interval: float = 5.0,
) -> Worker:
    return Worker(
        executor=bench.executor(store=store),
        scheduler=WorkScheduler(bench.queue, []),
        recovery=LeaseRecovery(store),  # type: ignore[arg-type]
        clock=clock or bench.clock,
        poll_interval=timedelta(seconds=poll_interval),
        notifications=notifications,
    )


def worker_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == WORKER_LOG]


def takes(bench: Bench, seconds: float, *labels: str) -> None:
    async def work(ctx: WorkContext) -> None:
        await bench.clock.sleep(seconds)

    for label in labels:
        bench.script.on(label, work)


@pytest.fixture
def store(bench: Bench) -> RoundTripStore:
    return RoundTripStore(bench)


@pytest.fixture
def debug_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger=WORKER_LOG)
    return caplog


@pytest.fixture
def running(bench: Bench) -> Iterator[list[tuple[Worker, asyncio.Task[None]]]]:
    """Workers started by a test; each is stopped at the end, whatever the test did."""
    started: list[tuple[Worker, asyncio.Task[None]]] = []
    yield started
    for started_worker, task in started:
        started_worker.stop()
        bench.state.unavailable = False
        task.cancel()


async def start(
    bench: Bench, the_worker: Worker, running: list[tuple[Worker, asyncio.Task[None]]]
) -> asyncio.Task[None]:
    task = asyncio.create_task(the_worker.run())
    running.append((the_worker, task))
    await bench.clock.settle()
    return task


async def stopped(bench: Bench, the_worker: Worker, task: asyncio.Task[None]) -> None:
    the_worker.stop()
    await bench.clock.settle()
    assert task.done(), "the worker did not stop"
    task.result()


class TestConstruction:
    def test_a_new_worker_is_not_stopping_and_a_short_poll_is_allowed(
        self, bench: Bench, store: RoundTripStore
    ) -> None:
        assert worker(bench, store, poll_interval=0.5).stopping is False

    def test_a_poll_interval_of_zero_is_refused(self, bench: Bench, store: RoundTripStore) -> None:
        with pytest.raises(ValueError) as refused:
            worker(bench, store, poll_interval=0)

        assert str(refused.value) == "poll_interval must be positive, not 0 s"


class TestLife:
    async def test_start_stop_and_end_are_each_one_line(
        self,
        bench: Bench,
        store: RoundTripStore,
        debug_log: pytest.LogCaptureFixture,
        running: list[tuple[Worker, asyncio.Task[None]]],
    ) -> None:
        the_worker = worker(bench, store)
        task = await start(bench, the_worker, running)

        await stopped(bench, the_worker, task)

        assert worker_lines(debug_log) == [
            ("INFO", "worker worker-1 started for kinds alpha, beta"),
            ("INFO", "worker worker-1 stopping"),
            ("INFO", "worker worker-1 stopped"),
        ]
        assert the_worker.stopping is True

    async def test_a_second_run_beside_the_first_is_refused_and_one_after_it_returns_at_once(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        the_worker = worker(bench, store)
        task = await start(bench, the_worker, running)

        with pytest.raises(RuntimeError) as refused:
            await the_worker.run()
        await stopped(bench, the_worker, task)
        async with asyncio.timeout(SAFETY_NET):
            await the_worker.run()

        assert str(refused.value) == "this worker is already running"
        assert store.count("recover_expired") == 1


class TestRecoveryBetweenItems:
    async def test_a_busy_cycle_recovers_again_each_time_a_poll_interval_has_passed(
        self, bench: Bench, store: RoundTripStore
    ) -> None:
        takes(bench, 5, "a", "b")
        await bench.enqueue("a")
        await bench.enqueue("b")
        cycle = asyncio.create_task(worker(bench, store).run_cycle())

        await bench.clock.advance(10)

        assert cycle.done()
        assert cycle.result() == 2
        assert store.count("recover_expired") == 3

    async def test_items_shorter_than_the_poll_interval_are_not_interrupted_by_recovery(
        self, bench: Bench, store: RoundTripStore
    ) -> None:
        takes(bench, 1, "a", "b", "c")
        for label in ("a", "b", "c"):
            await bench.enqueue(label)
        cycle = asyncio.create_task(worker(bench, store).run_cycle())

        await bench.clock.advance(3)

        assert cycle.done()
        assert cycle.result() == 3
        assert store.count("recover_expired") == 1


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
        takes(bench, 2, "first")
        await bench.enqueue("first")
        the_worker = worker(bench, store, notifications=bench.notifications)
        await start(bench, the_worker, running)
        await bench.clock.advance(2)  # the pass was at 0 s; idle from 2 s, its poll due at 7 s
        await bench.clock.advance(3)
        calls_before = len(store.calls)

        await bench.enqueue("late")  # at 5 s, exactly a poll interval after the pass
        await bench.clock.settle()

        assert bench.script.returned == ["first", "late"]
        assert store.calls[calls_before:][:2] == ["recover_expired", "claim"]

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


class TestOutages:
    async def test_an_outage_is_told_once_its_retries_quietly_and_its_end_with_its_length(
        self,
        bench: Bench,
        store: RoundTripStore,
        debug_log: pytest.LogCaptureFixture,
        running: list[tuple[Worker, asyncio.Task[None]]],
    ) -> None:
        bench.state.unavailable = True
        the_worker = worker(bench, store)
        await start(bench, the_worker, running)
        await bench.clock.advance(5)
        bench.state.unavailable = False
        await bench.clock.advance(5)
        bench.state.unavailable = True
        await bench.clock.advance(5)
        bench.state.unavailable = False

        outage = "the in-memory store is marked unavailable"
        assert worker_lines(debug_log)[1:] == [
            ("WARNING", f"store unavailable: {outage}; retrying every 5.0 s"),
            ("DEBUG", f"store still unavailable: {outage}"),
            ("INFO", "store reachable again after 10.0 s"),
            ("WARNING", f"store unavailable: {outage}; retrying every 5.0 s"),
        ]


def worker_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == WORKER_LOG and r.getMessage().startswith("ran ")]


@pytest.fixture
def info_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger=WORKER_LOG)
    return caplog


class TestCountOfItemsRun:
    async def test_a_run_of_items_is_one_line_saying_how_many_in_how_long_and_how_they_ended(
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        takes(bench, 1, "a", "b")
        bench.script.fail_with("c", ValueError("nope"))
        for label in ("a", "b", "c"):
            await bench.enqueue(label)
        cycle = asyncio.create_task(worker(bench, store).run_cycle())

        await bench.clock.advance(2)

        assert cycle.result() == 3
        (line,) = worker_records(info_log)
        assert (line.levelname, line.getMessage()) == (
            "INFO",
            "ran 3 items in 2.000 s: 2 succeeded, 1 failed",
        )
        fields = {
            key: getattr(line, key, None)
            for key in ("items", "seconds", "succeeded", "failed", "released", "lease_lost")
        }
        assert fields == {
            "items": 3,
            "seconds": 2.0,
            "succeeded": 2,
            "failed": 1,
            "released": None,
            "lease_lost": None,
        }

    async def test_one_item_is_counted_in_the_singular(
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        await bench.enqueue("a")

        assert await worker(bench, store).run_cycle() == 1

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 1 item in 0.000 s: 1 succeeded"
        ]

    async def test_a_cycle_that_runs_nothing_counts_nothing(
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        assert await worker(bench, store).run_cycle() == 0

        assert worker_records(info_log) == []

    async def test_a_long_run_is_counted_again_each_poll_interval(
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        takes(bench, 3, "a", "b", "c")
        for label in ("a", "b", "c"):
            await bench.enqueue(label)
        cycle = asyncio.create_task(worker(bench, store).run_cycle())

        await bench.clock.advance(9)

        assert cycle.result() == 3
        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 2 items in 6.000 s: 2 succeeded",
            "ran 1 item in 3.000 s: 1 succeeded",
        ]

    async def test_a_run_cut_short_by_stop_counts_the_released_item(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: list[tuple[Worker, asyncio.Task[None]]],
    ) -> None:
        takes(bench, 1, "a")
        bench.script.block("b")
        await bench.enqueue("a")
        await bench.enqueue("b")
        the_worker = worker(bench, store)
        task = await start(bench, the_worker, running)
        await bench.clock.advance(1)

        await stopped(bench, the_worker, task)

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 2 items in 1.000 s: 1 succeeded, 1 released"
        ]
