"""A stopping executor, or one whose caller is cancelled, cancels the running handler
and releases its item without a stall, promptly even when the store is unreachable."""

from __future__ import annotations

import asyncio
from typing import Any

from service_bench import (
    Bench,
    StoreSpy,
    start,
    status_of,
)

from workqueue.application import ExecutionStatus
from workqueue.domain import WorkContext, WorkStatus


class TestShutdown:
    async def test_shutdown_releases_the_running_item_without_a_stall_and_without_waiting(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        executor = bench.executor()
        run = start(bench, executor)
        await bench.clock.settle()
        bench.script.contexts["a"].report_progress({"step": 3})
        before = bench.clock.now()

        shutdown = asyncio.create_task(executor.shutdown())
        await bench.clock.settle()

        assert shutdown.done()
        assert run.done()
        assert bench.clock.now() == before
        outcome = run.result()
        assert status_of(outcome) is ExecutionStatus.RELEASED
        assert bench.script.cancelled == ["a"]
        item = await bench.item(item_id)
        assert (item.status, item.stalls, item.attempt) == (WorkStatus.QUEUED, 0, 1)
        assert (item.progress, item.worker_id) == ({"step": 3}, None)

    async def test_after_shutdown_nothing_is_claimed_and_shutdown_may_be_repeated(
        self, bench: Bench
    ) -> None:
        executor = bench.executor()
        await executor.shutdown()
        item_id = await bench.enqueue("a")

        assert await executor.run_next() is None
        await executor.shutdown()
        assert (await bench.item(item_id)).status is WorkStatus.QUEUED
        assert bench.script.started == []

    async def test_the_next_attempt_starts_from_the_progress_a_released_attempt_left(
        self, bench: Bench
    ) -> None:
        await bench.enqueue("a")
        bench.script.block("a")
        first = bench.executor(worker_id="worker-1")
        run = start(bench, first)
        await bench.clock.settle()
        bench.script.contexts["a"].report_progress({"rows": 40})
        await first.shutdown()
        await run

        bench.script.on("a", lambda ctx: asyncio.sleep(0))
        outcome = await bench.executor(worker_id="worker-2").run_next()

        assert outcome is not None
        assert outcome.attempt == 2
        ctx = bench.script.contexts["a"]
        assert (ctx.attempt, ctx.progress) == (2, {"rows": 40})

    async def test_a_stop_while_the_claim_is_in_flight_hands_the_item_back_unrun(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        spy = StoreSpy(bench.store)
        claim_answered = asyncio.Event()

        async def slow_claim(*args: Any, **kwargs: Any) -> Any:
            await claim_answered.wait()
            return await bench.store.claim(*args, **kwargs)

        spy.claim = slow_claim  # type: ignore[method-assign]
        executor = bench.executor(store=spy)
        run = start(bench, executor)
        await bench.clock.settle()

        executor.stop()
        claim_answered.set()
        outcome = await run

        assert status_of(outcome) is ExecutionStatus.RELEASED
        assert bench.script.started == []
        item = await bench.item(item_id)
        assert (item.status, item.stalls) == (WorkStatus.QUEUED, 0)

    async def test_shutdown_with_the_store_unavailable_gives_up_promptly(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        executor = bench.executor()
        run = start(bench, executor)
        await bench.clock.settle()

        bench.state.unavailable = True
        shutdown = asyncio.create_task(executor.shutdown())
        await bench.clock.advance(0.5)

        assert shutdown.done()
        outcome = run.result()
        assert status_of(outcome) is ExecutionStatus.ABANDONED
        bench.state.unavailable = False
        assert (await bench.item(item_id)).status is WorkStatus.RUNNING

    async def test_cancelling_the_caller_cancels_the_handler_and_releases_the_item(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()

        run.cancel()
        await bench.clock.settle()

        assert run.cancelled()
        assert bench.script.cancelled == ["a"]
        item = await bench.item(item_id)
        assert (item.status, item.stalls) == (WorkStatus.QUEUED, 0)

    async def test_a_handler_that_turns_its_cancellation_into_an_error_is_released_not_failed(
        self, bench: Bench
    ) -> None:
        async def translating(ctx: WorkContext) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                raise ConnectionAbortedError("client closed") from None

        bench.script.on("a", translating)
        item_id = await bench.enqueue("a")
        executor = bench.executor()
        run = start(bench, executor)
        await bench.clock.settle()

        await executor.shutdown()

        assert status_of(run.result()) is ExecutionStatus.RELEASED
        item = await bench.item(item_id)
        assert (item.status, item.error) == (WorkStatus.QUEUED, None)

    async def test_cancelling_the_caller_with_the_store_unavailable_gives_up_promptly(
        self, bench: Bench
    ) -> None:
        await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()

        bench.state.unavailable = True
        run.cancel()
        await bench.clock.advance(0.5)

        assert run.cancelled()

    async def test_cancelling_the_caller_after_the_lease_was_lost_writes_nothing(
        self, bench: Bench
    ) -> None:
        handler_cancelled = asyncio.Event()

        async def slow_to_stop(ctx: WorkContext) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                handler_cancelled.set()
                await asyncio.Event().wait()

        bench.script.on("a", slow_to_stop)
        spy = StoreSpy(bench.store)

        async def fenced(*args: Any, **kwargs: Any) -> bool:
            return False

        spy.heartbeat = fenced  # type: ignore[method-assign]
        await bench.enqueue("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.advance(2)
        assert handler_cancelled.is_set()

        run.cancel()  # the handler is cancelled once more and gives up
        await bench.clock.settle()

        assert run.cancelled()
        assert spy.calls == ["claim"]
