"""A worker runs once at a time; a stop releases its running item and ends the run."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from service_bench import Bench
from worker_bench import SAFETY_NET, RoundTripStore, start, statuses, stopped, worker, worker_lines

from workqueue.application import LeaseRecovery, Worker, WorkScheduler
from workqueue.domain import WorkStatus


class TestConstruction:
    async def test_a_new_worker_runs_until_stopped_and_a_short_poll_is_allowed(
        self, bench: Bench, store: RoundTripStore, running: list[tuple[Worker, asyncio.Task[None]]]
    ) -> None:
        task = await start(bench, worker(bench, store, poll_interval=0.5), running)
        await bench.enqueue("late")

        await bench.clock.advance(0.5)

        assert not task.done()
        assert bench.script.returned == ["late"]
        assert store.count("recover_expired") == 2

    def test_a_poll_interval_of_zero_is_refused(self, bench: Bench, store: RoundTripStore) -> None:
        with pytest.raises(ValueError) as refused:
            worker(bench, store, poll_interval=0)

        assert str(refused.value) == "poll_interval must be positive, not 0 s"

    def test_a_poll_interval_given_as_a_number_of_seconds_is_refused(self, bench: Bench) -> None:
        with pytest.raises(TypeError) as refused:
            Worker(
                executor=bench.executor(),
                scheduler=WorkScheduler(bench.queue, []),
                recovery=LeaseRecovery(bench.store),
                clock=bench.clock,
                poll_interval=5.0,  # type: ignore[arg-type]
            )

        assert str(refused.value) == "poll_interval must be a timedelta, not 5.0"

    def test_a_worker_polls_every_five_seconds_unless_told_otherwise(self, bench: Bench) -> None:
        the_worker = Worker(
            executor=bench.executor(),
            scheduler=WorkScheduler(bench.queue, []),
            recovery=LeaseRecovery(bench.store),
            clock=bench.clock,
        )

        assert the_worker.poll_interval == timedelta(seconds=5)


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
        await bench.enqueue("a")
        async with asyncio.timeout(SAFETY_NET):
            await the_worker.run()
        assert bench.script.started == []

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
