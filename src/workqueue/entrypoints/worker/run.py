"""A worker's life: start up, run until told to stop, shut down cleanly.

Start-up goes in the order an operator reasons about it: the kinds (their
payloads, and those ``WORKQUEUE_KINDS`` names), the database (embedded or from the
URL), the schema (migrated, or checked), the kind registry, the caps its kinds'
policies declare (written to the store, docs/adr/0035), then the loop. Any
step that fails ends the run with one line saying why (raised to the CLI, which
prints it).

SIGTERM or SIGINT stops the run gracefully: nothing more is claimed, the running
handler is cancelled and its item released to ``queued`` without a stall, the
pool is closed, and the run returns normally (exit status 0). A signal during
start-up abandons the start-up (a connection still being retried gives up at
once) and closes what it opened; but a worker that never ran did not stop
cleanly, so the run returns that signal and the CLI says ``workqueue:
interrupted`` and exits with 128 + its number (130 for SIGINT, 143 for SIGTERM).
A second signal does not wait for any of that: the process exits at once with
that same status. An item it held is then recovered by lease expiry like any
dead worker's, and the embedded PostgreSQL, if any, is stopped by the next run's
stale-handle pruning.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Collection
from typing import TYPE_CHECKING

from workqueue.application.worker import Worker
from workqueue.entrypoints.console import take_noted_stop_signal
from workqueue.entrypoints.worker.container import WorkerContainer, provide, shutdown_resources
from workqueue.entrypoints.worker.policy_caps import write_policy_caps
from workqueue.entrypoints.worker.served_kinds import kinds_to_claim

if TYPE_CHECKING:
    from workqueue.entrypoints.web.health import Health
    from workqueue.entrypoints.worker.metrics import MetricsServer

__all__ = ["DEFAULT_STOP_SIGNALS", "ShutdownSignals", "run_worker"]

logger = logging.getLogger("workqueue.cli.worker")

DEFAULT_STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT)


class ShutdownSignals:
    """What the stop signals do at each moment of a run.

    Before the worker exists, the first signal cancels the start-up task; after,
    it asks the worker to stop. Any later signal forces the process out.
    """

    def __init__(self, startup: asyncio.Task[object]) -> None:
        self._startup = startup
        self._worker: Worker | None = None
        self.received = 0
        self.first: signal.Signals | None = None
        """The first stop signal received; None until one came."""

    @property
    def requested(self) -> bool:
        """True once a stop signal arrived."""
        return self.received > 0

    def attach(self, worker: Worker) -> None:
        """From now on a stop signal stops ``worker``; stop it now if one already came."""
        self._worker = worker
        if self.requested:
            worker.stop()

    def on_signal(self, signum: signal.Signals) -> None:
        """Handle one stop signal (called by the event loop, never concurrently)."""
        self.received += 1
        if self.received > 1:
            logger.warning(
                "second %s: exiting at once without releasing",
                signum.name,
                extra={"signal": signum.name},
            )
            _flush_logs()
            # Deliberately abrupt: the operator asked twice, and the graceful path
            # may be what is stuck. Lease recovery cleans up after us.
            os._exit(128 + signum.value)
        self.first = signum
        logger.info(
            "%s received: stopping gracefully (send it again to force)",
            signum.name,
            extra={"signal": signum.name},
        )
        if self._worker is not None:
            self._worker.stop()
        else:
            self._startup.cancel()


def _flush_logs() -> None:
    for handler in logging.getLogger().handlers:
        handler.flush()


async def _start(container: WorkerContainer, *, migrate: bool) -> Worker:
    # The kinds and their payloads are checked before any database is reached, and so
    # is each kind this worker is told to claim (the registry checks it again).
    kinds_to_claim(await provide(container.catalog), container.settings().kinds)
    database = await provide(container.database)
    if database.embedded_data_dir is not None:
        logger.info(
            "embedded PostgreSQL ready with its data in %s",
            database.embedded_data_dir,
            extra={"embedded_data_dir": str(database.embedded_data_dir)},
        )
    schema = await provide(container.schema)
    if migrate:
        applied = await schema.apply_pending()
        if applied:
            logger.info("applied migrations %s", ", ".join(applied), extra={"migrations": applied})
    else:
        await schema.check_current()
    registry = await provide(container.registry)
    store = await provide(container.work_store)
    claimed = await provide(container.claimed_kinds)
    await write_policy_caps(store, registry, claimed)
    worker = await provide(container.worker)
    executor = await provide(container.executor)
    started: dict[str, object] = {
        "worker_id": executor.worker_id,
        "kinds": sorted(executor.kinds),
        "database": database.shown,
    }
    if database.embedded_data_dir is not None:
        started["embedded_data_dir"] = str(database.embedded_data_dir)
    logger.info("worker started", extra=started)
    return worker


async def _serve_metrics(container: WorkerContainer) -> MetricsServer | None:
    """Serve the worker's /metrics and /healthz when WORKQUEUE_METRICS_PORT is set."""
    settings = container.settings()
    if settings.metrics_port is None:
        return None
    metrics = await provide(container.metrics)
    # The container makes them whenever the port is set.
    assert metrics is not None
    # Only now: these need the web extra, which a worker without metrics may lack.
    from workqueue.entrypoints.web.health import check_health
    from workqueue.entrypoints.worker.metrics import metrics_app, start_metrics_server

    monitor = await provide(container.work_monitor)
    schema = await provide(container.schema)

    async def health() -> Health:
        return await check_health(monitor, schema)

    app = metrics_app(metrics, health)
    return await start_metrics_server(app, settings.metrics_host, settings.metrics_port)


async def run_worker(
    container: WorkerContainer,
    *,
    migrate: bool = True,
    stop_signals: Collection[signal.Signals] = DEFAULT_STOP_SIGNALS,
) -> signal.Signals | None:
    """Start a worker from ``container`` and run it until a stop signal, then shut down.

    The container's resources (pool, notifications, embedded server) are shut
    down on the way out, whatever happened.

    :param migrate: apply pending migrations first; otherwise only check that
        none is pending.
    :param stop_signals: the signals that stop the run; tests pass none and call
        the worker's ``stop`` instead.
    :returns: None when the worker started and was stopped; the stop signal that
        came during start-up when it never ran (the CLI exits 128 + its number).
    :raises EmbeddedDatabaseError: if the embedded PostgreSQL cannot start.
    :raises DatabaseUnreachableError: if the database does not answer.
    :raises SchemaNotCurrentError: if ``migrate`` is False and the schema is not current.
    :raises KindRegistryError: if a kind lacks exactly one payload and one handler.
    :raises StoreUnavailableError: if the database stops answering while the caps of
        the kinds' policies are written.
    :raises SettingsError: if ``WORKQUEUE_KINDS`` names a kind no handler serves.
    """
    loop = asyncio.get_running_loop()
    current = asyncio.current_task()
    if current is None:
        raise RuntimeError("run_worker must run inside an asyncio task")
    signals = ShutdownSignals(current)
    # What the console script heard before this run could (its handlers given back
    # here, and at once replaced by the run's own, with no await in between).
    noted = take_noted_stop_signal()
    for signum in stop_signals:
        loop.add_signal_handler(signum, signals.on_signal, signum)
    if noted is not None:
        signals.on_signal(noted)
    try:
        try:
            worker = await _start(container, migrate=migrate)
        except asyncio.CancelledError:
            if signals.first is None:
                raise
            current.uncancel()
            logger.info(
                "%s during start-up: the worker never ran",
                signals.first.name,
                extra={"signal": signals.first.name},
            )
            return signals.first
        signals.attach(worker)
        metrics_server = await _serve_metrics(container)
        # A handler that blocks the loop costs only its own item (docs/adr/0036).
        watchdog = await provide(container.watchdog)
        watchdog.start()
        try:
            await worker.run()
        finally:
            await watchdog.stop()
            if metrics_server is not None:
                await metrics_server.stop()
    finally:
        try:
            await shutdown_resources(container)
        finally:
            for signum in stop_signals:
                loop.remove_signal_handler(signum)
    logger.info("worker shut down")
    return None
