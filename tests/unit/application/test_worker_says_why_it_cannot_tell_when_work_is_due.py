"""An idle worker that cannot ask when the next waiting item is due says why, and polls."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

import pytest
from service_bench import Bench
from worker_bench import RoundTripStore, start, worker, worker_lines

from workqueue.application import Worker
from workqueue.domain import StoreUnavailableError


async def test_the_store_s_error_is_logged_at_debug_and_the_poll_still_ends_the_idle(
    bench: Bench,
    store: RoundTripStore,
    debug_log: pytest.LogCaptureFixture,
    running: list[tuple[Worker, asyncio.Task[None]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def cannot_say(kinds: Collection[str]) -> None:
        raise StoreUnavailableError("connection lost")

    monkeypatch.setattr(bench.store, "next_run_at", cannot_say)
    await start(bench, worker(bench, store), running)
    await bench.clock.advance(5)

    assert (
        "DEBUG",
        "could not ask when the next waiting item is due: connection lost",
    ) in worker_lines(debug_log)
    assert store.count("recover_expired") == 2
