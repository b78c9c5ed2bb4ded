"""A worker's cycle recovers expired leases, enqueues the due periodic kinds and runs
items until none is claimable, each next one claimed with the last completion."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from service_bench import Bench, StoreSpy
from worker_bench import RoundTripStore, statuses, takes, worker

from workqueue.application import LeaseRecovery, Worker, WorkScheduler
from workqueue.domain import (
    Lease,
    WorkContext,
    WorkSchedule,
    WorkStatus,
)


def claiming_worker(bench: Bench, spy: StoreSpy) -> Worker:
    return Worker(
        executor=bench.executor(store=spy),
        scheduler=WorkScheduler(bench.queue, []),
        recovery=LeaseRecovery(bench.store),
        clock=bench.clock,
    )


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


class TestEachNextItemIsClaimedWithTheLastCompletion:
    async def test_a_cycle_claims_each_next_item_along_with_the_last_completion(
        self,
        bench: Bench,
    ) -> None:
        for label in ("a", "b", "c"):
            await bench.enqueue(label)
        spy = StoreSpy(bench.store)

        executed = await claiming_worker(bench, spy).run_cycle()

        assert executed == 3
        assert spy.calls == ["claim"] + ["complete_and_claim"] * 3 + ["claim"]
        assert bench.script.returned == ["a", "b", "c"]

    async def test_a_stop_during_the_combined_call_releases_the_item_it_claimed(
        self,
        bench: Bench,
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
        cycle = asyncio.create_task(the_worker.run_cycle())
        await bench.clock.settle()

        the_worker.stop()
        answer.set()
        executed = await cycle

        assert executed == 1
        assert (await bench.item(first)).status is WorkStatus.SUCCEEDED
        released = await bench.item(second)
        assert (released.status, released.attempt, released.stalls) == (WorkStatus.QUEUED, 1, 0)
        assert bench.script.started == ["a"]

    async def test_a_cancelled_cycle_releases_the_item_it_held(self, bench: Bench) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        recovery_store = StoreSpy(bench.store)
        recovering = asyncio.Event()

        async def hang_after_the_first(*args: Any, **kwargs: Any) -> Any:
            if recovering.is_set():
                await asyncio.Event().wait()
            recovering.set()
            return await bench.store.recover_expired(*args, **kwargs)

        recovery_store.recover_expired = hang_after_the_first  # type: ignore[method-assign]
        the_worker = Worker(
            executor=bench.executor(),
            scheduler=WorkScheduler(bench.queue, []),
            recovery=LeaseRecovery(recovery_store),  # type: ignore[arg-type]
            clock=bench.clock,
        )

        async def ten_seconds(ctx: WorkContext) -> None:
            await bench.clock.sleep(10)

        bench.script.on("a", ten_seconds)
        cycle = asyncio.create_task(the_worker.run_cycle())
        # "a" outlasts the poll interval, so a recovery pass (which hangs) follows it, "b" held.
        await bench.clock.advance(10)
        held = (await bench.item(second)).status

        cycle.cancel()
        await asyncio.gather(cycle, return_exceptions=True)

        assert held is WorkStatus.RUNNING
        released = await bench.item(second)
        assert (released.status, released.attempt, released.stalls) == (WorkStatus.QUEUED, 1, 0)
        assert bench.script.started == ["a"]
