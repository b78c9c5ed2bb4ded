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

from workqueue.application import Worker
from workqueue.application.execution import ExecutionStatus
from workqueue.application.worker import count_line

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


class TestCountOfItemsRun:
    async def test_a_run_of_items_is_one_line_saying_how_many_in_how_long_how_and_which_kinds(
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        # The first item to end fails, and a beta ends before any alpha succeeds: the
        # line still goes by outcome, then by kind.
        takes(bench, 1, "a", "b", "c")
        bench.script.fail_with("x", ValueError("nope"))
        await bench.enqueue("x")
        await bench.enqueue("b", beta=True)
        await bench.enqueue("a")
        await bench.enqueue("c", beta=True)
        cycle = asyncio.create_task(worker(bench, store).run_cycle())

        await bench.clock.advance(3)

        assert cycle.result() == 4
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
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        await bench.enqueue("a")

        assert await worker(bench, store).run_cycle() == 1

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 1 item in 0.000 s: 1 succeeded (alpha)"
        ]

    async def test_a_cycle_that_runs_nothing_counts_nothing(
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        assert await worker(bench, store).run_cycle() == 0

        assert worker_records(info_log) == []

    async def test_a_long_run_is_counted_again_each_poll_interval(
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        takes(bench, 3, "a", "b", "c")
        for label in ("a", "b", "c"):
            await bench.enqueue(label)
        cycle = asyncio.create_task(worker(bench, store).run_cycle())

        await bench.clock.advance(9)

        assert cycle.result() == 3
        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 2 items in 6.000 s: 2 succeeded (alpha)",
            "ran 1 item in 3.000 s: 1 succeeded (alpha)",
        ]

    async def test_a_run_cut_short_by_stop_counts_the_released_item(
        self,
        bench: Bench,
        store: RoundTripStore,
        info_log: pytest.LogCaptureFixture,
        running: list[tuple[Worker, asyncio.Task[None]]],
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
