"""An unreachable store never ends the worker: it says so once, waits, and carries on."""

from __future__ import annotations

import asyncio
import logging

import pytest
from service_bench import Bench
from worker_bench import RoundTripStore, start, worker, worker_lines

from workqueue.application import Worker


class TestOutage:
    async def test_an_unreachable_store_is_logged_once_and_the_worker_carries_on(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO, logger="workqueue.worker")
        bench.state.unavailable = True
        worker = bench.worker(poll_interval=5)
        running = asyncio.create_task(worker.run())

        await bench.clock.advance(20)
        assert not running.done()
        outage_lines = [r for r in caplog.records if "store unavailable" in r.getMessage()]
        assert len(outage_lines) == 1
        assert outage_lines[0].levelno == logging.WARNING

        bench.state.unavailable = False
        await bench.enqueue("a")
        await bench.clock.advance(5)

        assert bench.script.started == ["a"]
        assert "store reachable again after 25.0 s" in caplog.text
        worker.stop()
        await running

    def test_a_poll_interval_must_be_positive(self, bench: Bench) -> None:
        with pytest.raises(ValueError, match="poll_interval"):
            bench.worker(poll_interval=0)


class TestOutages:
    async def test_an_outage_is_told_once_its_retries_quietly_and_its_end_with_its_length(
        self,
        bench: Bench,
        store: RoundTripStore,
        debug_log: pytest.LogCaptureFixture,
        running: list[tuple[Worker, asyncio.Task[None]]],
    ) -> None:
        bench.state.unavailable = True
        the_worker = worker(bench, store)
        await start(bench, the_worker, running)
        await bench.clock.advance(5)
        bench.state.unavailable = False
        await bench.clock.advance(5)
        bench.state.unavailable = True
        await bench.clock.advance(5)
        bench.state.unavailable = False

        outage = "the in-memory store is marked unavailable"
        assert worker_lines(debug_log)[1:] == [
            ("WARNING", f"store unavailable: {outage}; retrying every 5.0 s"),
            ("DEBUG", f"store still unavailable: {outage}"),
            ("INFO", "store reachable again after 10.0 s"),
            ("WARNING", f"store unavailable: {outage}; retrying every 5.0 s"),
        ]
