"""A benchmark worker in a process of its own, started and stopped by the coordinator.

Python runs one thread at a time, so C workers in one process would share one
core's worth of Python; the drain at C=4 runs four of these processes instead,
as four deployed workers would. Each builds its own pool, store, executor,
LISTEN connection and :class:`~workqueue.application.Worker` (see :mod:`bench.assembly`),
says it is ready, waits for the go, runs until told to stop, and exits.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import timedelta
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnContext, SpawnProcess
from multiprocessing.synchronize import Event
from pathlib import Path

from bench.assembly import bench_registry, build_worker, configure_bench_logging, run_on
from bench.kinds import NoopHandler, NoopJob
from workqueue.adapters.postgres import PostgresWorkNotifications, close_pool, create_pool

__all__ = ["WorkerProcess", "WorkerProcessSpec", "spawn_context"]

_READY_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class WorkerProcessSpec:
    """What a worker process needs; plain values, since it crosses a process boundary.

    :param report_starts: send ``(seq, start_ns)`` through the pipe as each no-op
        handler starts (the latency workload's measurement).
    """

    dsn: str
    worker_id: str
    log_level: str
    log_path: str
    event_loop: str = "uvloop"
    report_starts: bool = False
    concurrency: int = 1
    # The dsn is a pooler in transaction mode: no statement cache, and LISTEN on
    # listen_dsn if given, else none (the worker polls every poll_seconds).
    transaction_pooling: bool = False
    listen_dsn: str | None = None
    poll_seconds: float = 5.0
    # Where the process writes the CPU seconds it spent from the go to the stop.
    cpu_path: str | None = None


def spawn_context() -> SpawnContext:
    """Fresh interpreters: forking a process that runs an event loop is not safe."""
    return multiprocessing.get_context("spawn")


class WorkerProcess:
    """The coordinator's handle on one worker process."""

    def __init__(self, context: SpawnContext, spec: WorkerProcessSpec) -> None:
        self.spec = spec
        self._ready = context.Event()
        self._go = context.Event()
        self._stop = context.Event()
        self.starts, child_end = context.Pipe(duplex=False)
        self._process: SpawnProcess = context.Process(
            target=_main,
            args=(spec, self._ready, self._go, self._stop, child_end),
            name=spec.worker_id,
            daemon=True,
        )

    def start(self) -> None:
        self._process.start()

    async def ready(self) -> None:
        """Wait until the worker is built and listening.

        :raises RuntimeError: if it is not ready within a minute, or died.
        """
        if not await asyncio.to_thread(self._ready.wait, _READY_TIMEOUT):
            raise RuntimeError(f"{self.spec.worker_id} was not ready within {_READY_TIMEOUT} s")

    def go(self) -> None:
        self._go.set()

    async def stop(self) -> None:
        """Stop the worker (its loop ends as after SIGTERM) and wait for the process to exit.

        :raises RuntimeError: if the process exited with an error.
        """
        self._stop.set()
        self._go.set()
        await asyncio.to_thread(self._process.join, _READY_TIMEOUT)
        if self._process.exitcode != 0:
            raise RuntimeError(f"{self.spec.worker_id} exited with {self._process.exitcode}")


def _main(
    spec: WorkerProcessSpec, ready: Event, go: Event, stop: Event, starts: Connection
) -> None:
    configure_bench_logging(spec.log_level, Path(spec.log_path))
    run_on(spec.event_loop, _run(spec, ready, go, stop, starts))


async def _run(
    spec: WorkerProcessSpec, ready: Event, go: Event, stop: Event, starts: Connection
) -> None:
    def report_start(payload: NoopJob, start_ns: int) -> None:
        starts.send((payload.seq, start_ns))

    noop = NoopHandler(report_start if spec.report_starts else None)
    # Sized as the worker's container sizes it
    # (workqueue.entrypoints.worker.database.pool_max_size_for).
    no_cache = {"statement_cache_size": 0} if spec.transaction_pooling else {}
    pool = await create_pool(spec.dsn, min_size=1, max_size=3 + spec.concurrency, **no_cache)
    try:
        async with AsyncExitStack() as stack:
            listen = spec.listen_dsn or (None if spec.transaction_pooling else spec.dsn)
            notifications = None
            if listen is not None:
                notifications = await stack.enter_async_context(PostgresWorkNotifications(listen))
                await notifications.listening()
            worker = build_worker(
                pool,
                bench_registry(noop=noop),
                worker_id=spec.worker_id,
                notifications=notifications,
                concurrency=spec.concurrency,
                poll_interval=timedelta(seconds=spec.poll_seconds),
            )
            ready.set()
            await asyncio.to_thread(go.wait)
            if stop.is_set():
                return
            cpu_at_go = time.process_time()
            running = asyncio.create_task(worker.run())
            await asyncio.to_thread(stop.wait)
            worker.stop()
            await running
            if spec.cpu_path is not None:
                spent = time.process_time() - cpu_at_go
                await asyncio.to_thread(Path(spec.cpu_path).write_text, f"{spent}\n")
    finally:
        await close_pool(pool)
        starts.close()
