"""An outcome write that finds the store unreachable is retried, backing off, until it
lands or the lease would run out first; a worker in a hurry tries three times."""

from __future__ import annotations

from datetime import timedelta

import pytest
from service_bench import Bench, StoreSpy, executor_lines, finished, start, status_of, unavailable

from workqueue.application import ExecutionOutcome, ExecutionStatus, ExecutorSettings
from workqueue.domain import WorkStatus


class TestACompleteIsRetried:
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
        assert spy.count("finish succeeded") == 3
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


class TestWritesThatFindTheStoreUnreachable:
    @pytest.mark.parametrize(
        ("write", "verb"),
        [
            ("finish succeeded", "complete"),
            ("finish failed", "fail"),
            ("finish released", "release"),
        ],
    )
    async def test_an_outcome_write_given_up_is_abandoned_saying_what_and_how_often(
        self, bench: Bench, debug_log: pytest.LogCaptureFixture, write: str, verb: str
    ) -> None:
        if write == "finish failed":
            bench.script.fail_with("a", ValueError("boom"))
        if write == "finish released":
            bench.script.block("a")
        item_id = await bench.enqueue("a")
        spy = StoreSpy(bench.store)
        calls = unavailable(write, spy)
        executor = bench.executor(store=spy)
        run = start(bench, executor)
        await bench.clock.settle()
        if write == "finish released":
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
        if write == "finish released":
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
            assert lines[-1][1].startswith(f"could not {verb} alpha item {item_id} after ")
            assert lines[-2] == (
                "DEBUG",
                f"could not {verb} alpha item {item_id}: connection refused; retrying in 1.00 s",
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
        calls = unavailable("finish succeeded", spy)
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
        calls = unavailable("finish succeeded", spy)
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


class TestAFailureOfAnUndecodablePayloadIsRetried:
    async def test_it_is_retried_for_as_long_as_the_lease_lasts_not_three_times(
        self, bench: Bench
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.corrupt_payload(item_id, {"label": 5})
        spy = StoreSpy(bench.store)
        calls = unavailable("finish failed", spy)
        run = start(bench, bench.executor(store=spy))

        await bench.clock.advance(5)
        assert not run.done()
        assert len(calls) > 3
        await bench.clock.advance(60)

        outcome = finished(run)
        assert status_of(outcome) is ExecutionStatus.ABANDONED
        assert (await bench.item(item_id)).status is WorkStatus.RUNNING
