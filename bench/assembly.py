"""The real worker path, put together the way the container does, on the benchmark's kinds.

Each benchmark worker gets its own pool, store and executor, and a
:class:`~workqueue.application.Worker` loop around them: the same objects production runs,
minus the periodic maintenance schedules (the benchmark enqueues its own work).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import asyncpg

from bench.kinds import BenchKind, BusyHandler, BusyJob, NoopHandler, NoopJob
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import (
    PostgresWorkNotifications,
    PostgresWorkQueue,
    PostgresWorkStore,
)
from workqueue.application import (
    DEFAULT_EXECUTOR_SETTINGS,
    DEFAULT_POLL_INTERVAL,
    ExecutorSettings,
    KindRegistry,
    LeaseRecovery,
    Worker,
    WorkScheduler,
)
from workqueue.domain import Clock
from workqueue.entrypoints.worker.container import executors_for
from workqueue.entrypoints.worker.log_format import configure_logging

__all__ = ["EVENT_LOOPS", "bench_registry", "build_worker", "configure_bench_logging", "run_on"]

T = TypeVar("T")

EVENT_LOOPS = ("uvloop", "asyncio")
"""The event loops the benchmark can run on; ``workqueue worker`` runs on uvloop."""


def bench_registry(
    *, noop: NoopHandler | None = None, clock: Clock | None = None
) -> KindRegistry[BenchKind]:
    """The registry of :class:`BenchKind`: a no-op handler and a busy one."""
    return KindRegistry(
        BenchKind,
        [NoopJob, BusyJob],
        [noop or NoopHandler(), BusyHandler(clock or SystemClock())],
    )


def build_worker(
    pool: asyncpg.Pool,
    registry: KindRegistry[BenchKind],
    *,
    worker_id: str,
    clock: Clock | None = None,
    settings: ExecutorSettings = DEFAULT_EXECUTOR_SETTINGS,
    notifications: PostgresWorkNotifications | None = None,
    poll_interval: timedelta = DEFAULT_POLL_INTERVAL,
    concurrency: int = 1,
) -> Worker:
    """A :class:`~workqueue.application.Worker` over its own store on ``pool``, as the container
    wires one.

    ``concurrency`` executors, each lane on a sibling of that store and sharing
    their heartbeats above one, as ``WORKQUEUE_CONCURRENCY`` gives them.
    """
    clock = clock or SystemClock()
    store = PostgresWorkStore(pool, clock)
    executors = executors_for(
        store,
        registry,
        clock,
        kinds=registry.kinds,  # every kind it serves, as a worker without --kinds
        worker_id=worker_id,
        settings=settings,
        concurrency=concurrency,
        metrics=None,
    )
    return Worker(
        executor=executors[0] if concurrency == 1 else executors,
        scheduler=WorkScheduler(PostgresWorkQueue(pool, clock), []),
        recovery=LeaseRecovery(store),
        clock=clock,
        poll_interval=poll_interval,
        notifications=notifications,
    )


def run_on(event_loop: str, main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a new loop of the kind named (see :data:`EVENT_LOOPS`)."""
    factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    if event_loop == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    elif event_loop != "asyncio":
        raise ValueError(f"unknown event loop {event_loop!r}, not one of {EVENT_LOOPS}")
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def configure_bench_logging(level: str, path: Path) -> None:
    """Log as a deployed worker does (its text formatter, ``level``), appending to ``path``.

    Every line is formatted and written as it would be to a worker's stderr, so
    per-item logging costs what it costs in production.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # Line-buffered append: one write per line, as a handler on stderr makes.
    stream = path.open("a", buffering=1, encoding="utf-8")
    configure_logging("text", level, stream=stream)
    logging.captureWarnings(True)
