"""While a handler runs, a heartbeat renews its lease and writes its progress; a lease
that is lost cancels the handler, and the item is left to whoever holds it now."""

from __future__ import annotations

import asyncio
import gc
import logging
from datetime import timedelta
from typing import Any

import pytest
from service_bench import LEASE, Bench, StoreSpy, seconds, start, status_of

from work_items import T0, running_item
from workqueue.application import ExecutionOutcome, ExecutionStatus, ExecutorSettings
from workqueue.application.beats import SoloHeartbeats
from workqueue.application.claim import Claim
from workqueue.application.context import ExecutionContext
from workqueue.application.heartbeat import LeaseKeeper
from workqueue.domain import StoreUnavailableError, WorkContext, WorkStatus

HEARTBEAT_LOG = "workqueue.heartbeat"


ITEM = running_item(lease_expires_at=T0 + LEASE)


async def stop(bench: Bench, run: asyncio.Task[ExecutionOutcome | None]) -> None:
    """End a run that may still hold its item, before anything is asserted.

    A test that failed with the run still holding its item on an unreachable store
    would otherwise leave the release retrying on a clock nobody advances.
    """
    bench.state.unavailable = False
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)


def heartbeat_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == HEARTBEAT_LOG]


def fields(record: logging.LogRecord) -> tuple[object, object, object]:
    return (
        getattr(record, "item_id", None),
        getattr(record, "kind", None),
        getattr(record, "attempt", None),
    )


def keeper_for(
    bench: Bench,
    handler: asyncio.Task[None],
    spy: StoreSpy,
    *,
    secured_for: timedelta = LEASE,
) -> tuple[Claim, LeaseKeeper]:
    """A keeper of a claim's lease, secured for ``secured_for`` from now (negative: run out)."""
    claim = Claim(ITEM, bench.clock.now(), secured_for)
    heartbeats = SoloHeartbeats(
        spy,  # type: ignore[arg-type]
        bench.clock,
        interval=timedelta(seconds=2),
        lease_duration=LEASE,
    )
    return claim, LeaseKeeper(
        heartbeats,
        bench.clock,
        claim,
        handler=handler,
        context=ExecutionContext(item_id=1, attempt=1, kind="alpha"),
    )


class TestHeartbeat:
    async def test_a_heartbeat_every_two_seconds_renews_the_lease_and_writes_the_latest_progress(
        self, bench: Bench
    ) -> None:
        t0 = bench.clock.now()
        item_id = await bench.enqueue("a")
        done = bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()
        ctx = bench.script.contexts["a"]

        ctx.report_progress({"done": 1})
        await bench.clock.advance(2)
        item = await bench.item(item_id)
        assert (item.heartbeat_at, item.lease_expires_at, item.progress) == (
            t0 + seconds(2),
            t0 + seconds(62),
            {"done": 1},
        )

        ctx.report_progress({"done": 2})
        await bench.clock.advance(2)
        item = await bench.item(item_id)
        assert (item.heartbeat_at, item.progress) == (t0 + seconds(4), {"done": 2})

        await bench.clock.advance(2)
        await bench.clock.advance(1.5)
        item = await bench.item(item_id)
        assert (item.heartbeat_at, item.lease_expires_at) == (t0 + seconds(6), t0 + seconds(66))

        done.set()
        outcome = await run
        assert status_of(outcome) is ExecutionStatus.SUCCEEDED
        assert (await bench.item(item_id)).progress == {"done": 2}

    @pytest.mark.parametrize("handler_time", [0.0, 1.9])
    async def test_an_item_that_finishes_before_the_first_tick_costs_no_heartbeat_write(
        self, bench: Bench, handler_time: float
    ) -> None:
        async def short(ctx: WorkContext) -> None:
            if handler_time:
                await bench.clock.sleep(handler_time)

        bench.script.on("a", short)
        item_id = await bench.enqueue("a")
        spy = StoreSpy(bench.store)
        run = start(bench, bench.executor(store=spy))
        await bench.clock.advance(handler_time)
        outcome = await run
        await bench.clock.advance(10)

        assert status_of(outcome) is ExecutionStatus.SUCCEEDED
        assert spy.calls == ["claim", "finish succeeded"]
        assert bench.clock.sleepers == 0
        item = await bench.item(item_id)
        assert item.heartbeat_at == item.started_at

    async def test_a_fenced_heartbeat_cancels_the_handler_and_records_nothing(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()

        bench.take_over(item_id, worker_id="worker-2")
        await bench.clock.advance(2)

        assert run.done()
        outcome = run.result()
        assert status_of(outcome) is ExecutionStatus.LEASE_LOST
        assert bench.script.cancelled == ["a"]
        item = await bench.item(item_id)
        assert (item.status, item.worker_id, item.attempt) == (WorkStatus.RUNNING, "worker-2", 2)
        assert (item.finished_at, item.error) == (None, None)

    async def test_a_lost_lease_wins_over_a_handler_that_swallows_its_cancellation(
        self, bench: Bench
    ) -> None:
        async def stubborn(ctx: WorkContext) -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                return

        bench.script.on("a", stubborn)
        spy = StoreSpy(bench.store)

        async def fenced(*args: Any, **kwargs: Any) -> bool:
            return False

        spy.heartbeat = fenced  # type: ignore[method-assign]
        item_id = await bench.enqueue("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.advance(2)

        outcome = await run
        assert status_of(outcome) is ExecutionStatus.LEASE_LOST
        assert bench.script.returned == ["a"]
        assert "finish succeeded" not in spy.calls
        assert (await bench.item(item_id)).status is WorkStatus.RUNNING

    async def test_a_heartbeat_that_finds_the_store_unavailable_is_retried_at_the_next_tick(
        self, bench: Bench
    ) -> None:
        t0 = bench.clock.now()
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()

        bench.state.unavailable = True
        await bench.clock.advance(2)
        assert not run.done()
        assert bench.script.cancelled == []

        bench.state.unavailable = False
        await bench.clock.advance(2)
        item = await bench.item(item_id)
        assert (item.heartbeat_at, item.lease_expires_at) == (t0 + seconds(4), t0 + seconds(64))
        assert not run.done()
        run.cancel()

    async def test_the_handler_is_cancelled_when_the_lease_it_secured_runs_out_unrenewed(
        self, bench: Bench
    ) -> None:
        t0 = bench.clock.now()
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench)
        await bench.clock.advance(10)  # the heartbeat at 10 s secures the lease until 70 s

        bench.state.unavailable = True
        await bench.clock.advance(59.9)
        assert not run.done()
        await bench.clock.advance(0.1)
        assert run.done()
        outcome = run.result()
        assert status_of(outcome) is ExecutionStatus.LEASE_LOST
        assert bench.script.cancelled == ["a"]

        bench.state.unavailable = False
        await bench.clock.advance(10)
        item = await bench.item(item_id)
        assert (item.status, item.heartbeat_at) == (WorkStatus.RUNNING, t0 + seconds(10))

    async def test_a_heartbeat_that_hangs_does_not_let_the_handler_outlive_its_lease(
        self, bench: Bench
    ) -> None:
        spy = StoreSpy(bench.store)

        async def hang(*args: Any, **kwargs: Any) -> bool:
            await asyncio.Event().wait()
            return True

        spy.heartbeat = hang  # type: ignore[method-assign]
        await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor(store=spy))

        await bench.clock.advance(59.9)
        assert not run.done()
        await bench.clock.advance(0.1)
        assert run.done()
        outcome = run.result()
        assert status_of(outcome) is ExecutionStatus.LEASE_LOST
        assert bench.script.cancelled == ["a"]

    async def test_a_heartbeat_that_raises_unexpectedly_is_retried_at_the_next_tick(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        t0 = bench.clock.now()
        spy = StoreSpy(bench.store)
        failures = iter([RuntimeError("driver bug")])

        async def flaky(*args: Any, **kwargs: Any) -> bool:
            for failure in failures:
                raise failure
            return await bench.store.heartbeat(*args, **kwargs)

        spy.heartbeat = flaky  # type: ignore[method-assign]
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor(store=spy))

        await bench.clock.advance(4)

        assert not run.done()
        assert (await bench.item(item_id)).heartbeat_at == t0 + seconds(4)
        assert "RuntimeError: driver bug" in caplog.text
        run.cancel()

    async def test_the_handler_is_cancelled_at_the_instant_the_lease_runs_out_not_at_a_tick(
        self, bench: Bench
    ) -> None:
        t0 = bench.clock.now()
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        settings = ExecutorSettings(lease_duration=seconds(5))
        run = start(bench, bench.executor(settings=settings))
        await bench.clock.settle()

        bench.state.unavailable = True  # the heartbeats at 2 s and 4 s fail
        await bench.clock.advance(4.5)
        bench.state.unavailable = False  # back, but no tick comes before the lease runs out
        await bench.clock.advance(0.4)
        assert not run.done()
        await bench.clock.advance(0.1)

        assert run.done()
        assert status_of(run.result()) is ExecutionStatus.LEASE_LOST
        assert (await bench.item(item_id)).heartbeat_at == t0


class TestFailedHeartbeatsAreLogged:
    async def test_an_unreachable_store_is_one_warning_naming_the_item_and_the_error(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor())
        await bench.clock.settle()

        bench.state.unavailable = True
        await bench.clock.advance(2)
        records = heartbeat_records(caplog)
        await stop(bench, run)

        (record,) = records
        assert (record.levelname, record.getMessage()) == (
            "WARNING",
            f"heartbeat of alpha item {item_id} failed: the in-memory store is marked "
            "unavailable; retrying at the next tick",
        )
        assert fields(record) == (item_id, "alpha", 1)

    async def test_an_unexpected_store_error_is_logged_with_its_traceback(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        spy = StoreSpy(bench.store)

        async def broken(*args: Any, **kwargs: Any) -> bool:
            raise RuntimeError("driver bug")

        spy.heartbeat = broken  # type: ignore[method-assign]
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.advance(2)
        records = heartbeat_records(caplog)
        await stop(bench, run)

        (record,) = records
        assert (record.levelname, record.getMessage()) == (
            "ERROR",
            f"heartbeat of alpha item {item_id} raised; retrying at the next tick",
        )
        assert fields(record) == (item_id, "alpha", 1)
        assert record.exc_info is not None
        assert isinstance(record.exc_info[1], RuntimeError)

    async def test_a_heartbeat_that_hangs_is_abandoned_quietly_not_logged_as_an_error(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        spy = StoreSpy(bench.store)

        async def hang(*args: Any, **kwargs: Any) -> bool:
            await asyncio.Event().wait()
            return True

        spy.heartbeat = hang  # type: ignore[method-assign]
        await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.advance(60)

        assert run.done()
        outcome = run.result()
        assert outcome is not None
        assert outcome.error == "its lease ran out before a heartbeat could renew it"
        assert heartbeat_records(caplog) == []


class TestSlowHeartbeats:
    async def test_a_heartbeat_answered_before_the_lease_ends_renews_it(self, bench: Bench) -> None:
        t0 = bench.clock.now()
        spy = StoreSpy(bench.store)

        async def slow(*args: Any, **kwargs: Any) -> bool:
            await bench.clock.sleep(0.5)
            return await bench.store.heartbeat(*args, **kwargs)

        spy.heartbeat = slow  # type: ignore[method-assign]
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.advance(3)

        item = await bench.item(item_id)
        running = not run.done()
        await stop(bench, run)

        assert item.heartbeat_at == t0 + timedelta(seconds=2.5)
        assert running

    async def test_a_heartbeat_failing_as_the_handler_returns_leaves_no_unobserved_error(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        gate = asyncio.Event()

        async def finish_with_the_gate(ctx: WorkContext) -> None:
            await gate.wait()

        spy = StoreSpy(bench.store)

        async def fail_with_the_gate(*args: Any, **kwargs: Any) -> bool:
            await gate.wait()
            raise StoreUnavailableError("gone")

        spy.heartbeat = fail_with_the_gate  # type: ignore[method-assign]
        bench.script.on("a", finish_with_the_gate)
        await bench.enqueue("a")
        settings = ExecutorSettings(heartbeat_interval=timedelta(seconds=1))
        run = start(bench, bench.executor(store=spy, settings=settings))
        await bench.clock.advance(1)

        gate.set()
        await bench.clock.settle()
        assert run.done()
        assert run.result() is not None
        gc.collect()
        await bench.clock.settle()

        assert "never retrieved" not in caplog.text
        assert run.result().status is ExecutionStatus.SUCCEEDED  # type: ignore[union-attr]


class TestTheKeeperStartsOnlyForAHandlerThatOutlivesItsFirstStep:
    async def test_a_handler_done_in_its_first_step_gets_no_keeper(self, bench: Bench) -> None:
        async def instant() -> None:
            return None

        handler = asyncio.create_task(instant())
        _, keeper = keeper_for(bench, handler, StoreSpy(bench.store))

        keeper.start()
        await bench.clock.settle()

        assert handler.done()
        assert bench.clock.sleepers == 0

    async def test_a_handler_still_running_after_its_first_step_gets_a_keeper(
        self, bench: Bench
    ) -> None:
        handler = asyncio.create_task(asyncio.Event().wait())
        spy = StoreSpy(bench.store)
        _, keeper = keeper_for(bench, handler, spy)

        keeper.start()
        await bench.clock.settle()
        sleeping = bench.clock.sleepers
        keeper.stop()
        await bench.clock.settle()
        handler.cancel()

        assert sleeping == 1
        assert bench.clock.sleepers == 0
        assert spy.calls == []

    async def test_a_keeper_stopped_before_the_loop_turns_never_starts(self, bench: Bench) -> None:
        handler = asyncio.create_task(asyncio.Event().wait())
        _, keeper = keeper_for(bench, handler, StoreSpy(bench.store))

        keeper.start()
        keeper.stop()
        await bench.clock.settle()
        handler.cancel()

        assert bench.clock.sleepers == 0

    async def test_a_short_item_leaves_no_sleeper_and_a_long_one_heartbeats(
        self, bench: Bench
    ) -> None:
        await bench.enqueue("short")
        await bench.enqueue("long")

        async def long(ctx: WorkContext) -> None:
            await bench.clock.sleep(5)

        bench.script.on("long", long)
        spy = StoreSpy(bench.store)
        executor = bench.executor(store=spy)

        await executor.run_next()
        after_short = bench.clock.sleepers
        run = asyncio.create_task(executor.run_next())
        await bench.clock.advance(5)
        await run

        assert after_short == 0
        assert spy.count("heartbeat") == 2
        assert bench.clock.sleepers == 0

    async def test_a_cancelled_run_leaves_no_callback_error_behind(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.ERROR, logger="asyncio")
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = asyncio.create_task(bench.executor().run_next())
        await bench.clock.settle()

        run.cancel()
        await asyncio.gather(run, return_exceptions=True)
        await bench.clock.settle()

        assert bench.script.cancelled == ["a"]
        assert (await bench.item(item_id)).status.value == "queued"
        assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


class TestALeaseThatRunsOut:
    async def test_a_lease_run_out_after_the_handler_returned_is_left_to_the_outcome_write(
        self,
        bench: Bench,
    ) -> None:
        async def instant() -> None:
            return None

        handler = asyncio.create_task(instant())
        await asyncio.wait((handler,))
        claim, keeper = keeper_for(
            bench, handler, StoreSpy(bench.store), secured_for=-timedelta(seconds=1)
        )

        await keeper.keep()

        assert claim.lost is None
        assert claim.cancel_requested is False
        assert not handler.cancelled()

    async def test_a_lease_run_out_while_the_handler_runs_is_lost_and_cancels_it(
        self,
        bench: Bench,
    ) -> None:
        handler = asyncio.create_task(asyncio.Event().wait())
        claim, keeper = keeper_for(
            bench, handler, StoreSpy(bench.store), secured_for=-timedelta(seconds=1)
        )

        await keeper.keep()
        await asyncio.gather(handler, return_exceptions=True)

        assert claim.lost == "its lease ran out before a heartbeat could renew it"
        assert handler.cancelled()
