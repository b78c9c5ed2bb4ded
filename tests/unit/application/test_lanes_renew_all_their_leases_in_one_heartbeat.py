"""The lanes of one process renew all their leases in one store call per heartbeat
interval, each lease still fenced and answered on its own, each item's progress its own."""

from __future__ import annotations

import asyncio
import gc
import logging
import weakref
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from service_bench import Bench, StoreSpy, seconds

from workqueue.application import ExecutionOutcome, ExecutionStatus, ExecutorSettings, WorkExecutor
from workqueue.application.beats import SharedHeartbeats
from workqueue.domain import HeartbeatAnswer, StoreUnavailableError, WorkStatus

HEARTBEAT_LOG = "workqueue.heartbeat"

Run = asyncio.Task[ExecutionOutcome | None]


class Lanes:
    """Executors of one process sharing their heartbeats, over a spy of the bench's store."""

    def __init__(self, bench: Bench, *, settings: ExecutorSettings | None = None) -> None:
        self.bench = bench
        self.spy = StoreSpy(bench.store)
        settings = ExecutorSettings() if settings is None else settings
        self.heartbeats = SharedHeartbeats(
            self.spy,  # type: ignore[arg-type]
            bench.clock,
            interval=settings.heartbeat_interval,
            lease_duration=settings.lease_duration,
        )
        self.settings = settings
        self.runs: list[Run] = []

    def executor(self) -> WorkExecutor:
        return WorkExecutor(
            self.spy,  # type: ignore[arg-type]
            self.bench.registry,
            self.bench.clock,
            worker_id="worker-1",
            settings=self.settings,
            heartbeats=self.heartbeats,
        )

    async def run(self, label: str) -> tuple[int, asyncio.Event]:
        """Enqueue ``label``, blocked until the returned event is set, and start a lane on it."""
        item_id = await self.bench.enqueue(label)
        release = self.bench.script.block(label)
        self.runs.append(asyncio.create_task(self.executor().run_next()))
        await self.bench.clock.settle()
        return item_id, release

    def beats(self) -> int:
        return self.spy.count("heartbeat_many")


@pytest.fixture
def lanes(bench: Bench) -> Iterator[Lanes]:
    lanes = Lanes(bench)
    yield lanes
    for run in lanes.runs:
        run.cancel()


def heartbeat_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == HEARTBEAT_LOG]


class TestOneStoreCallPerInterval:
    async def test_three_running_items_are_renewed_together_each_with_its_own_progress(
        self, bench: Bench, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        t0 = bench.clock.now()
        ids = [(await lanes.run(label))[0] for label in ("a", "b", "c")]
        for number, label in enumerate(("a", "b", "c")):
            bench.script.contexts[label].report_progress({"item": label, "n": number})

        await bench.clock.advance(2)

        assert (lanes.beats(), lanes.spy.count("heartbeat")) == (1, 0)
        for number, (item_id, label) in enumerate(zip(ids, ("a", "b", "c"), strict=True)):
            item = await bench.item(item_id)
            assert (item.heartbeat_at, item.lease_expires_at, item.progress) == (
                t0 + seconds(2),
                t0 + seconds(62),
                {"item": label, "n": number},
            )

        await bench.clock.advance(2)
        assert lanes.beats() == 2
        assert [(await bench.item(i)).heartbeat_at for i in ids] == [t0 + seconds(4)] * 3
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []

    async def test_an_item_claimed_between_ticks_is_renewed_at_the_next_one(
        self, bench: Bench, lanes: Lanes
    ) -> None:
        t0 = bench.clock.now()
        first, _ = await lanes.run("a")
        await bench.clock.advance(1.5)
        second, _ = await lanes.run("b")

        await bench.clock.advance(0.5)

        assert lanes.beats() == 1
        assert (await bench.item(first)).heartbeat_at == t0 + seconds(2)
        assert (await bench.item(second)).heartbeat_at == t0 + seconds(2)

    async def test_an_item_that_ends_between_ticks_leaves_the_tick_to_the_others(
        self, bench: Bench, lanes: Lanes
    ) -> None:
        t0 = bench.clock.now()
        _, release = await lanes.run("a")
        second, _ = await lanes.run("b")
        await bench.clock.advance(1)
        release.set()
        await bench.clock.settle()

        await bench.clock.advance(1)

        assert lanes.beats() == 1
        assert (await bench.item(second)).heartbeat_at == t0 + seconds(2)

    async def test_a_tick_nobody_waits_for_any_more_is_called_off(
        self, bench: Bench, lanes: Lanes
    ) -> None:
        _, release_a = await lanes.run("a")
        _, release_b = await lanes.run("b")
        await bench.clock.advance(1)

        release_a.set()
        release_b.set()
        outcomes = await asyncio.gather(*lanes.runs)

        assert [o.status for o in outcomes if o is not None] == [ExecutionStatus.SUCCEEDED] * 2
        await bench.clock.settle()
        assert bench.clock.sleepers == 0
        assert lanes.beats() == 0

    async def test_after_a_tick_was_called_off_the_next_keeper_sets_a_new_one(
        self, bench: Bench, lanes: Lanes
    ) -> None:
        _, release = await lanes.run("a")
        await bench.clock.advance(1)
        release.set()
        await asyncio.gather(*lanes.runs)
        t1 = bench.clock.now()

        later, _ = await lanes.run("b")
        await bench.clock.advance(2)

        assert (await bench.item(later)).heartbeat_at == t1 + seconds(2)
        assert lanes.beats() == 1


class TestEachLeaseOnItsOwn:
    async def test_a_lost_lease_cancels_only_its_own_handler(
        self, bench: Bench, lanes: Lanes
    ) -> None:
        t0 = bench.clock.now()
        lost, _ = await lanes.run("a")
        kept, _ = await lanes.run("b")
        bench.take_over(lost)

        await bench.clock.advance(2)

        assert bench.script.cancelled == ["a"]
        assert lanes.runs[0].done()
        outcome = lanes.runs[0].result()
        assert outcome is not None
        assert outcome.status is ExecutionStatus.LEASE_LOST
        assert not lanes.runs[1].done()
        assert (await bench.item(kept)).lease_expires_at == t0 + seconds(62)

    async def test_a_cancel_requested_cancels_only_that_handler(
        self, bench: Bench, lanes: Lanes
    ) -> None:
        cancelled, _ = await lanes.run("a")
        running, _ = await lanes.run("b")
        await bench.store.cancel(cancelled, reason="not needed")

        await bench.clock.advance(2)

        assert bench.script.cancelled == ["a"]
        assert (await bench.item(cancelled)).status is WorkStatus.CANCELLED
        assert (await bench.item(running)).status is WorkStatus.RUNNING
        assert lanes.beats() == 1


class TestFailedHeartbeats:
    async def test_an_unreachable_store_fails_each_heartbeat_and_each_is_retried_at_the_next_tick(
        self, bench: Bench, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        t0 = bench.clock.now()
        first, _ = await lanes.run("a")
        second, _ = await lanes.run("b")
        calls: list[int] = []

        async def unreachable_once(beats: list[Any], **kwargs: Any) -> list[HeartbeatAnswer]:
            calls.append(len(beats))
            if len(calls) == 1:
                raise StoreUnavailableError("connection refused")
            return await bench.store.heartbeat_many(beats, **kwargs)

        lanes.spy.heartbeat_many = unreachable_once  # type: ignore[method-assign]

        await bench.clock.advance(2)
        assert heartbeat_lines(caplog) == [
            (
                "WARNING",
                f"heartbeat of alpha item {item_id} failed: connection refused; "
                "retrying at the next tick",
            )
            for item_id in (first, second)
        ]

        await bench.clock.advance(2)
        assert calls == [2, 2]
        assert [(await bench.item(i)).heartbeat_at for i in (first, second)] == [
            t0 + seconds(4)
        ] * 2

    async def test_a_store_answering_for_fewer_leases_than_it_was_given_fails_each_heartbeat(
        self, bench: Bench, lanes: Lanes, caplog: pytest.LogCaptureFixture
    ) -> None:
        await lanes.run("a")
        await lanes.run("b")

        async def one_answer(beats: list[Any], **kwargs: Any) -> list[HeartbeatAnswer]:
            return [HeartbeatAnswer.HELD]

        lanes.spy.heartbeat_many = one_answer  # type: ignore[method-assign]

        await bench.clock.advance(2)

        errors = [r for r in caplog.records if r.name == HEARTBEAT_LOG]
        assert [r.levelno for r in errors] == [logging.ERROR] * 2
        assert all(
            str(r.exc_info[1]) == "StoreSpy.heartbeat_many answered 1 of 2"
            for r in errors
            if r.exc_info is not None
        )
        assert all(r.exc_info is not None for r in errors)
        assert not any(run.done() for run in lanes.runs)

    async def test_a_lease_that_runs_out_before_the_next_tick_is_lost_at_its_expiry(
        self, bench: Bench
    ) -> None:
        lanes = Lanes(
            bench,
            settings=ExecutorSettings(
                heartbeat_interval=timedelta(seconds=2), lease_duration=timedelta(seconds=5)
            ),
        )
        t0 = bench.clock.now()

        async def unreachable(beats: list[Any], **kwargs: Any) -> list[HeartbeatAnswer]:
            raise StoreUnavailableError("connection refused")

        lanes.spy.heartbeat_many = unreachable  # type: ignore[method-assign]
        await lanes.run("a")

        await bench.clock.advance(4.9)
        assert not lanes.runs[0].done()
        await bench.clock.advance(0.1)

        assert bench.script.cancelled == ["a"]
        assert bench.clock.now() == t0 + seconds(5)
        for run in lanes.runs:
            run.cancel()
        await asyncio.gather(*lanes.runs, return_exceptions=True)

    @pytest.mark.parametrize("ends_in", ["answers", "an error"])
    async def test_a_lane_stopped_during_a_heartbeat_leaves_the_others_their_answers(
        self, bench: Bench, lanes: Lanes, ends_in: str
    ) -> None:
        t0 = bench.clock.now()
        await lanes.run("a")
        second, _ = await lanes.run("b")
        go_on = asyncio.Event()

        async def slow(beats: list[Any], **kwargs: Any) -> list[HeartbeatAnswer]:
            await go_on.wait()
            if ends_in == "an error" and bench.clock.now() == t0 + seconds(2):
                raise StoreUnavailableError("connection reset")
            return await bench.store.heartbeat_many(beats, **kwargs)

        lanes.spy.heartbeat_many = slow  # type: ignore[method-assign]
        await bench.clock.advance(2)
        lanes.runs[0].cancel()
        await asyncio.gather(lanes.runs[0], return_exceptions=True)
        go_on.set()
        await bench.clock.settle()

        await bench.clock.advance(2)

        assert (await bench.item(second)).heartbeat_at == t0 + seconds(4)
        assert not lanes.runs[1].done()


class TestAStatementInFlight:
    async def test_a_heartbeat_statement_still_running_is_kept_alive_until_it_answers(
        self, bench: Bench, lanes: Lanes
    ) -> None:
        t0 = bench.clock.now()
        first, _ = await lanes.run("a")
        second, _ = await lanes.run("b")
        in_flight: list[weakref.ref[asyncio.Future[None]]] = []

        async def answered_later(beats: list[Any], **kwargs: Any) -> list[HeartbeatAnswer]:
            # Only the call itself holds what it waits for, as a socket read would be.
            reply: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            in_flight.append(weakref.ref(reply))
            await reply
            return await bench.store.heartbeat_many(beats, **kwargs)

        lanes.spy.heartbeat_many = answered_later  # type: ignore[method-assign]
        await bench.clock.advance(2)
        gc.collect()

        reply = in_flight[0]()
        assert reply is not None, "the heartbeat statement was dropped before it answered"
        reply.set_result(None)
        await bench.clock.settle()
        assert [(await bench.item(i)).heartbeat_at for i in (first, second)] == [
            t0 + seconds(2)
        ] * 2
        await bench.clock.advance(2)
        assert len(in_flight) == 2, "each keeper had its answer and beat again"
