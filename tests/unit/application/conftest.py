"""Fixtures of the application-service tests; the benches are in service_bench, worker_bench."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
from service_bench import Bench
from worker_bench import RoundTripStore

from workqueue.application import Worker


@pytest.fixture
def bench() -> Bench:
    return Bench()


@pytest.fixture
def debug_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Every line of the queue's loggers, DEBUG included."""
    caplog.set_level(logging.DEBUG, logger="workqueue")
    return caplog


@pytest.fixture
def store(bench: Bench) -> RoundTripStore:
    """The bench's store, one turn of the event loop away."""
    return RoundTripStore(bench)


@pytest.fixture
def running(bench: Bench) -> Iterator[list[tuple[Worker, asyncio.Task[None]]]]:
    """Workers started by a test; each is stopped at the end, whatever the test did."""
    started: list[tuple[Worker, asyncio.Task[None]]] = []
    yield started
    for started_worker, task in started:
        started_worker.stop()
        bench.state.unavailable = False
        task.cancel()
