"""The worker tests' helpers: a store one event-loop turn away, a wall clock, started workers.

The store here answers like a real one, after a turn of the event loop, so a loop
that never waits shows up as an error of the FakeClock rather than as a hang.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

import pytest
from service_bench import Bench, call_name

from workqueue.application import LeaseRecovery, Worker, WorkScheduler
from workqueue.domain import StoreUnavailableError, WorkContext, WorkNotifications, WorkStatus

WORKER_LOG = "workqueue.worker"


SAFETY_NET = 10.0


class RoundTripStore:
    """The bench's store, reached after one turn of the event loop, counting calls."""

    def __init__(self, bench: Bench) -> None:
        self.inner = bench.store
        self.calls: list[str] = []

    def count(self, name: str) -> int:
        return self.calls.count(name)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        async def round_trip(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(call_name(name, args))
            await asyncio.sleep(0)
            return await method(*args, **kwargs)

        return round_trip


class WallClock:
    """The bench's clock as a wall clock that the test can step back; sleeps are unaffected."""

    def __init__(self, bench: Bench) -> None:
        self.fake = bench.clock
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return self.fake.now() + self.offset

    async def sleep(self, seconds: float) -> None:
        await self.fake.sleep(seconds)


def worker(
    bench: Bench,
    store: RoundTripStore,
    *,
    clock: Any = None,
    notifications: WorkNotifications | None = None,
    poll_interval: float = 5.0,
) -> Worker:
    return Worker(
        executor=bench.executor(store=store),
        scheduler=WorkScheduler(bench.queue, []),
        recovery=LeaseRecovery(store),  # type: ignore[arg-type]
        clock=clock or bench.clock,
        poll_interval=timedelta(seconds=poll_interval),
        notifications=notifications,
    )


def worker_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == WORKER_LOG]


def count_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The worker's count lines (``ran 3 items in ...``), in order."""
    return [message for _, message in worker_lines(caplog) if message.startswith("ran ")]


def takes(bench: Bench, seconds: float, *labels: str) -> None:
    async def work(ctx: WorkContext) -> None:
        await bench.clock.sleep(seconds)

    for label in labels:
        bench.script.on(label, work)


async def start(
    bench: Bench, the_worker: Worker, running: list[tuple[Worker, asyncio.Task[None]]]
) -> asyncio.Task[None]:
    task = asyncio.create_task(the_worker.run())
    running.append((the_worker, task))
    await bench.clock.settle()
    return task


async def stopped(bench: Bench, the_worker: Worker, task: asyncio.Task[None]) -> None:
    the_worker.stop()
    await bench.clock.settle()
    assert task.done(), "the worker did not stop"
    task.result()


class BrokenNotifications:
    """A notification channel that fails at once every time it is asked to wait."""

    def __init__(self) -> None:
        self.waits = 0

    async def wait_for_work(self, kinds: Collection[str]) -> None:
        self.waits += 1
        raise StoreUnavailableError("listener connection lost")


async def statuses(bench: Bench, item_ids: list[int]) -> list[WorkStatus]:
    return [(await bench.item(item_id)).status for item_id in item_ids]
