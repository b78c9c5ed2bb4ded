"""The executor's edges: every outcome's exact words, fields and log line, and the retry bounds."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

import pytest
from service_bench import Bench, StoreSpy

from application import ExecutionOutcome, ExecutionStatus, ExecutorSettings
from domain import StoreUnavailableError, WorkContext, WorkStatus

EXECUTOR_LOG = "workqueue.executor"


def start(bench: Bench, executor: Any = None) -> asyncio.Task[ExecutionOutcome | None]:
    return asyncio.create_task((executor or bench.executor()).run_next())


def finished(run: asyncio.Task[ExecutionOutcome | None]) -> ExecutionOutcome | None:
    """The outcome of a run that must have ended by now (a hang fails, it does not wait)."""
    assert run.done(), "run_next is still running"
    return run.result()


def executor_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == EXECUTOR_LOG]


def item_fields(caplog: pytest.LogCaptureFixture) -> list[tuple[object, object, object]]:
    """The item fields of every executor line (None where a line lacks one)."""
    return [
        (getattr(r, "item_id", None), getattr(r, "kind", None), getattr(r, "attempt", None))
        for r in caplog.records
        if r.name == EXECUTOR_LOG
    ]


def unavailable(name: str, spy: StoreSpy) -> list[str]:
    """Make ``name`` on ``spy`` always find the store unreachable; returns the call log."""
    calls: list[str] = []

    async def refuse(*args: Any, **kwargs: Any) -> bool:
        calls.append(name)
        raise StoreUnavailableError("connection refused")

    setattr(spy, name, refuse)
    return calls


@pytest.fixture
def debug_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger=EXECUTOR_LOG)
    return caplog


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
        traceback = debug_log.records[1].exc_info
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
        await bench.store.release(earlier.lease, progress={"rows": 40})
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
        await bench.store.release(earlier.lease, progress={"rows": 40})
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
            ("complete", "completing it found the lease no longer held"),
            ("fail", "failing it found the lease no longer held"),
            ("release", "releasing it found the lease no longer held"),
        ],
    )
    async def test_a_fenced_outcome_write_is_a_lost_lease_saying_which_write(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture, write: str, reason: str
    ) -> None:
        if write == "fail":
            bench.script.fail_with("a", ValueError("boom"))
        if write == "release":
            bench.script.block("a")
        item_id = await bench.enqueue("a")
        spy = StoreSpy(bench.store)

        async def fenced(*args: Any, **kwargs: Any) -> bool:
            return False

        setattr(spy, write, fenced)
        executor = bench.executor(store=spy)
        run = start(bench, executor)
        await bench.clock.settle()
        if write == "release":
            executor.stop()

        assert await run == ExecutionOutcome(
            item_id, "alpha", 1, ExecutionStatus.LEASE_LOST, 0.0, reason
        )
        assert executor_lines(debug_log)[-1] == (
            "WARNING",
            f"alpha item {item_id} lost its lease (attempt 1): {reason}; recording nothing",
        )
        assert item_fields(debug_log)[-1] == (item_id, "alpha", 1)


class TestWritesThatFindTheStoreUnreachable:
    @pytest.mark.parametrize("write", ["complete", "fail", "release"])
    async def test_an_outcome_write_given_up_is_abandoned_saying_what_and_how_often(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture, write: str
    ) -> None:
        if write == "fail":
            bench.script.fail_with("a", ValueError("boom"))
        if write == "release":
            bench.script.block("a")
        item_id = await bench.enqueue("a")
        spy = StoreSpy(bench.store)
        calls = unavailable(write, spy)
        executor = bench.executor(store=spy)
        run = start(bench, executor)
        await bench.clock.settle()
        if write == "release":
            executor.stop()
        await bench.clock.advance(60)

        outcome = finished(run)
        assert outcome == ExecutionOutcome(
            item_id,
            "alpha",
            1,
            ExecutionStatus.ABANDONED,
            outcome.duration if outcome else 0.0,
            "the store was unreachable",
        )
        lines = executor_lines(debug_log)
        if write == "release":
            # A stopping worker tries three times, then leaves the item to lease recovery.
            assert len(calls) == 3
            assert lines[-3:] == [
                (
                    "DEBUG",
                    f"could not release alpha item {item_id}: connection refused; "
                    "retrying in 0.05 s",
                ),
                (
                    "DEBUG",
                    f"could not release alpha item {item_id}: connection refused; "
                    "retrying in 0.10 s",
                ),
                (
                    "ERROR",
                    f"could not release alpha item {item_id} after 3 tries: "
                    "connection refused; lease recovery will requeue it",
                ),
            ]
            assert outcome is not None
            assert outcome.duration == pytest.approx(0.15)
        else:
            assert lines[-1][0] == "ERROR"
            assert lines[-1][1].startswith(f"could not {write} alpha item {item_id} after ")
            assert lines[-2] == (
                "DEBUG",
                f"could not {write} alpha item {item_id}: connection refused; retrying in 1.00 s",
            )
        retries = [
            (getattr(r, "item_id", None), getattr(r, "kind", None), getattr(r, "attempt", None))
            for r in debug_log.records
            if r.getMessage().startswith("could not")
        ]
        assert set(retries) == {(item_id, "alpha", 1)}

    async def test_retries_back_off_doubling_to_one_second_and_stop_when_the_lease_would_end(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture
    ) -> None:
        # A 3.55 s lease: the tries at 0, 0.05, 0.15, 0.35, 0.75, 1.55 and 2.55 s leave
        # exactly one retry delay (1 s) before it ends, which is already too late.
        item_id = await bench.enqueue("a")
        spy = StoreSpy(bench.store)
        calls = unavailable("complete", spy)
        settings = ExecutorSettings(lease_duration=timedelta(seconds=3.55))
        run = start(bench, bench.executor(store=spy, settings=settings))
        await bench.clock.advance(10)

        outcome = finished(run)
        assert outcome is not None
        assert (outcome.status, outcome.duration) == (ExecutionStatus.ABANDONED, 2.55)
        assert len(calls) == 7
        delays = [
            message.rsplit("retrying in ", 1)[1]
            for level, message in executor_lines(debug_log)
            if level == "DEBUG" and "retrying in" in message
        ]
        assert delays == ["0.05 s", "0.10 s", "0.20 s", "0.40 s", "0.80 s", "1.00 s"]
        assert executor_lines(debug_log)[-1] == (
            "ERROR",
            f"could not complete alpha item {item_id} after 7 tries: connection refused; "
            "lease recovery will requeue it",
        )

    async def test_a_stop_while_an_outcome_write_is_retried_cuts_the_retries_short(
        self, bench: Bench
    ) -> None:
        await bench.enqueue("a")
        spy = StoreSpy(bench.store)
        calls = unavailable("complete", spy)
        executor = bench.executor(store=spy)
        run = start(bench, executor)
        await bench.clock.advance(0.05)
        assert len(calls) == 2

        executor.stop()
        await bench.clock.advance(1)

        outcome = finished(run)
        assert outcome is not None
        assert outcome.status is ExecutionStatus.ABANDONED
        assert len(calls) == 3


class TestState:
    async def test_a_new_executor_is_not_stopping_and_is_once_stopped(self, bench: Bench) -> None:
        executor = bench.executor()
        assert executor.stopping is False
        executor.stop()
        assert executor.stopping is True

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
