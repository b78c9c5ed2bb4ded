"""A worker's cycle recovers expired leases, enqueues the due periodic kinds and has its
lane run items until none is claimable, each next one claimed with the last completion."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from service_bench import Bench, StoreSpy
from worker_bench import RoundTripStore, count_lines, start, statuses, stopped, takes, worker

from workqueue.application import LeaseRecovery, Worker, WorkScheduler
from workqueue.domain import Lease, WorkSchedule, WorkStatus

Running = list[tuple[Worker, asyncio.Task[None]]]


def claiming_worker(bench: Bench, spy: StoreSpy) -> Worker:
    return Worker(
        executor=bench.executor(store=spy),
        scheduler=WorkScheduler(bench.queue, []),
        recovery=LeaseRecovery(bench.store),
        clock=bench.clock,
    )


class TestCycle:
    async def test_a_cycle_recovers_schedules_and_runs_items_until_none_is_claimable(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture, running: Running
    ) -> None:
        stale = await bench.enqueue("stale")
        await bench.claim_as_dead_worker()
        await bench.clock.advance(61)
        fresh = [await bench.enqueue("x"), await bench.enqueue("y")]
        tick = WorkSchedule(payload=bench.payload("tick", beta=True), interval=timedelta(hours=1))

        await start(bench, bench.worker(schedules=[tick]), running)

        assert bench.script.started == ["stale", "x", "y", "tick"]
        assert await statuses(bench, [stale, *fresh]) == [WorkStatus.SUCCEEDED] * 3
        assert count_lines(debug_log) == ["ran 4 items in 0.000 s: 4 succeeded (alpha 3, beta 1)"]
        # The next cycle finds nothing to run.
        await bench.clock.advance(5)
        assert bench.script.started == ["stale", "x", "y", "tick"]
        assert len(count_lines(debug_log)) == 1

    async def test_a_cycle_counts_failed_items_as_run(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture, running: Running
    ) -> None:
        bench.script.fail_with("bad", RuntimeError("no"))
        await bench.enqueue("bad")
        await bench.enqueue("good")

        await start(bench, bench.worker(), running)

        assert count_lines(debug_log) == [
            "ran 2 items in 0.000 s: 1 succeeded (alpha), 1 failed (alpha)"
        ]


class TestRecoveryWhileItemsRun:
    async def test_a_busy_worker_recovers_again_each_time_a_poll_interval_has_passed(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        takes(bench, 5, "a", "b")
        ids = [await bench.enqueue("a"), await bench.enqueue("b")]
        await start(bench, worker(bench, store), running)

        await bench.clock.advance(10)

        assert await statuses(bench, ids) == [WorkStatus.SUCCEEDED] * 2
        assert store.count("recover_expired") == 3

    async def test_items_shorter_than_the_poll_interval_are_not_interrupted_by_recovery(
        self, bench: Bench, store: RoundTripStore, running: Running
    ) -> None:
        takes(bench, 1, "a", "b", "c")
        ids = [await bench.enqueue(label) for label in ("a", "b", "c")]
        await start(bench, worker(bench, store), running)

        await bench.clock.advance(3)

        assert await statuses(bench, ids) == [WorkStatus.SUCCEEDED] * 3
        assert store.count("recover_expired") == 1


class TestEachNextItemIsClaimedWithTheLastCompletion:
    async def test_a_cycle_claims_each_next_item_along_with_the_last_completion(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture, running: Running
    ) -> None:
        for label in ("a", "b", "c"):
            await bench.enqueue(label)
        spy = StoreSpy(bench.store)

        await start(bench, claiming_worker(bench, spy), running)

        assert count_lines(debug_log) == ["ran 3 items in 0.000 s: 3 succeeded (alpha)"]
        claims = [call for call in spy.calls if call != "next_run_at"]
        assert claims == ["claim"] + ["complete_and_claim"] * 3 + ["claim"]
        assert bench.script.returned == ["a", "b", "c"]

    async def test_a_stop_during_the_combined_call_releases_the_item_it_claimed(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture, running: Running
    ) -> None:
        first = await bench.enqueue("a")
        second = await bench.enqueue("b")
        spy = StoreSpy(bench.store)
        answer = asyncio.Event()

        async def slow(lease: Lease, **kwargs: Any) -> Any:
            await answer.wait()
            return await bench.store.complete_and_claim(lease, **kwargs)

        spy.complete_and_claim = slow  # type: ignore[method-assign]
        the_worker = claiming_worker(bench, spy)
        task = await start(bench, the_worker, running)

        the_worker.stop()
        answer.set()
        await stopped(bench, the_worker, task)

        assert count_lines(debug_log) == ["ran 1 item in 0.000 s: 1 succeeded (alpha)"]
        assert (await bench.item(first)).status is WorkStatus.SUCCEEDED
        released = await bench.item(second)
        assert (released.status, released.attempt, released.stalls) == (WorkStatus.QUEUED, 1, 0)
        assert bench.script.started == ["a"]

    async def test_a_cancelled_worker_releases_the_item_it_claimed_along(
        self, bench: Bench, running: Running
    ) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        spy = StoreSpy(bench.store)
        answer = asyncio.Event()
        claimed_along: list[WorkStatus] = []

        async def slow(lease: Lease, **kwargs: Any) -> Any:
            await answer.wait()
            answered = await bench.store.complete_and_claim(lease, **kwargs)
            claimed_along.append((await bench.item(second)).status)
            return answered

        spy.complete_and_claim = slow  # type: ignore[method-assign]
        task = await start(bench, claiming_worker(bench, spy), running)

        task.cancel()
        await bench.clock.settle()
        answer.set()
        await asyncio.gather(task, return_exceptions=True)

        assert task.cancelled()
        assert claimed_along == [WorkStatus.RUNNING]
        released = await bench.item(second)
        assert (released.status, released.attempt, released.stalls) == (WorkStatus.QUEUED, 1, 0)
        assert bench.script.started == ["a"]
