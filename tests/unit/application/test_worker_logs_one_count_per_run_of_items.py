"""At INFO a worker writes one line per run of items: how many, in how long, how they ended."""

from __future__ import annotations

import asyncio
import logging

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

from application import Worker


def worker_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == WORKER_LOG and r.getMessage().startswith("ran ")]


@pytest.fixture
def info_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger=WORKER_LOG)
    return caplog


class TestCountOfItemsRun:
    async def test_a_run_of_items_is_one_line_saying_how_many_in_how_long_and_how_they_ended(
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        takes(bench, 1, "a", "b")
        bench.script.fail_with("c", ValueError("nope"))
        for label in ("a", "b", "c"):
            await bench.enqueue(label)
        cycle = asyncio.create_task(worker(bench, store).run_cycle())

        await bench.clock.advance(2)

        assert cycle.result() == 3
        (line,) = worker_records(info_log)
        assert (line.levelname, line.getMessage()) == (
            "INFO",
            "ran 3 items in 2.000 s: 2 succeeded, 1 failed",
        )
        fields = {
            key: getattr(line, key, None)
            for key in ("items", "seconds", "succeeded", "failed", "released", "lease_lost")
        }
        assert fields == {
            "items": 3,
            "seconds": 2.0,
            "succeeded": 2,
            "failed": 1,
            "released": None,
            "lease_lost": None,
        }

    async def test_one_item_is_counted_in_the_singular(
        self, bench: Bench, store: RoundTripStore, info_log: pytest.LogCaptureFixture
    ) -> None:
        await bench.enqueue("a")

        assert await worker(bench, store).run_cycle() == 1

        assert [r.getMessage() for r in worker_records(info_log)] == [
            "ran 1 item in 0.000 s: 1 succeeded"
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
            "ran 2 items in 6.000 s: 2 succeeded",
            "ran 1 item in 3.000 s: 1 succeeded",
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
            "ran 2 items in 1.000 s: 1 succeeded, 1 released"
        ]
