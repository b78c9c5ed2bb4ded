"""A worker that runs item after item completes each success and claims the next
item in one store call; the executor holds that item for its next run, and whatever
ends the run hands a held item back."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from datetime import timedelta
from typing import Any

from service_bench import (
    Bench,
    StoreSpy,
    status_of,
)

from workqueue.adapters.memory import InMemoryWorkStore
from workqueue.application import ExecutionStatus, WorkExecutor
from workqueue.domain import (
    Lease,
    RunOutcome,
    StoreUnavailableError,
    WorkContext,
    WorkItem,
    WorkStatus,
)
from workqueue.domain.store import WorkStore


class PlainStore(InMemoryWorkStore):
    """The in-memory store with the port's own complete_and_claim: finish, then claim."""

    complete_and_claim = WorkStore.complete_and_claim

    def __init__(self, bench: Bench) -> None:
        super().__init__(bench.state, bench.clock)
        self.calls: list[str] = []

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        self.calls.append("claim")
        return await super().claim(kinds, worker_id=worker_id, lease_duration=lease_duration)

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        self.calls.append(f"finish {outcome.ending}")
        return await super().finish(lease, outcome)


async def held_item(executor: WorkExecutor) -> int | None:
    """The item the executor held for its next run, handed back now; None if it held none."""
    released = await executor.release_held()
    return None if released is None else released.item_id


async def status(bench: Bench, item_id: int) -> tuple[WorkStatus, int, int]:
    item = await bench.item(item_id)
    return item.status, item.attempt, item.stalls


class TestClaimNext:
    async def test_a_success_is_completed_with_the_next_claim_in_one_call(
        self, bench: Bench
    ) -> None:
        first = await bench.enqueue("a")
        second = await bench.enqueue("b")
        spy = StoreSpy(bench.store)
        executor = bench.executor(store=spy)

        outcome = await executor.run_next(claim_next=True)

        assert outcome is not None
        assert (outcome.item_id, outcome.status) == (first, ExecutionStatus.SUCCEEDED)
        assert spy.calls == ["claim", "complete_and_claim"]
        assert await status(bench, first) == (WorkStatus.SUCCEEDED, 1, 0)
        held = await bench.item(second)
        assert (held.status, held.worker_id) == (WorkStatus.RUNNING, "worker-1")
        assert held.lease_expires_at == bench.clock.now() + timedelta(seconds=60)
        assert await held_item(executor) == second

    async def test_the_held_item_is_run_next_without_another_claim(self, bench: Bench) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        spy = StoreSpy(bench.store)
        executor = bench.executor(store=spy)
        await executor.run_next(claim_next=True)

        outcome = await executor.run_next(claim_next=True)

        assert outcome is not None
        assert (outcome.item_id, outcome.status) == (second, ExecutionStatus.SUCCEEDED)
        assert spy.calls == ["claim", "complete_and_claim", "complete_and_claim"]
        assert bench.script.returned == ["a", "b"]
        assert await held_item(executor) is None
        assert await executor.run_next(claim_next=True) is None

    async def test_without_claim_next_nothing_is_claimed_along(self, bench: Bench) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        spy = StoreSpy(bench.store)
        executor = bench.executor(store=spy)

        await executor.run_next()

        assert spy.calls == ["claim", "finish succeeded"]
        assert await status(bench, second) == (WorkStatus.QUEUED, 0, 0)
        assert await held_item(executor) is None

    async def test_a_held_item_is_run_by_a_plain_run_next_too(self, bench: Bench) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        executor = bench.executor()
        await executor.run_next(claim_next=True)

        outcome = await executor.run_next()

        assert outcome is not None
        assert outcome.item_id == second
        assert await status(bench, second) == (WorkStatus.SUCCEEDED, 1, 0)

    async def test_a_failure_claims_nothing_along(self, bench: Bench) -> None:
        first = await bench.enqueue("a")
        second = await bench.enqueue("b")
        bench.script.fail_with("a", ValueError("nope"))
        executor = bench.executor()

        outcome = await executor.run_next(claim_next=True)

        assert status_of(outcome) is ExecutionStatus.FAILED
        assert await status(bench, first) == (WorkStatus.FAILED, 1, 0)
        assert await status(bench, second) == (WorkStatus.QUEUED, 0, 0)
        assert await held_item(executor) is None

    async def test_a_store_without_its_own_combined_call_completes_then_claims(
        self, bench: Bench
    ) -> None:
        first = await bench.enqueue("a")
        second = await bench.enqueue("b")
        plain = PlainStore(bench)
        executor = bench.executor(store=plain)

        await executor.run_next(claim_next=True)
        await executor.run_next(claim_next=True)

        assert plain.calls == ["claim", "finish succeeded", "claim", "finish succeeded", "claim"]
        assert await status(bench, first) == (WorkStatus.SUCCEEDED, 1, 0)
        assert await status(bench, second) == (WorkStatus.SUCCEEDED, 1, 0)

    async def test_a_retry_after_an_unreachable_store_completes_only(self, bench: Bench) -> None:
        first = await bench.enqueue("a")
        second = await bench.enqueue("b")
        spy = StoreSpy(bench.store)

        async def unreachable(*args: Any, **kwargs: Any) -> Any:
            spy.calls.append("complete_and_claim")
            raise StoreUnavailableError("connection lost")

        spy.complete_and_claim = unreachable  # type: ignore[method-assign]
        executor = bench.executor(store=spy)

        run = asyncio.create_task(executor.run_next(claim_next=True))
        await bench.clock.advance(1)
        outcome = await run

        assert status_of(outcome) is ExecutionStatus.SUCCEEDED
        assert spy.calls == ["claim", "complete_and_claim", "finish succeeded"]
        assert await status(bench, first) == (WorkStatus.SUCCEEDED, 1, 0)
        assert await status(bench, second) == (WorkStatus.QUEUED, 0, 0)
        assert await held_item(executor) is None

    async def test_a_handler_that_returns_while_stopping_claims_nothing_along(
        self, bench: Bench
    ) -> None:
        first = await bench.enqueue("a")
        second = await bench.enqueue("b")

        async def finish_anyway(ctx: WorkContext) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                return

        bench.script.on("a", finish_anyway)
        executor = bench.executor()
        run = asyncio.create_task(executor.run_next(claim_next=True))
        await bench.clock.settle()

        executor.stop()
        outcome = await run

        assert status_of(outcome) is ExecutionStatus.SUCCEEDED
        assert await status(bench, first) == (WorkStatus.SUCCEEDED, 1, 0)
        assert await status(bench, second) == (WorkStatus.QUEUED, 0, 0)
        assert await held_item(executor) is None


class TestReleasingTheHeldItem:
    async def test_release_held_hands_the_item_back_without_a_stall(self, bench: Bench) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        executor = bench.executor()
        await executor.run_next(claim_next=True)

        outcome = await executor.release_held()

        assert outcome is not None
        assert (outcome.item_id, outcome.status) == (second, ExecutionStatus.RELEASED)
        assert await status(bench, second) == (WorkStatus.QUEUED, 1, 0)
        assert await executor.release_held() is None

    async def test_release_held_with_nothing_held_writes_nothing(self, bench: Bench) -> None:
        spy = StoreSpy(bench.store)
        executor = bench.executor(store=spy)

        assert await executor.release_held() is None
        assert spy.calls == []

    async def test_shutdown_waits_for_a_release_of_the_held_item_in_flight(
        self, bench: Bench
    ) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        spy = StoreSpy(bench.store)
        answer = asyncio.Event()

        async def slow_release(lease: Lease, outcome: RunOutcome) -> bool:
            await answer.wait()
            return await bench.store.finish(lease, outcome)

        spy.overrides["finish released"] = slow_release
        executor = bench.executor(store=spy)
        await executor.run_next(claim_next=True)
        releasing = asyncio.create_task(executor.release_held())
        await bench.clock.settle()

        shutting_down = asyncio.create_task(executor.shutdown())
        await bench.clock.settle()
        waited = not shutting_down.done()
        answer.set()
        await shutting_down

        assert waited
        assert releasing.done()
        assert await status(bench, second) == (WorkStatus.QUEUED, 1, 0)

    async def test_a_stopping_executor_releases_the_held_item_instead_of_running_it(
        self, bench: Bench
    ) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        executor = bench.executor()
        await executor.run_next(claim_next=True)

        executor.stop()

        assert await executor.run_next(claim_next=True) is None
        assert await status(bench, second) == (WorkStatus.QUEUED, 1, 0)
        assert bench.script.started == ["a"]
        assert await held_item(executor) is None

    async def test_shutdown_releases_the_held_item(self, bench: Bench) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        executor = bench.executor()
        await executor.run_next(claim_next=True)

        await executor.shutdown()

        assert await status(bench, second) == (WorkStatus.QUEUED, 1, 0)
        assert await held_item(executor) is None

    async def test_an_unreachable_store_is_tried_three_times_then_left_to_recovery(
        self, bench: Bench
    ) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        spy = StoreSpy(bench.store)
        executor = bench.executor(store=spy)
        await executor.run_next(claim_next=True)
        bench.state.unavailable = True

        release = asyncio.create_task(executor.release_held())
        await bench.clock.advance(1)
        outcome = await release
        bench.state.unavailable = False

        assert status_of(outcome) is ExecutionStatus.ABANDONED
        assert spy.count("finish released") == 3
        assert await status(bench, second) == (WorkStatus.RUNNING, 1, 0)


class TestTheProgressEachItemKeeps:
    async def test_a_success_completed_with_the_next_claim_keeps_the_progress_it_reported(
        self,
        bench: Bench,
    ) -> None:
        first = await bench.enqueue("a")
        second = await bench.enqueue("b")

        async def report(ctx: WorkContext) -> None:
            ctx.report_progress({"done": 1})

        bench.script.on("a", report)
        executor = bench.executor()

        await executor.run_next(claim_next=True)

        item = await bench.item(first)
        assert (item.status, item.progress) == (WorkStatus.SUCCEEDED, {"done": 1})
        assert await held_item(executor) == second

    async def test_a_held_item_handed_back_keeps_the_progress_of_its_earlier_attempt(
        self,
        bench: Bench,
    ) -> None:
        await bench.enqueue("a")
        second = await bench.enqueue("b")
        first_lease = (await bench.claim_as_dead_worker()).lease
        second_lease = (await bench.claim_as_dead_worker()).lease
        await bench.store.finish(second_lease, RunOutcome.released({"step": 2}))
        await bench.store.finish(first_lease, RunOutcome.released(None))
        executor = bench.executor()
        await executor.run_next(claim_next=True)

        assert await held_item(executor) == second

        item = await bench.item(second)
        assert (item.status, item.progress) == (WorkStatus.QUEUED, {"step": 2})

    async def test_a_caller_cancelled_after_its_handler_returned_completes_and_claims_nothing_along(
        self,
        bench: Bench,
    ) -> None:
        first = await bench.enqueue("a")
        second = await bench.enqueue("b")
        executor = bench.executor()
        run: asyncio.Task[object] | None = None

        async def cancel_the_caller_then_return(ctx: WorkContext) -> None:
            assert run is not None
            run.cancel()

        bench.script.on("a", cancel_the_caller_then_return)
        run = asyncio.create_task(executor.run_next(claim_next=True))
        await bench.clock.settle()

        assert run.cancelled()
        assert (await bench.item(first)).status is WorkStatus.SUCCEEDED
        assert (await bench.item(second)).status is WorkStatus.QUEUED
        assert await held_item(executor) is None
