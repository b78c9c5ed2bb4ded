"""A worker's life: start-up in order, real stop signals, a forced exit, what it logs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from dependency_injector import providers
from worker_world import DATABASE_URL, WorkerWorld

from workqueue.entrypoints.worker.container import WorkerContainer, provide
from workqueue.entrypoints.worker.database import DatabaseTarget
from workqueue.entrypoints.worker.run import ShutdownSignals, run_worker
from workqueue.entrypoints.worker.settings import WorkerSettings

SAFETY_NET = 10.0


RUN_LOG = "workqueue.cli.worker"


# A signal whose default action would end the test run, so the test ignores it
# itself unless run_worker's handler is in place.
STOP = signal.SIGUSR1


async def ended(running: asyncio.Task[object]) -> None:
    """Let the loop take in the signal and the run wind down.

    The wind-down joins the loop watchdog's thread, so it takes a moment of real
    time; the wait is bounded by the safety net alone. ``asyncio.wait`` does not
    cancel the run when that runs out (a cancel would reach the run as a stop).
    """
    await asyncio.wait({running}, timeout=SAFETY_NET)
    assert running.done(), "the run did not end after the stop signal"
    running.result()


def run_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == RUN_LOG]


@pytest.fixture
def info_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO)
    return caplog


@pytest.fixture
def stop_signal_ignored() -> Iterator[None]:
    previous = signal.signal(STOP, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(STOP, previous)


class BlockingSchema:
    """A schema whose migration waits until the test lets it go on."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.go_on = asyncio.Event()

    async def apply_pending(self) -> list[str]:
        self.entered.set()
        await self.go_on.wait()
        return []

    async def check_current(self) -> None:
        return None


class ClosableDatabase:
    """A database resource that records whether it was closed."""

    def __init__(self, target: DatabaseTarget) -> None:
        self.target = target
        self.closed = False

    async def open(self) -> AsyncIterator[DatabaseTarget]:
        try:
            yield self.target
        finally:
            self.closed = True


class TestStopSignals:
    async def test_a_stop_signal_during_startup_closes_resources_and_the_run_gives_the_signal(
        self, world: WorkerWorld, info_log: pytest.LogCaptureFixture, stop_signal_ignored: None
    ) -> None:
        schema = BlockingSchema()
        database = ClosableDatabase(world.database)
        container = world.container()
        container.schema.override(providers.Object(schema))
        container.database.override(providers.Resource(database.open))
        running = asyncio.create_task(run_worker(container, stop_signals=(STOP,)))
        async with asyncio.timeout(SAFETY_NET):
            await schema.entered.wait()

        os.kill(os.getpid(), STOP)
        await ended(running)

        # The worker never ran: the CLI says "interrupted" and exits 128 + the signal.
        assert running.result() is STOP
        assert run_lines(info_log)[-2:] == [
            ("INFO", "SIGUSR1 received: stopping gracefully (send it again to force)"),
            ("INFO", "SIGUSR1 during start-up: the worker never ran"),
        ]
        abandoned = [r for r in info_log.records if r.name == RUN_LOG][-1]
        assert getattr(abandoned, "signal", None) == "SIGUSR1"
        assert database.closed
        assert world.state.items == {}
        assert asyncio.get_running_loop().remove_signal_handler(STOP) is False

    async def test_a_stop_signal_after_startup_stops_the_worker_and_the_run_says_so(
        self, world: WorkerWorld, info_log: pytest.LogCaptureFixture, stop_signal_ignored: None
    ) -> None:
        database = ClosableDatabase(world.database)
        container = world.container()
        container.database.override(providers.Resource(database.open))
        running = asyncio.create_task(run_worker(container, stop_signals=(STOP,)))
        await world.clock.settle()
        assert not running.done()

        os.kill(os.getpid(), STOP)
        await ended(running)

        # A clean stop: the CLI exits 0.
        assert running.result() is None
        assert run_lines(info_log)[-2:] == [
            ("INFO", "SIGUSR1 received: stopping gracefully (send it again to force)"),
            ("INFO", "worker shut down"),
        ]
        signalled = [r for r in info_log.records if "received" in r.getMessage()]
        assert [getattr(r, "signal", None) for r in signalled] == ["SIGUSR1"]
        assert database.closed
        assert not any(r.levelno >= logging.WARNING for r in info_log.records)

    async def test_an_interruption_without_a_stop_signal_is_not_swallowed(
        self, world: WorkerWorld
    ) -> None:
        schema = BlockingSchema()
        container = world.container()
        container.schema.override(providers.Object(schema))
        running = asyncio.create_task(run_worker(container, stop_signals=()))
        async with asyncio.timeout(SAFETY_NET):
            await schema.entered.wait()

        running.cancel()

        with pytest.raises(asyncio.CancelledError):
            await running

    async def test_a_second_signal_exits_at_once_with_128_plus_the_signal(
        self, world: WorkerWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        worker = await provide(world.container().worker)
        signals = ShutdownSignals(asyncio.create_task(asyncio.sleep(0)))
        signals.attach(worker)
        signals.on_signal(signal.SIGTERM)
        assert signals.received == 1

        with pytest.raises(Exception, match=r"^os\._exit\(143\) called$"):
            signals.on_signal(signal.SIGTERM)

        last = [r for r in caplog.records if r.name == RUN_LOG][-1]
        assert (last.levelname, last.getMessage()) == (
            "WARNING",
            "second SIGTERM: exiting at once without releasing",
        )
        assert getattr(last, "signal", None) == "SIGTERM"

    async def test_a_fresh_run_has_received_no_signal(self) -> None:
        signals = ShutdownSignals(asyncio.create_task(asyncio.sleep(0)))

        assert (signals.received, signals.requested, signals.first) == (0, False, None)
        signals.on_signal(signal.SIGINT)
        assert (signals.received, signals.requested, signals.first) == (1, True, signal.SIGINT)

    async def test_run_worker_outside_a_task_is_refused(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(asyncio, "current_task", lambda: None)

        with pytest.raises(RuntimeError) as refused:
            await run_worker(world.container(), stop_signals=())

        assert str(refused.value) == "run_worker must run inside an asyncio task"


class TestStartupLines:
    async def test_an_embedded_database_and_the_migrations_applied_are_logged(
        self, world: WorkerWorld, info_log: pytest.LogCaptureFixture
    ) -> None:
        world.database = DatabaseTarget(dsn=DATABASE_URL, embedded_data_dir=Path("/srv/pgdata"))
        world.schema.missing = ["0001_work_items", "0002_refresh_tokens"]
        container = world.container()
        running = asyncio.create_task(run_worker(container, stop_signals=()))
        await world.clock.settle()
        container.worker().stop()
        async with asyncio.timeout(SAFETY_NET):
            await running

        lines = run_lines(info_log)
        assert lines[:3] == [
            ("INFO", "embedded PostgreSQL ready with its data in /srv/pgdata"),
            ("INFO", "applied migrations 0001_work_items, 0002_refresh_tokens"),
            ("INFO", "worker started"),
        ]
        ready, applied, started = [r for r in info_log.records if r.name == RUN_LOG][:3]
        assert getattr(ready, "embedded_data_dir", None) == "/srv/pgdata"
        assert getattr(applied, "migrations", None) == ["0001_work_items", "0002_refresh_tokens"]
        assert getattr(started, "embedded_data_dir", None) == "/srv/pgdata"

    async def test_a_database_from_a_url_logs_no_data_directory(
        self, world: WorkerWorld, info_log: pytest.LogCaptureFixture
    ) -> None:
        container = world.container()
        running = asyncio.create_task(run_worker(container, stop_signals=()))
        await world.clock.settle()
        container.worker().stop()
        async with asyncio.timeout(SAFETY_NET):
            await running

        records = [r for r in info_log.records if r.name == RUN_LOG]
        assert [r.getMessage() for r in records] == ["worker started", "worker shut down"]
        assert not hasattr(records[0], "embedded_data_dir")


@contextlib.asynccontextmanager
async def running_worker(
    container: WorkerContainer,
) -> AsyncIterator[asyncio.Task[signal.Signals | None]]:
    """A run of ``container``'s worker, stopped by the stop signal when the block ends.

    A run the block left running (a failed assertion) is cancelled, so that no
    worker outlives its test.
    """
    running = asyncio.create_task(run_worker(container, stop_signals=(STOP,)))
    try:
        yield running
        # A run that has ended (a crash) has given the signal back its default
        # action, which would end the test process: only a running run is signalled.
        if not running.done():
            os.kill(os.getpid(), STOP)
        async with asyncio.timeout(SAFETY_NET):
            await running
    finally:
        running.cancel()


class TestAWorkerWithAMetricsPort:
    async def test_it_serves_its_counters_and_health_while_it_runs_and_stops_with_it(
        self, world: WorkerWorld, info_log: pytest.LogCaptureFixture, stop_signal_ignored: None
    ) -> None:
        port = free_port()
        container = world.container(WorkerSettings(worker_id="test-worker", metrics_port=port))
        async with running_worker(container):
            await world.clock.settle()
            assert f"serving the worker's metrics on http://127.0.0.1:{port}/metrics" in (
                info_log.text
            )
            async with (
                asyncio.timeout(SAFETY_NET),
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
            ):
                metrics = (await client.get("/metrics")).text
                health = await client.get("/healthz")

        # The first cycle ran both periodic kinds, each claimed and completed once.
        for kind in ("token_cleanup", "work_item_retention"):
            assert f'workqueue_worker_claimed_total{{kind="{kind}"}} 1.0' in metrics
            assert f'workqueue_worker_succeeded_total{{kind="{kind}"}} 1.0' in metrics
        assert (health.status_code, health.json()["status"]) == (200, "ok")
        assert run_lines(info_log)[-1] == ("INFO", "worker shut down")
        async with httpx.AsyncClient() as client:
            with pytest.raises(httpx.ConnectError):
                await client.get(f"http://127.0.0.1:{port}/metrics")

    async def test_its_health_follows_the_schema(
        self, world: WorkerWorld, info_log: pytest.LogCaptureFixture, stop_signal_ignored: None
    ) -> None:
        port = free_port()
        container = world.container(WorkerSettings(worker_id="test-worker", metrics_port=port))
        async with running_worker(container):
            await world.clock.settle()
            world.schema.missing = ["0099_later"]
            async with (
                asyncio.timeout(SAFETY_NET),
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client,
            ):
                health = await client.get("/healthz")

        assert health.status_code == 503
        assert health.json()["schema"] == "not current"

    async def test_without_one_nothing_is_served(
        self, world: WorkerWorld, info_log: pytest.LogCaptureFixture, stop_signal_ignored: None
    ) -> None:
        async with running_worker(world.container()):
            await world.clock.settle()

        assert run_lines(info_log)[-1] == ("INFO", "worker shut down")
        assert "metrics" not in info_log.text


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
