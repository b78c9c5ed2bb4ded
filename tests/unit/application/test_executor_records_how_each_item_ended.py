"""Each claimed item ends in one outcome, written once and fenced by its lease:
succeeded, failed (with its error, bounded), or a lost lease that writes nothing."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from service_bench import (
    EXECUTOR_LOG,
    Bench,
    StoreSpy,
    executor_lines,
    finished,
    item_fields,
    start,
    status_of,
)

from workqueue.application import (
    TRUNCATION_MARKER,
    ExecutionOutcome,
    ExecutionStatus,
    ExecutorSettings,
    bound_error,
)
from workqueue.domain import RunOutcome, WorkContext, WorkStatus


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


class TestOutcomesInFull:
    async def test_a_success_is_one_debug_line_naming_kind_item_duration_and_attempt(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture
    ) -> None:
        async def two_seconds(ctx: WorkContext) -> None:
            await bench.clock.sleep(1.5)

        bench.script.on("a", two_seconds)
        item_id = await bench.enqueue("a")
        run = start(bench)
        await bench.clock.advance(1.5)

        assert await run == ExecutionOutcome(
            item_id=item_id,
            kind="alpha",
            attempt=1,
            status=ExecutionStatus.SUCCEEDED,
            duration=1.5,
            error=None,
        )
        assert executor_lines(debug_log) == [
            ("DEBUG", f"claimed alpha item {item_id} (attempt 1)"),
            ("DEBUG", f"alpha item {item_id} succeeded in 1.500 s (attempt 1)"),
        ]
        assert item_fields(debug_log) == [(item_id, "alpha", 1)] * 2
        item = await bench.item(item_id)
        assert item.worker_id == "worker-1"

    async def test_at_info_a_success_writes_no_line_of_its_own(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger=EXECUTOR_LOG)
        await bench.enqueue("a")

        outcome = await bench.executor().run_next()

        assert outcome is not None
        assert outcome.status is ExecutionStatus.SUCCEEDED
        assert [r for r in caplog.records if r.name == EXECUTOR_LOG] == []

    async def test_a_failure_is_one_line_with_the_stored_error_and_a_debug_traceback(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture
    ) -> None:
        async def fail(ctx: WorkContext) -> None:
            ctx.report_progress({"step": 2})
            raise ValueError("no such room")

        bench.script.on("a", fail)
        item_id = await bench.enqueue("a")

        outcome = await bench.executor().run_next()

        assert outcome == ExecutionOutcome(
            item_id, "alpha", 1, ExecutionStatus.FAILED, 0.0, "ValueError: no such room"
        )
        assert executor_lines(debug_log) == [
            ("DEBUG", f"claimed alpha item {item_id} (attempt 1)"),
            ("DEBUG", f"traceback of alpha item {item_id}"),
            ("WARNING", f"alpha item {item_id} failed (attempt 1): ValueError: no such room"),
        ]
        assert item_fields(debug_log)[2] == (item_id, "alpha", 1)
        traceback = [r for r in debug_log.records if r.name == EXECUTOR_LOG][1].exc_info
        assert traceback is not None
        assert isinstance(traceback[1], ValueError)
        item = await bench.item(item_id)
        assert (item.error, item.progress) == ("ValueError: no such room", {"step": 2})

    async def test_a_release_on_shutdown_keeps_the_progress_and_says_so(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        executor = bench.executor()
        run = start(bench, executor)
        await bench.clock.settle()
        bench.script.contexts["a"].report_progress({"rows": 7})

        executor.stop()
        await bench.clock.settle()

        assert finished(run) == ExecutionOutcome(item_id, "alpha", 1, ExecutionStatus.RELEASED, 0.0)
        assert executor_lines(debug_log)[-1] == (
            "INFO",
            f"alpha item {item_id} released on shutdown (attempt 1)",
        )
        assert item_fields(debug_log)[-1] == (item_id, "alpha", 1)
        assert (await bench.item(item_id)).progress == {"rows": 7}

    async def test_a_lost_lease_gives_the_keepers_reason_once_in_the_outcome_and_the_log(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench)
        await bench.clock.settle()

        bench.take_over(item_id)
        await bench.clock.advance(2)

        reason = "a heartbeat found it no longer held (the item was reclaimed)"
        assert finished(run) == ExecutionOutcome(
            item_id, "alpha", 1, ExecutionStatus.LEASE_LOST, 2.0, reason
        )
        assert executor_lines(debug_log)[-1] == (
            "WARNING",
            f"alpha item {item_id} lost its lease (attempt 1): {reason}; recording nothing",
        )
        assert item_fields(debug_log)[-1] == (item_id, "alpha", 1)


class TestTheProgressAnOutcomeKeeps:
    async def test_an_item_handed_back_unrun_keeps_the_progress_an_earlier_attempt_left(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        earlier = await bench.claim_as_dead_worker()
        await bench.store.finish(earlier.lease, RunOutcome.released({"rows": 40}))
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

        assert (await run) is not None
        item = await bench.item(item_id)
        assert (item.status, item.attempt, item.progress) == (WorkStatus.QUEUED, 2, {"rows": 40})

    async def test_an_undecodable_payload_fails_keeping_the_earlier_progress(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        earlier = await bench.claim_as_dead_worker()
        await bench.store.finish(earlier.lease, RunOutcome.released({"rows": 40}))
        bench.corrupt_payload(item_id, {"label": 5})

        outcome = await bench.executor().run_next()

        assert outcome is not None
        assert outcome.status is ExecutionStatus.FAILED
        item = await bench.item(item_id)
        assert (item.status, item.progress) == (WorkStatus.FAILED, {"rows": 40})

    async def test_a_handler_cancelled_by_something_else_fails_keeping_its_progress(
        self, bench: Bench
    ) -> None:
        async def cancelled_from_within(ctx: WorkContext) -> None:
            ctx.report_progress({"rows": 3})
            raise asyncio.CancelledError

        bench.script.on("a", cancelled_from_within)
        item_id = await bench.enqueue("a")

        outcome = await bench.executor().run_next()

        assert outcome is not None
        assert outcome.error == "CancelledError: the handler was cancelled, not by this worker"
        assert (await bench.item(item_id)).progress == {"rows": 3}

    async def test_a_handler_that_errs_while_stopping_is_released_keeping_its_progress(
        self, bench: Bench
    ) -> None:
        async def turns_cancel_into_error(ctx: WorkContext) -> None:
            ctx.report_progress({"rows": 9})
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                raise RuntimeError("interrupted") from None

        bench.script.on("a", turns_cancel_into_error)
        item_id = await bench.enqueue("a")
        executor = bench.executor()
        run = start(bench, executor)
        await bench.clock.settle()

        executor.stop()
        await bench.clock.settle()

        outcome = finished(run)
        assert outcome is not None
        assert outcome.status is ExecutionStatus.RELEASED
        item = await bench.item(item_id)
        assert (item.status, item.progress) == (WorkStatus.QUEUED, {"rows": 9})


class TestWritesThatFindTheLeaseGone:
    @pytest.mark.parametrize(
        ("write", "reason"),
        [
            ("finish succeeded", "completing it found the lease no longer held"),
            ("finish failed", "failing it found the lease no longer held"),
            ("finish released", "releasing it found the lease no longer held"),
        ],
    )
    async def test_a_fenced_outcome_write_is_a_lost_lease_saying_which_write(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture, write: str, reason: str
    ) -> None:
        if write == "finish failed":
            bench.script.fail_with("a", ValueError("boom"))
        if write == "finish released":
            bench.script.block("a")
        item_id = await bench.enqueue("a")
        spy = StoreSpy(bench.store)

        async def fenced(*args: Any, **kwargs: Any) -> bool:
            return False

        spy.overrides[write] = fenced
        executor = bench.executor(store=spy)
        run = start(bench, executor)
        await bench.clock.settle()
        if write == "finish released":
            executor.stop()

        assert await run == ExecutionOutcome(
            item_id, "alpha", 1, ExecutionStatus.LEASE_LOST, 0.0, reason
        )
        assert executor_lines(debug_log)[-1] == (
            "WARNING",
            f"alpha item {item_id} lost its lease (attempt 1): {reason}; recording nothing",
        )
        assert item_fields(debug_log)[-1] == (item_id, "alpha", 1)


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


class TestErrorTexts:
    async def test_a_long_error_is_cut_to_the_limit_and_marked_as_cut(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", RuntimeError("x" * 500))

        await bench.executor(settings=ExecutorSettings(max_error_length=100)).run_next()

        error = (await bench.item(item_id)).error
        assert error is not None
        assert len(error) == 100
        assert error.startswith("RuntimeError: xxx")
        assert error.endswith(TRUNCATION_MARKER)

    def test_an_error_exactly_at_the_limit_is_kept_whole(self) -> None:
        assert bound_error("x" * 20, 20) == "x" * 20

    def test_a_limit_no_longer_than_the_marker_cuts_without_the_marker(self) -> None:
        limit = len(TRUNCATION_MARKER)

        assert bound_error("x" * 40, limit) == "x" * limit
        assert bound_error("x" * 40, limit + 1) == "x" + TRUNCATION_MARKER
