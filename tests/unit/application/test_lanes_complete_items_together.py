"""Lanes of one process that finish items together complete them and claim the next ones
in one store call, each completion still fenced by its own lease, the claims FIFO."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from service_bench import Bench, StoreSpy

from workqueue.application import ExecutionOutcome, ExecutionStatus, ExecutorSettings, WorkExecutor
from workqueue.application.completions import SharedCompletions
from workqueue.domain import StoreUnavailableError, WorkContext, WorkItem, WorkStatus

Run = asyncio.Task[ExecutionOutcome | None]


class Lanes:
    """Executors of one process sharing their completions, over a spy of the bench's store."""

    def __init__(self, bench: Bench, count: int) -> None:
        self.bench = bench
        self.spy = StoreSpy(bench.store)
        settings = ExecutorSettings()
        self.completions = SharedCompletions(
            self.spy,  # type: ignore[arg-type]
            kinds=bench.registry.kinds,
            worker_id="lanes",
            lease_duration=settings.lease_duration,
        )
        self.executors = [
            WorkExecutor(
                self.spy,  # type: ignore[arg-type]
                bench.registry,
                bench.clock,
                worker_id="lanes",
                settings=settings,
                completions=self.completions,
            )
            for _ in range(count)
        ]
        self.runs: list[Run] = []

    async def run_all(self) -> None:
        """One run of each lane, claiming the next item with its completion; all started."""
        self.runs = [
            asyncio.create_task(executor.run_next(claim_next=True)) for executor in self.executors
        ]
        await self.bench.clock.settle()

    async def first_stops_while_completing(self, together: Together) -> list[WorkItem | None]:
        """Run every lane, hold their batch of completions, and cancel the first lane meanwhile.

        :returns: what the batch claimed, filled in once the batch is let go on
            (settle the clock for that).
        """
        go_on = asyncio.Event()
        claimed: list[WorkItem | None] = []
        store = self.bench.store

        async def held_back(completions: list[Any], **kwargs: Any) -> Any:
            await go_on.wait()
            answers = await store.complete_and_claim_many(completions, **kwargs)
            claimed.extend(item for _, item in answers)
            return answers

        self.spy.complete_and_claim_many = held_back  # type: ignore[method-assign]
        await self.run_all()
        await together.let_go()
        self.runs[0].cancel()
        await asyncio.gather(self.runs[0], return_exceptions=True)
        go_on.set()
        return claimed

    async def held(self) -> list[int | None]:
        """The item each lane held for its next run, handed back now (None: it held none)."""
        released = [await executor.release_held() for executor in self.executors]
        return [None if outcome is None else outcome.item_id for outcome in released]


@pytest.fixture
def lanes(bench: Bench) -> Iterator[Lanes]:
    lanes = Lanes(bench, 3)
    yield lanes
    for run in lanes.runs:
        run.cancel()


class Together:
    """Items whose handlers all return at once, in one turn of the loop, when let go."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.go = asyncio.Event()

    async def enqueue(self, *labels: str) -> list[int]:
        async def wait(ctx: WorkContext) -> None:
            ctx.report_progress({"waited": True})
            await self.go.wait()

        for label in labels:
            self.bench.script.on(label, wait)
        return [await self.bench.enqueue(label) for label in labels]

    async def let_go(self) -> None:
        self.go.set()
        await self.bench.clock.settle()


@pytest.fixture
def together(bench: Bench) -> Together:
    return Together(bench)


def outcome_statuses(runs: list[Run]) -> list[ExecutionStatus | None]:
    return [None if run.result() is None else run.result().status for run in runs]  # type: ignore[union-attr]


class TestLanesFinishingTogether:
    async def test_three_lanes_complete_and_claim_in_one_store_call_oldest_first(
        self, bench: Bench, lanes: Lanes, together: Together
    ) -> None:
        ids = await together.enqueue("a", "b", "c", "d", "e", "f")
        await lanes.run_all()

        await together.let_go()
        await asyncio.gather(*lanes.runs)

        assert outcome_statuses(lanes.runs) == [ExecutionStatus.SUCCEEDED] * 3
        assert (
            lanes.spy.count("complete_and_claim_many"),
            lanes.spy.count("finish succeeded"),
        ) == (1, 0)
        assert lanes.spy.count("complete_and_claim") == 0
        assert [(await bench.item(i)).status for i in ids] == [WorkStatus.SUCCEEDED] * 3 + [
            WorkStatus.RUNNING
        ] * 3
        assert [(await bench.item(i)).progress for i in ids[:3]] == [{"waited": True}] * 3
        # Each lane runs the item it holds, with no claim of its own.
        claims = lanes.spy.count("claim")
        await lanes.run_all()
        assert bench.script.started == ["a", "b", "c", "d", "e", "f"]
        assert lanes.spy.count("claim") == claims

    async def test_when_fewer_items_are_queued_the_last_lanes_hold_none(
        self, bench: Bench, lanes: Lanes, together: Together
    ) -> None:
        ids = await together.enqueue("a", "b", "c", "d")
        await lanes.run_all()

        await together.let_go()
        await asyncio.gather(*lanes.runs)

        assert (await bench.item(ids[3])).worker_id == "lanes"
        assert await lanes.held() == [ids[3], None, None]

    async def test_a_lane_finishing_alone_completes_on_its_own(
        self, bench: Bench, lanes: Lanes, together: Together
    ) -> None:
        first = bench.script.block("a")
        second = bench.script.block("b")
        for label in ("a", "b"):
            await bench.enqueue(label)
        await lanes.run_all()

        first.set()
        await asyncio.gather(lanes.runs[0])
        second.set()
        await asyncio.gather(*lanes.runs)

        assert lanes.spy.count("complete_and_claim_many") == 2
        assert outcome_statuses(lanes.runs) == [ExecutionStatus.SUCCEEDED] * 2 + [None]


class TestEachCompletionOnItsOwn:
    async def test_a_lost_lease_is_lost_for_its_lane_only(
        self, bench: Bench, lanes: Lanes, together: Together
    ) -> None:
        lost, kept = await together.enqueue("a", "b")
        await lanes.run_all()
        bench.take_over(lost)

        await together.let_go()
        await asyncio.gather(*lanes.runs)

        assert outcome_statuses(lanes.runs) == [
            ExecutionStatus.LEASE_LOST,
            ExecutionStatus.SUCCEEDED,
            None,
        ]
        assert (await bench.item(lost)).status is WorkStatus.RUNNING
        assert (await bench.item(kept)).status is WorkStatus.SUCCEEDED

    async def test_an_unreachable_store_fails_each_completion_and_each_lane_retries_alone(
        self, bench: Bench, lanes: Lanes, together: Together
    ) -> None:
        ids = await together.enqueue("a", "b")
        calls: list[int] = []

        async def unreachable(completions: list[Any], **kwargs: Any) -> Any:
            calls.append(len(completions))
            raise StoreUnavailableError("connection refused")

        lanes.spy.complete_and_claim_many = unreachable  # type: ignore[method-assign]
        await lanes.run_all()

        await together.let_go()
        await bench.clock.advance(0.05)
        await asyncio.gather(*lanes.runs)

        assert calls == [2]
        assert lanes.spy.count("finish succeeded") == 2
        assert [(await bench.item(i)).status for i in ids] == [WorkStatus.SUCCEEDED] * 2

    async def test_a_store_answering_for_fewer_completions_fails_each_lane_with_a_clear_error(
        self, bench: Bench, lanes: Lanes, together: Together
    ) -> None:
        await together.enqueue("a", "b")

        async def one_answer(completions: list[Any], **kwargs: Any) -> Any:
            return [(True, None)]

        lanes.spy.complete_and_claim_many = one_answer  # type: ignore[method-assign]
        await lanes.run_all()

        await together.let_go()
        results = await asyncio.gather(*lanes.runs[:2], return_exceptions=True)

        assert [str(result) for result in results] == [
            "StoreSpy.complete_and_claim_many answered 1 of 2"
        ] * 2


class TestALaneThatStopsWaiting:
    async def test_the_item_claimed_for_it_is_released_without_a_stall(
        self, bench: Bench, lanes: Lanes, together: Together
    ) -> None:
        *_, next_id = await together.enqueue("a", "b", "c", "d")
        # Progress an earlier attempt left: a release keeps it, as it keeps a held item's.
        bench.state.write(replace(bench.state.items[next_id], progress={"page": 3}))
        claimed = await lanes.first_stops_while_completing(together)
        await bench.clock.settle()
        await asyncio.gather(*lanes.runs[1:])

        first = claimed[0]
        assert first is not None
        item = await bench.item(first.id)
        assert (item.status, item.stalls, item.worker_id) == (WorkStatus.QUEUED, 0, None)
        assert (first.id, item.progress) == (next_id, {"page": 3})
        assert await lanes.held() == [None, None, None]

    async def test_a_release_that_fails_is_logged_and_left_to_lease_recovery(
        self, bench: Bench, lanes: Lanes, together: Together, caplog: pytest.LogCaptureFixture
    ) -> None:
        await together.enqueue("a", "b", "c", "d")

        async def unreachable(*args: Any, **kwargs: Any) -> bool:
            raise StoreUnavailableError("connection refused")

        lanes.spy.overrides["finish released"] = unreachable
        await lanes.first_stops_while_completing(together)
        await bench.clock.settle()

        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert [r.getMessage() for r in warnings][-1:] == [
            "could not release alpha item 4, claimed for a lane that stopped: "
            "connection refused; lease recovery will requeue it"
        ]
        assert (getattr(warnings[-1], "item_id", None), getattr(warnings[-1], "kind", None)) == (
            4,
            "alpha",
        )
        assert getattr(warnings[-1], "attempt", None) == 1
