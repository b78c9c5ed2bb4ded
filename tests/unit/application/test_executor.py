"""The executor: one item at a time, its lease kept by a heartbeat, its outcome written once."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import pytest
from service_bench import Bench, StoreSpy, status_of

from application import TRUNCATION_MARKER, ExecutionOutcome, ExecutionStatus, ExecutorSettings
from domain import WorkContext, WorkStatus


def seconds(value: float) -> timedelta:
    return timedelta(seconds=value)


def start(bench: Bench, executor: Any = None) -> asyncio.Task[ExecutionOutcome | None]:
    return asyncio.create_task((executor or bench.executor()).run_next())


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
        assert spy.calls == ["claim", "complete"]
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
        assert "complete" not in spy.calls
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


class TestOutcomes:
    async def test_a_handler_exception_fails_the_item_with_its_type_and_message_and_no_retry(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", ValueError("the disk is full"))
        executor = bench.executor()

        outcome = await executor.run_next()

        assert outcome is not None
        assert (outcome.status, outcome.error) == (
            ExecutionStatus.FAILED,
            "ValueError: the disk is full",
        )
        assert await executor.run_next() is None
        item = await bench.item(item_id)
        assert (item.status, item.error, item.attempt) == (
            WorkStatus.FAILED,
            "ValueError: the disk is full",
            1,
        )
        assert item.finished_at == bench.clock.now()

    async def test_a_handler_cancelled_by_something_else_fails_its_item(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", asyncio.CancelledError())

        outcome = await bench.executor().run_next()

        assert status_of(outcome) is ExecutionStatus.FAILED
        error = (await bench.item(item_id)).error
        assert error is not None
        assert error.startswith("CancelledError: the handler was cancelled, not by this worker")

    async def test_a_long_error_is_cut_to_the_limit_and_marked_as_cut(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", RuntimeError("x" * 500))

        await bench.executor(settings=ExecutorSettings(max_error_length=100)).run_next()

        error = (await bench.item(item_id)).error
        assert error is not None
        assert len(error) == 100
        assert error.startswith("RuntimeError: xxx")
        assert error.endswith(TRUNCATION_MARKER)

    async def test_an_exception_without_a_message_is_stored_as_its_type(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", KeyError())

        await bench.executor().run_next()

        assert (await bench.item(item_id)).error == "KeyError"

    async def test_a_payload_that_fails_validation_fails_its_item_naming_the_field(
        self, bench: Bench
    ) -> None:
        bad = await bench.enqueue("a")
        good = await bench.enqueue("b")
        bench.corrupt_payload(bad, {"label": "a", "count": "many"})
        executor = bench.executor()

        first = await executor.run_next()
        second = await executor.run_next()

        assert status_of(first) is ExecutionStatus.FAILED
        item = await bench.item(bad)
        assert item.status is WorkStatus.FAILED
        assert item.error == first.error
        assert item.error is not None
        assert "'alpha'" in item.error
        assert "count: Input should be a valid integer" in item.error
        assert second is not None
        assert (second.item_id, second.status) == (
            good,
            ExecutionStatus.SUCCEEDED,
        )
        assert bench.script.started == ["b"]

    async def test_a_handler_may_catch_a_refused_progress_report_and_carry_on(
        self, bench: Bench
    ) -> None:
        refusals: list[str] = []

        async def chatty(ctx: WorkContext) -> None:
            try:
                ctx.report_progress({"blob": "x" * 100})
            except ValueError as error:
                refusals.append(str(error))
            ctx.report_progress({"ok": True})

        bench.script.on("a", chatty)
        item_id = await bench.enqueue("a")

        outcome = await bench.executor(settings=ExecutorSettings(max_progress_bytes=64)).run_next()

        assert status_of(outcome) is ExecutionStatus.SUCCEEDED
        assert len(refusals) == 1
        assert "max_progress_bytes" in refusals[0]
        assert "64" in refusals[0]
        assert (await bench.item(item_id)).progress == {"ok": True}

    async def test_an_uncaught_progress_refusal_fails_the_item(self, bench: Bench) -> None:
        async def careless(ctx: WorkContext) -> None:
            ctx.report_progress({"seen": {1, 2}})  # type: ignore[dict-item]

        bench.script.on("a", careless)
        item_id = await bench.enqueue("a")

        await bench.executor().run_next()

        error = (await bench.item(item_id)).error
        assert error is not None
        assert error.startswith("ValueError: progress snapshot is not JSON")

    async def test_a_complete_that_finds_the_store_unavailable_is_retried_until_it_lands(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        done = bench.script.block("a")
        spy = StoreSpy(bench.store)
        run = start(bench, bench.executor(store=spy))
        await bench.clock.settle()

        bench.state.unavailable = True
        done.set()
        await bench.clock.advance(0.1)
        assert not run.done()
        bench.state.unavailable = False
        await bench.clock.advance(0.1)

        assert run.done()
        outcome = run.result()
        assert status_of(outcome) is ExecutionStatus.SUCCEEDED
        assert spy.count("complete") == 3
        assert (await bench.item(item_id)).status is WorkStatus.SUCCEEDED

    async def test_a_complete_is_abandoned_when_the_lease_would_run_out_before_it_lands(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        item_id = await bench.enqueue("a")
        done = bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()

        bench.state.unavailable = True
        done.set()
        await bench.clock.advance(59)
        assert not run.done()
        await bench.clock.advance(1)

        assert run.done()
        outcome = run.result()
        assert status_of(outcome) is ExecutionStatus.ABANDONED
        assert "lease recovery will requeue it" in caplog.text
        bench.state.unavailable = False
        item = await bench.item(item_id)
        assert (item.status, item.finished_at) == (WorkStatus.RUNNING, None)

    async def test_a_complete_that_finds_the_lease_taken_is_a_lost_lease(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        done = bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()

        bench.take_over(item_id)
        done.set()
        outcome = await run

        assert status_of(outcome) is ExecutionStatus.LEASE_LOST
        assert (await bench.item(item_id)).status is WorkStatus.RUNNING


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


class TestLogging:
    async def test_each_outcome_is_one_line_with_the_item_in_structured_fields(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.DEBUG, logger="workqueue.executor")
        ok = await bench.enqueue("ok")
        bad = await bench.enqueue("bad")
        bench.script.fail_with("bad", ValueError("nope"))
        executor = bench.executor()
        await executor.run_next()
        await executor.run_next()

        claimed, succeeded = [r for r in caplog.records if getattr(r, "item_id", None) == ok]
        (failed,) = [
            r
            for r in caplog.records
            if getattr(r, "item_id", None) == bad and r.levelno == logging.WARNING
        ]
        assert (claimed.levelno, succeeded.levelno) == (logging.DEBUG, logging.DEBUG)
        assert "claimed" in claimed.getMessage()
        assert "succeeded" in succeeded.getMessage()
        assert (succeeded.kind, succeeded.attempt) == ("alpha", 1)  # type: ignore[attr-defined]
        assert "ValueError: nope" in failed.getMessage()
        assert "\n" not in failed.getMessage()


class TestSettings:
    @pytest.mark.parametrize(
        ("changes", "named"),
        [
            ({"heartbeat_interval": seconds(0)}, "heartbeat_interval"),
            ({"lease_duration": seconds(-1)}, "lease_duration"),
            ({"max_error_length": 0}, "max_error_length"),
            ({"max_progress_bytes": 0}, "max_progress_bytes"),
            (
                {"heartbeat_interval": seconds(60), "lease_duration": seconds(60)},
                "heartbeat_interval",
            ),
        ],
    )
    def test_inconsistent_settings_are_refused_naming_the_setting(
        self, changes: dict[str, float], named: str
    ) -> None:
        with pytest.raises(ValueError, match=named):
            ExecutorSettings(**changes)  # type: ignore[arg-type]

    def test_the_defaults_are_a_two_second_heartbeat_on_a_sixty_second_lease(self) -> None:
        settings = ExecutorSettings()
        assert (settings.heartbeat_interval, settings.lease_duration) == (seconds(2), seconds(60))
        assert (settings.max_error_length, settings.max_progress_bytes) == (4000, 65536)
