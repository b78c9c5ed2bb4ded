"""At INFO a worker writes one line per run of items: how many, in how long, how they ended
and of which kinds."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

import pytest
from service_bench import (
    Bench,
)
from worker_bench import (
    WORKER_LOG,
    RoundTripStore,
    start,
    stopped,
    takes,
    worker,
)

from workqueue.application import LeaseRecovery, Worker, WorkScheduler
from workqueue.application.execution import ExecutionStatus
from workqueue.application.tally import count_line

SUCCEEDED, FAILED, RELEASED = (
    ExecutionStatus.SUCCEEDED,
    ExecutionStatus.FAILED,
    ExecutionStatus.RELEASED,
)


def worker_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == WORKER_LOG and r.getMessage().startswith("ran ")]


@pytest.fixture
def info_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger=WORKER_LOG)
    return caplog


Running = list[tuple[Worker, asyncio.Task[None]]]


def lanes_worker(
    bench: Bench, store: RoundTripStore, lanes: int, *, notifications: bool = False
) -> Worker:
    return Worker(
        executor=[bench.executor(store=store) for _ in range(lanes)],
        scheduler=WorkScheduler(bench.queue, []),
        recovery=LeaseRecovery(store),  # type: ignore[arg-type]
        clock=bench.clock,
        notifications=bench.notifications if notifications else None,
    )


class TestCountOfItemsRun:
    async def test_a_run_of_items_is_one_line_saying_how_many_in_how_long_how_and_which_kinds(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        # The first item to end fails, and a beta ends before any alpha succeeds: the
        # line still goes by outcome, then by kind.
        takes(bench, 1, "a", "b", "c")
        bench.script.fail_with("x", ValueError("nope"))
        await bench.enqueue("x")
        await bench.enqueue("b", beta=True)
        await bench.enqueue("a")
        await bench.enqueue("c", beta=True)
        await start(bench, worker(bench, store), running)

        await bench.clock.advance(3)

        assert len(bench.script.returned) == 3
        (line,) = worker_records(info_log)
        assert (line.levelname, line.getMessage()) == (
            "INFO",
            "ran 4 items in 3.000 s: 3 succeeded (beta 2, alpha 1), 1 failed (alpha)",
        )
        fields = {
            key: getattr(line, key, None)
            for key in ("items", "seconds", "succeeded", "failed", "released", "lease_lost")
        }
        assert fields == {
            "items": 4,
            "seconds": 3.0,
            "succeeded": 3,
            "failed": 1,
            "released": None,
            "lease_lost": None,
        }
        by_kind = getattr(line, "by_kind", None)
        assert by_kind == {"alpha": {"failed": 1, "succeeded": 1}, "beta": {"succeeded": 2}}
        assert list(by_kind) == ["alpha", "beta"]

    async def test_one_item_is_counted_in_the_singular(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        await bench.enqueue("a")

        await start(bench, worker(bench, store), running)

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 1 item in 0.000 s: 1 succeeded (alpha)"
        ]

    async def test_cycles_that_run_nothing_count_nothing(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        the_worker = worker(bench, store)
        task = await start(bench, the_worker, running)
        await bench.clock.advance(10)

        await stopped(bench, the_worker, task)

        assert store.count("recover_expired") == 3
        assert worker_records(info_log) == []

    async def test_a_long_run_is_counted_again_each_poll_interval(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        takes(bench, 3, "a", "b", "c")
        for label in ("a", "b", "c"):
            await bench.enqueue(label)
        await start(bench, worker(bench, store), running)

        await bench.clock.advance(9)

        assert bench.script.returned == ["a", "b", "c"]
        # The cycle at 5 s counts "a"; the end of the run at 9 s, "b" and "c".
        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 1 item in 5.000 s: 1 succeeded (alpha)",
            "ran 2 items in 4.000 s: 2 succeeded (alpha)",
        ]

    async def test_an_item_longer_than_the_poll_interval_is_counted_from_the_start_of_its_run(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        takes(bench, 12, "long")
        await bench.enqueue("long")
        await start(bench, worker(bench, store), running)

        await bench.clock.advance(12)

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 1 item in 12.000 s: 1 succeeded (alpha)"
        ]

    async def test_a_run_that_begins_after_an_idle_while_is_timed_from_its_beginning(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        takes(bench, 1, "a")
        await start(bench, worker(bench, store, notifications=bench.notifications), running)
        await bench.clock.advance(3)

        await bench.enqueue("a")
        await bench.clock.advance(1)

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 1 item in 1.000 s: 1 succeeded (alpha)"
        ]

    async def test_a_run_cut_short_by_stop_counts_the_released_item(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        takes(bench, 1, "a")
        bench.script.block("b")
        await bench.enqueue("a")
        await bench.enqueue("b")
        the_worker = worker(bench, store)
        task = await start(bench, the_worker, running)
        await bench.clock.advance(1)

        await stopped(bench, the_worker, task)

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 2 items in 1.000 s: 1 succeeded (alpha), 1 released (alpha)"
        ]


class TestOneCountForAllLanes:
    async def test_what_the_lanes_ran_is_one_line_when_the_last_of_them_runs_dry(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        labels = ["a", "b", "c", "d"]
        takes(bench, 1, *labels)
        for label in labels:
            await bench.enqueue(label, beta=label == "c")
        await start(bench, lanes_worker(bench, store, 2), running)

        await bench.clock.advance(1)
        assert [r.getMessage() for r in worker_records(info_log)] == []
        await bench.clock.advance(1)

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 4 items in 2.000 s: 4 succeeded (alpha 3, beta 1)"
        ]

    async def test_busy_lanes_are_counted_together_each_poll_interval(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        labels = ["a", "b", "c", "d"]
        takes(bench, 3, *labels)
        for label in labels:
            await bench.enqueue(label)
        await start(bench, lanes_worker(bench, store, 2), running)

        await bench.clock.advance(6)

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 2 items in 5.000 s: 2 succeeded (alpha)",
            "ran 2 items in 1.000 s: 2 succeeded (alpha)",
        ]

    async def test_a_lane_woken_while_another_runs_goes_on_with_the_same_run(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: Running,
    ) -> None:
        takes(bench, 3, "long")
        takes(bench, 1, "short")
        await bench.enqueue("long")
        await start(bench, lanes_worker(bench, store, 2, notifications=True), running)
        await bench.clock.advance(1)

        await bench.enqueue("short")
        await bench.clock.advance(2)

        assert bench.script.returned == ["short", "long"]
        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 2 items in 3.000 s: 2 succeeded (alpha)"
        ]


class TestTheKindsOfTheCount:
    def test_kinds_that_ended_alike_as_often_are_named_in_alphabetical_order(self) -> None:
        counts = Counter({(SUCCEEDED, "zeta"): 2, (SUCCEEDED, "beta"): 2, (SUCCEEDED, "eta"): 5})

        text, _ = count_line(counts)

        assert text == "9 succeeded (eta 5, beta 2, zeta 2)"

    def test_only_the_ways_items_ended_are_said_in_the_order_of_the_outcomes(self) -> None:
        counts = Counter({(RELEASED, "beta"): 1, (FAILED, "alpha"): 2, (FAILED, "beta"): 1})

        text, fields = count_line(counts)

        assert text == "3 failed (alpha 2, beta 1), 1 released (beta)"
        assert fields == {
            "failed": 3,
            "released": 1,
            "by_kind": {"alpha": {"failed": 2}, "beta": {"released": 1, "failed": 1}},
        }
        assert list(fields) == ["failed", "released", "by_kind"]
        by_kind = fields["by_kind"]
        assert isinstance(by_kind, dict)
        assert list(by_kind) == ["alpha", "beta"]
