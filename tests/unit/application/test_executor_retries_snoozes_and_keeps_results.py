"""A failure with attempts left runs again after its kind's backoff; a snooze runs again
later without a failure; a handler's return value is the item's result."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

import pytest
from pydantic import JsonValue
from service_bench import EXECUTOR_LOG, Behaviour, Bench, StoreSpy, executor_lines, start, status_of

from workqueue.application import ExecutionStatus, ExecutorSettings, LeaseRecovery
from workqueue.domain import (
    Backoff,
    Failure,
    KindPolicy,
    Snooze,
    WorkContext,
    WorkStatus,
)

THREE_TRIES = KindPolicy(max_attempts=3, backoff=Backoff(initial=timedelta(seconds=10), jitter=0.5))


def returning(result: JsonValue) -> Behaviour:
    async def give(ctx: WorkContext) -> JsonValue:
        return result

    return give


async def run_once(bench: Bench, *, draw: float = 0.0) -> ExecutionStatus:
    return status_of(await bench.executor(draw=draw).run_next())


class TestRetries:
    async def test_a_failure_with_attempts_left_goes_back_to_queued_after_the_backoff(
        self, bench: Bench
    ) -> None:
        bench.with_policy(THREE_TRIES)
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", OSError("the partner is down"))

        assert await run_once(bench) is ExecutionStatus.RETRIED

        item = await bench.item(item_id)
        assert (item.status, item.error, item.run_at) == (
            WorkStatus.QUEUED,
            "OSError: the partner is down",
            bench.clock.now() + timedelta(seconds=10),
        )
        assert item.failures == (Failure(1, bench.clock.now(), "OSError: the partner is down"),)
        assert (item.lease_expires_at, item.worker_id, item.finished_at) == (None, None, None)

    async def test_a_retried_item_waits_for_its_backoff_before_it_is_claimed_again(
        self, bench: Bench
    ) -> None:
        bench.with_policy(THREE_TRIES)
        await bench.enqueue("a")
        bench.script.fail_with("a", OSError("down"))
        await run_once(bench)

        await bench.clock.advance(9)
        assert await bench.executor().run_next() is None
        await bench.clock.advance(1)
        assert await run_once(bench) is ExecutionStatus.RETRIED

    async def test_each_retry_waits_longer_and_the_last_failure_fails_the_item(
        self, bench: Bench
    ) -> None:
        bench.with_policy(THREE_TRIES)
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", OSError("down"))

        ran = [await run_once(bench)]
        first_wait = (await bench.item(item_id)).run_at - bench.clock.now()
        await bench.clock.advance(first_wait.total_seconds())
        ran.append(await run_once(bench))
        second_wait = (await bench.item(item_id)).run_at - bench.clock.now()
        await bench.clock.advance(second_wait.total_seconds())
        ran.append(await run_once(bench))

        assert ran == [ExecutionStatus.RETRIED, ExecutionStatus.RETRIED, ExecutionStatus.FAILED]
        assert (first_wait, second_wait) == (timedelta(seconds=10), timedelta(seconds=20))
        item = await bench.item(item_id)
        assert (item.status, item.attempt, len(item.failures)) == (WorkStatus.FAILED, 3, 3)
        assert [failure.attempt for failure in item.failures] == [1, 2, 3]

    async def test_the_jitter_shortens_the_backoff_by_the_drawn_share(self, bench: Bench) -> None:
        bench.with_policy(THREE_TRIES)
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", OSError("down"))

        await run_once(bench, draw=1.0)

        assert (await bench.item(item_id)).run_at == bench.clock.now() + timedelta(seconds=5)

    async def test_without_a_policy_a_failure_fails_the_item_at_once(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", OSError("down"))

        assert await run_once(bench) is ExecutionStatus.FAILED
        assert (await bench.item(item_id)).failures == (
            Failure(1, bench.clock.now(), "OSError: down"),
        )

    async def test_a_stall_spends_no_attempt(self, bench: Bench) -> None:
        bench.with_policy(KindPolicy(max_attempts=2))
        item_id = await bench.enqueue("a")
        await bench.claim_as_dead_worker()
        await bench.clock.advance(61)
        await LeaseRecovery(bench.store).run_once()
        bench.script.fail_with("a", OSError("down"))

        assert await run_once(bench) is ExecutionStatus.RETRIED
        item = await bench.item(item_id)
        assert (item.stalls, item.attempt, len(item.failures)) == (1, 2, 1)

    async def test_a_retry_is_logged_as_a_warning_saying_it_runs_again(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        bench.with_policy(THREE_TRIES)
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", OSError("down"))
        caplog.set_level(logging.INFO, EXECUTOR_LOG)

        await run_once(bench)

        assert executor_lines(caplog) == [
            ("WARNING", f"alpha item {item_id} failed (attempt 1), to run again: OSError: down")
        ]

    async def test_a_retry_is_one_fenced_write(self, bench: Bench) -> None:
        bench.with_policy(THREE_TRIES)
        await bench.enqueue("a")
        bench.script.fail_with("a", OSError("down"))
        spy = StoreSpy(bench.store)

        await bench.executor(store=spy).run_next()

        assert spy.calls == ["claim", "finish retried"]


class TestSnoozes:
    async def test_a_snooze_goes_back_to_queued_after_its_delay_without_a_failure(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", Snooze(timedelta(minutes=2)))

        assert await run_once(bench) is ExecutionStatus.SNOOZED

        item = await bench.item(item_id)
        assert (item.status, item.error, item.failures, item.snoozes) == (
            WorkStatus.QUEUED,
            None,
            (),
            1,
        )
        assert item.run_at == bench.clock.now() + timedelta(minutes=2)

    async def test_a_snooze_spends_no_attempt_of_the_policy(self, bench: Bench) -> None:
        bench.with_policy(KindPolicy(max_attempts=2))
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", Snooze(timedelta(0)))
        await run_once(bench)
        bench.script.fail_with("a", OSError("down"))

        assert await run_once(bench) is ExecutionStatus.RETRIED
        assert len((await bench.item(item_id)).failures) == 1

    async def test_one_snooze_more_than_the_kind_allows_fails_the_item(self, bench: Bench) -> None:
        bench.with_policy(KindPolicy(max_snoozes=2))
        item_id = await bench.enqueue("a")
        bench.script.fail_with("a", Snooze(timedelta(0)))

        ran = [await run_once(bench) for _ in range(3)]

        assert ran == [ExecutionStatus.SNOOZED, ExecutionStatus.SNOOZED, ExecutionStatus.FAILED]
        item = await bench.item(item_id)
        assert (item.status, item.error, item.snoozes) == (
            WorkStatus.FAILED,
            "snoozed 3 times (max snoozes 2)",
            2,
        )

    async def test_a_snooze_while_the_worker_stops_hands_the_item_back(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        release = asyncio.Event()

        async def snooze_when_released(ctx: WorkContext) -> JsonValue:
            await release.wait()
            raise Snooze(timedelta(minutes=1))

        bench.script.on("a", snooze_when_released)
        executor = bench.executor()
        running = start(bench, executor)
        await bench.clock.settle()

        executor.stop()
        release.set()

        assert status_of(await running) is ExecutionStatus.RELEASED
        assert (await bench.item(item_id)).snoozes == 0


class TestResults:
    async def test_what_a_handler_returns_is_the_items_result(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.on("a", returning({"pages": 12, "skipped": ["x"]}))

        assert await run_once(bench) is ExecutionStatus.SUCCEEDED

        item = await bench.item(item_id)
        assert (item.status, item.result) == (WorkStatus.SUCCEEDED, {"pages": 12, "skipped": ["x"]})

    async def test_a_handler_that_returns_nothing_has_no_result(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")

        await run_once(bench)

        assert (await bench.item(item_id)).result is None

    async def test_a_result_that_is_not_json_fails_the_item_saying_so(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.on("a", returning(float("nan")))  # type: ignore[arg-type]

        assert await run_once(bench) is ExecutionStatus.FAILED

        error = (await bench.item(item_id)).error
        assert error is not None
        assert error.startswith("the handler succeeded, but result is not JSON")

    async def test_a_result_larger_than_progress_may_be_fails_the_item(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        bench.script.on("a", returning("x" * 100))

        status = status_of(
            await bench.executor(settings=ExecutorSettings(max_progress_bytes=50)).run_next()
        )

        assert status is ExecutionStatus.FAILED
        assert (await bench.item(item_id)).error == (
            "the handler succeeded, but result is 102 bytes of JSON; "
            "the limit (max_progress_bytes) is 50"
        )

    async def test_a_success_with_a_result_is_written_on_its_own(self, bench: Bench) -> None:
        await bench.enqueue("a")
        await bench.enqueue("b")
        bench.script.on("a", returning([1, 2]))
        spy = StoreSpy(bench.store)

        await bench.executor(store=spy).run_next(claim_next=True)

        assert spy.calls == ["claim", "finish succeeded"]
