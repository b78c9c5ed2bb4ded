"""The executor runs one item at a time, oldest first, of its registry's kinds only."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from service_bench import Bench, StoreSpy, start, status_of

from workqueue.application import ExecutionOutcome, ExecutionStatus
from workqueue.domain import WorkContext, WorkStatus


class TestOneAtATime:
    async def test_items_run_one_at_a_time_in_the_order_they_were_enqueued(
        self, bench: Bench
    ) -> None:
        async def one_second(ctx: WorkContext) -> None:
            await bench.clock.sleep(1)

        for label in ("a", "b", "c"):
            bench.script.on(label, one_second)
        ids = [await bench.enqueue(label) for label in ("a", "b", "c")]
        executor = bench.executor()

        async def drain() -> list[ExecutionOutcome]:
            outcomes = []
            while (outcome := await executor.run_next()) is not None:
                outcomes.append(outcome)
            return outcomes

        draining = asyncio.create_task(drain())
        await bench.clock.advance(3)
        outcomes = await draining

        assert [outcome.item_id for outcome in outcomes] == ids
        assert bench.script.started == ["a", "b", "c"]
        assert bench.script.most_running == 1
        assert [outcome.duration for outcome in outcomes] == [1.0, 1.0, 1.0]

    async def test_a_second_run_next_while_one_runs_is_refused(self, bench: Bench) -> None:
        await bench.enqueue("a")
        await bench.enqueue("b")
        done = bench.script.block("a")
        executor = bench.executor()
        run = start(bench, executor)
        await bench.clock.settle()

        with pytest.raises(RuntimeError, match="one item at a time"):
            await executor.run_next()

        done.set()
        await run
        assert bench.script.started == ["a"]

    async def test_nothing_queued_means_no_outcome(self, bench: Bench) -> None:
        assert await bench.executor().run_next() is None

    async def test_only_the_registry_kinds_are_claimed(self, bench: Bench) -> None:
        spy = StoreSpy(bench.store)
        claimed_kinds: list[frozenset[str]] = []

        async def claim(kinds: Any, **kwargs: Any) -> Any:
            claimed_kinds.append(frozenset(kinds))
            return await bench.store.claim(kinds, **kwargs)

        spy.claim = claim  # type: ignore[method-assign]
        await bench.executor(store=spy).run_next()

        assert claimed_kinds == [frozenset({"alpha", "beta"})]


class TestState:
    async def test_a_new_executor_runs_items_and_once_stopped_claims_none(
        self, bench: Bench
    ) -> None:
        ids = [await bench.enqueue("a"), await bench.enqueue("b")]
        spy = StoreSpy(bench.store)
        executor = bench.executor(store=spy)
        assert status_of(await executor.run_next()) is ExecutionStatus.SUCCEEDED

        executor.stop()

        assert await executor.run_next() is None
        assert spy.calls == ["claim", "finish succeeded"]
        assert [(await bench.item(item_id)).status for item_id in ids] == [
            WorkStatus.SUCCEEDED,
            WorkStatus.QUEUED,
        ]

    async def test_after_one_item_the_executor_takes_the_next(self, bench: Bench) -> None:
        await bench.enqueue("a")
        await bench.enqueue("b")
        executor = bench.executor()

        first = await executor.run_next()
        second = await executor.run_next()

        assert (first, second) != (None, None)
        assert bench.script.returned == ["a", "b"]

    async def test_the_busy_refusal_says_why(self, bench: Bench) -> None:
        await bench.enqueue("a")
        done = bench.script.block("a")
        executor = bench.executor()
        run = start(bench, executor)
        await bench.clock.settle()

        with pytest.raises(RuntimeError) as raised:
            await executor.run_next()

        assert str(raised.value) == (
            "run_next is already running: a WorkExecutor runs one item at a time"
        )
        done.set()
        await run
