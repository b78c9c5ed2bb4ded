"""A cancel requested while a handler runs reaches it at the next heartbeat: the handler is
cancelled, and the item is marked cancelled, fenced by the lease, however the handler ends."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import pytest
from service_bench import EXECUTOR_LOG, Bench, StoreSpy, executor_lines, fenced, start, status_of

from workqueue.application import ExecutionStatus
from workqueue.domain import CancelOutcome, WorkContext, WorkStatus

REASON = "wrong customer"


class TestARequestedCancel:
    async def test_cancels_the_handler_at_the_next_heartbeat_and_marks_the_item_cancelled(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()
        await bench.clock.advance(2)  # one heartbeat without a request: nothing happens
        assert bench.script.cancelled == []

        assert await bench.store.cancel(item_id, reason=REASON) is CancelOutcome.REQUESTED
        await bench.clock.advance(1.9)
        assert not run.done(), "the request waits for the next heartbeat"
        await bench.clock.advance(0.1)
        outcome = await run

        assert status_of(outcome) is ExecutionStatus.CANCELLED
        assert bench.script.cancelled == ["a"]
        item = await bench.item(item_id)
        assert (item.status, item.error) == (WorkStatus.CANCELLED, REASON)
        assert item.finished_at == bench.clock.now()

    async def test_writes_the_progress_the_handler_last_reported(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()
        bench.script.contexts["a"].report_progress({"pages": 3})
        await bench.store.cancel(item_id, reason=REASON)
        await bench.clock.advance(2)
        await run

        assert (await bench.item(item_id)).progress == {"pages": 3}

    async def test_a_handler_that_swallows_the_cancellation_ends_cancelled_once_it_returns(
        self, bench: Bench
    ) -> None:
        carry_on = asyncio.Event()

        async def stubborn(ctx: WorkContext) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                await carry_on.wait()  # cleans up for a while, then returns as if done

        bench.script.on("a", stubborn)
        item_id = await bench.enqueue("a")
        run = start(bench)
        await bench.clock.settle()
        await bench.store.cancel(item_id, reason=REASON)
        await bench.clock.advance(2)
        for _ in range(40):  # the lease is kept while it cleans up: 80 s, beyond one lease
            await bench.clock.advance(2)
        assert not run.done()
        assert (await bench.item(item_id)).status is WorkStatus.RUNNING

        carry_on.set()
        outcome = await run

        assert status_of(outcome) is ExecutionStatus.CANCELLED
        assert (await bench.item(item_id)).status is WorkStatus.CANCELLED

    async def test_a_handler_that_raises_while_cancelled_ends_cancelled_not_failed(
        self, bench: Bench
    ) -> None:
        async def raises_instead(ctx: WorkContext) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                raise RuntimeError("interrupted") from None

        bench.script.on("a", raises_instead)
        item_id = await bench.enqueue("a")
        run = start(bench)
        await bench.clock.settle()
        await bench.store.cancel(item_id, reason=REASON)
        await bench.clock.advance(2)

        assert status_of(await run) is ExecutionStatus.CANCELLED
        item = await bench.item(item_id)
        assert (item.status, item.error) == (WorkStatus.CANCELLED, REASON)

    async def test_the_error_of_a_handler_that_raises_while_cancelled_is_observed(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def raises_instead(ctx: WorkContext) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                raise RuntimeError("interrupted") from None

        bench.script.on("a", raises_instead)
        item_id = await bench.enqueue("a")
        run = start(bench)
        await bench.clock.settle()
        await bench.store.cancel(item_id, reason=REASON)
        await bench.clock.advance(2)
        await run
        del run
        bench.script.contexts.clear()
        gc.collect()

        assert [r for r in caplog.records if "never retrieved" in r.getMessage()] == []

    async def test_a_handler_that_returns_before_the_heartbeat_learns_of_it_succeeds(
        self, bench: Bench
    ) -> None:
        done = bench.script.block("a")
        item_id = await bench.enqueue("a")
        run = start(bench)
        await bench.clock.settle()
        await bench.store.cancel(item_id, reason=REASON)

        done.set()

        assert status_of(await run) is ExecutionStatus.SUCCEEDED
        assert (await bench.item(item_id)).status is WorkStatus.SUCCEEDED

    async def test_a_cancel_answer_that_comes_as_the_handler_returns_leaves_it_succeeded(
        self, bench: Bench
    ) -> None:
        spy = StoreSpy(bench.store)
        done = bench.script.block("a")
        item_id = await bench.enqueue("a")

        async def answer_as_the_handler_returns(*args: Any, **kwargs: Any) -> Any:
            # The handler returns, and the heartbeat's answer (a cancel was requested)
            # reaches the lease keeper before the keeper is stopped.
            done.set()
            return await bench.store.heartbeat(*args, **kwargs)

        spy.overrides["heartbeat"] = answer_as_the_handler_returns
        run = start(bench, bench.executor(store=spy))
        await bench.clock.settle()
        await bench.store.cancel(item_id, reason=REASON)
        await bench.clock.advance(2)

        assert status_of(await run) is ExecutionStatus.SUCCEEDED
        item = await bench.item(item_id)
        assert (item.status, item.error, item.cancel_reason) == (
            WorkStatus.SUCCEEDED,
            None,
            REASON,
        )

    async def test_is_written_fenced_and_a_lost_lease_writes_nothing(self, bench: Bench) -> None:
        spy = StoreSpy(bench.store)
        fenced(spy, "finish cancelled")
        bench.script.block("a")
        item_id = await bench.enqueue("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.settle()
        await bench.store.cancel(item_id, reason=REASON)
        await bench.clock.advance(2)

        outcome = await run

        assert status_of(outcome) is ExecutionStatus.LEASE_LOST
        assert (await bench.item(item_id)).status is WorkStatus.RUNNING

    async def test_is_logged_as_a_warning_naming_the_item(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger=EXECUTOR_LOG)
        bench.script.block("a")
        item_id = await bench.enqueue("a")
        run = start(bench)
        await bench.clock.settle()
        await bench.store.cancel(item_id, reason=REASON)
        await bench.clock.advance(2)
        await run

        assert executor_lines(caplog) == [
            ("WARNING", f"alpha item {item_id} cancelled on request (attempt 1)")
        ]

    async def test_leaves_another_workers_item_running(self, bench: Bench) -> None:
        bench.script.block("a")
        other_done = bench.script.block("b")
        cancelled_id = await bench.enqueue("a")
        other_id = await bench.enqueue("b")
        first = start(bench, bench.executor(worker_id="worker-1"))
        await bench.clock.settle()
        second = start(bench, bench.executor(worker_id="worker-2"))
        await bench.clock.settle()
        await bench.store.cancel(cancelled_id, reason=REASON)

        await bench.clock.advance(2)
        assert status_of(await first) is ExecutionStatus.CANCELLED
        await bench.clock.advance(2)
        assert not second.done()
        assert bench.script.cancelled == ["a"]
        assert (await bench.item(other_id)).status is WorkStatus.RUNNING

        other_done.set()
        assert status_of(await second) is ExecutionStatus.SUCCEEDED

    async def test_a_worker_stopping_meanwhile_still_marks_the_item_cancelled(
        self, bench: Bench
    ) -> None:
        bench.script.block("a")
        item_id = await bench.enqueue("a")
        executor = bench.executor()
        run = start(bench, executor)
        await bench.clock.settle()
        await bench.store.cancel(item_id, reason=REASON)
        await bench.clock.advance(2)

        executor.stop()

        assert status_of(await run) is ExecutionStatus.CANCELLED
        assert (await bench.item(item_id)).status is WorkStatus.CANCELLED

    async def test_a_worker_stopping_before_the_heartbeat_learns_of_it_cancels_it_on_release(
        self, bench: Bench
    ) -> None:
        bench.script.block("a")
        item_id = await bench.enqueue("a")
        executor = bench.executor()
        run = start(bench, executor)
        await bench.clock.settle()
        await bench.store.cancel(item_id, reason=REASON)

        await executor.shutdown()

        assert status_of(await run) is ExecutionStatus.RELEASED
        item = await bench.item(item_id)
        assert (item.status, item.error) == (WorkStatus.CANCELLED, REASON)
