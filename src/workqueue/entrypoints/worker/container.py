"""The composition root: every production object of the worker and the CLI, wired once.

Nothing is built when this module is imported, nor when the container is
created: a provider builds its object the first time something asks for it. So
``workqueue status`` never starts an executor, and a test that overrides the
stores with in-memory ones never opens a pool::

    container = build_container(settings)
    container.work_store.override(providers.Object(InMemoryWorkStore(state, clock)))

The database, the pool, the work queue and store (each keeps one of the
pool's connections) and the listener are resources: opened on first use, closed by
``await container.shutdown_resources()``, each before what it depends on.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Collection
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from dependency_injector import containers, providers

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import (
    PostgresActivityLog,
    PostgresRefreshTokenStore,
    PostgresWorkMonitor,
    PostgresWorkStore,
)
from workqueue.adapters.tracing import default_tracing
from workqueue.application.activity import ActivityRecorder
from workqueue.application.beats import SharedHeartbeats
from workqueue.application.completions import SharedCompletions
from workqueue.application.execution import ExecutorSettings
from workqueue.application.executor import WorkExecutor
from workqueue.application.recovery import LeaseRecovery
from workqueue.application.registry import KindCatalog, KindRegistry
from workqueue.application.renewals import Renewals
from workqueue.application.scheduler import WorkScheduler
from workqueue.application.worker import Worker
from workqueue.domain import (
    NO_TRACING,
    Clock,
    Lease,
    TokenCleanup,
    Tracing,
    WorkItemRetention,
    WorkPayload,
    WorkSchedule,
    WorkStore,
)
from workqueue.entrypoints.worker.app import WorkerResources, WorkQueueApp, load_app
from workqueue.entrypoints.worker.counting import counted_store, worker_metrics
from workqueue.entrypoints.worker.database import (
    open_database,
    open_notifications,
    open_pool,
    open_work_queue,
    open_work_store,
    pool_max_size_for,
)
from workqueue.entrypoints.worker.handlers import TokenCleanupHandler, WorkItemRetentionHandler
from workqueue.entrypoints.worker.schema import PostgresSchema
from workqueue.entrypoints.worker.served_kinds import (
    kinds_to_claim,
    schedules_to_run,
    served_handlers,
    served_kinds,
    served_payloads,
    served_schedules,
)
from workqueue.entrypoints.worker.settings import WorkerSettings
from workqueue.entrypoints.worker.watchdog import loop_watchdog, watchdog_store

if TYPE_CHECKING:
    from workqueue.adapters.prometheus import WorkerMetrics

__all__ = ["WorkerContainer", "build_container", "provide", "shutdown_resources"]

T = TypeVar("T")

logger = logging.getLogger("workqueue.container")


def _resources_needed(app: WorkQueueApp) -> str:
    return "needed" if app.handlers else "none"


def executors_for(
    store: WorkStore,
    registry: KindRegistry[Any],
    clock: Clock,
    *,
    kinds: Collection[str],
    worker_id: str,
    settings: ExecutorSettings,
    concurrency: int,
    metrics: WorkerMetrics | None,
    renewals: Renewals | None = None,
    tracing: Tracing = NO_TRACING,
) -> tuple[WorkExecutor, ...]:
    """``concurrency`` executors, each claiming ``kinds`` (some of ``registry``'s, or
    all) and stamping ``worker_id`` on its items.

    The first runs on ``store``; on PostgreSQL each further one on a sibling store
    of the same pool (:meth:`PostgresWorkStore.sibling`, closed with ``store``)
    that keeps a connection of its own; any other store is shared. The lanes share
    the worker's id: the process is the worker, and every write is fenced by its
    item's attempt, not by who claimed it. With ``metrics``, each lane's store is
    counted into them (:func:`~workqueue.entrypoints.worker.counting.counted_store`).
    Their claims read ``renewals``, what the loop watchdog renewed (docs/adr/0036).
    Each runs every attempt in a span of ``tracing`` (docs/adr/0038).

    Above one lane, the lanes share their heartbeats
    (:class:`~workqueue.application.beats.SharedHeartbeats`): one statement per interval
    renews every lease of the process; and their completions
    (:class:`~workqueue.application.completions.SharedCompletions`): lanes that finish items
    together complete them and claim the next ones in one statement. Each is on a
    store of its own, like a further lane's.
    """
    claimed_kinds: dict[Lease, str] = {}
    stores = [
        counted_store(lane_store, metrics, claimed_kinds)
        for lane_store in lane_stores(store, concurrency)
    ]
    heartbeats = completions = None
    if concurrency > 1:
        heartbeats = SharedHeartbeats(
            counted_store(sibling_of(store), metrics, claimed_kinds),
            clock,
            interval=settings.heartbeat_interval,
            lease_duration=settings.lease_duration,
        )
        completions = SharedCompletions(
            counted_store(sibling_of(store), metrics, claimed_kinds),
            kinds=kinds,
            worker_id=worker_id,
            lease_duration=settings.lease_duration,
        )
    return tuple(
        WorkExecutor(
            lane_store,
            registry,
            clock,
            worker_id=worker_id,
            settings=settings,
            heartbeats=heartbeats,
            completions=completions,
            kinds=kinds,
            renewals=renewals,
            tracing=tracing,
        )
        for lane_store in stores
    )


def lane_stores(store: WorkStore, concurrency: int) -> list[WorkStore]:
    """The store of each of ``concurrency`` lanes: ``store`` first, then its siblings."""
    return [store, *(sibling_of(store) for _ in range(concurrency - 1))]


def sibling_of(store: WorkStore) -> WorkStore:
    """A store like ``store`` with a connection of its own, on PostgreSQL; else ``store``."""
    if isinstance(store, PostgresWorkStore):
        return store.sibling()
    return store


def first_executor(executors: tuple[WorkExecutor, ...]) -> WorkExecutor:
    """The first lane's executor."""
    return executors[0]


def maintenance_schedule(
    payload: WorkPayload, interval: timedelta, cron: str | None, timezone: str
) -> WorkSchedule:
    """A built-in kind's schedule: its cron expression (in ``timezone``) when the
    settings give one, else its interval."""
    if cron is None:
        return WorkSchedule(payload, interval=interval)
    return WorkSchedule(payload, cron=cron, timezone=timezone)


class WorkerContainer(containers.DeclarativeContainer):
    """The worker's object graph. Tests override providers; they never patch."""

    # The WorkerSettings object itself, validated once by load_settings; each
    # provider reads its field from it, so every value keeps its type (a duration
    # is a timedelta) on its way to the service that reads it. Not given, any
    # provider that needs it fails loudly instead of wiring None into a service.
    settings = providers.Dependency(instance_of=WorkerSettings)

    clock = providers.Singleton(SystemClock)

    database = providers.Resource(
        open_database,
        database_url=settings.provided.database_url,
        embedded_data_dir=settings.provided.embedded_data_dir,
    )
    pool = providers.Resource(
        open_pool,
        database,
        clock=clock,
        min_size=settings.provided.pool_min_size,
        max_size=providers.Callable(
            pool_max_size_for,
            settings.provided.pool_max_size,
            concurrency=settings.provided.concurrency,
            min_size=settings.provided.pool_min_size,
        ),
        attempts=settings.provided.connect_attempts,
        transaction_pooling=settings.provided.transaction_pooling,
    )
    schema = providers.Singleton(PostgresSchema, pool)

    # Resources: each keeps a connection of the pool, handed back before the pool closes.
    work_queue = providers.Resource(open_work_queue, pool, clock)
    work_store = providers.Resource(open_work_store, pool, clock)
    # The worker's own counters (None unless WORKQUEUE_METRICS_PORT is set), and the
    # store its executor and recovery use: the work store, counted into them if so.
    metrics = providers.Singleton(worker_metrics, settings.provided.metrics_port)
    counted_work_store = providers.Singleton(counted_store, work_store, metrics)
    refresh_tokens = providers.Singleton(PostgresRefreshTokenStore, pool)
    # Read-only: what `workqueue status` and `workqueue web` show.
    work_monitor = providers.Singleton(PostgresWorkMonitor, pool)
    # The fleet's activity by minute, for the web view's charts (docs/adr/0040).
    activity_log = providers.Singleton(PostgresActivityLog, pool)
    notifications = providers.Resource(
        open_notifications,
        database,
        listen_url=settings.provided.listen_database_url,
        transaction_pooling=settings.provided.transaction_pooling,
    )

    # The application named by WORKQUEUE_APP (--app), imported on first use; without
    # one, NO_APP: the built-in kinds alone.
    app = providers.Singleton(load_app, settings.provided.app)
    # What the application's handler factories are given. Built only for an
    # application with handlers: an in-memory test world has no pool to give.
    resources = providers.Selector(
        providers.Callable(_resources_needed, app),
        needed=providers.Singleton(
            WorkerResources, pool=pool, queue=work_queue, clock=clock, settings=settings
        ),
        none=providers.Object(None),
    )

    # The built-in kinds: WorkKind's members, each with a payload, a handler and
    # (if periodic) a schedule in the lists below (README, "Adding a kind").
    kinds = providers.Callable(served_kinds, app)
    built_in_payloads = providers.List(
        providers.Object(TokenCleanup),
        providers.Object(WorkItemRetention),
    )
    payload_types = providers.Callable(served_payloads, app, built_in_payloads)
    built_in_handlers = providers.List(
        providers.Singleton(
            TokenCleanupHandler,
            refresh_tokens,
            clock,
            batch_size=settings.provided.token_cleanup_batch_size,
        ),
        providers.Singleton(
            WorkItemRetentionHandler,
            work_store,
            clock,
            settings.provided.retention,
            batch_size=settings.provided.retention_batch_size,
        ),
    )
    handlers = providers.Singleton(served_handlers, app, built_in_handlers, resources)
    built_in_schedules = providers.List(
        providers.Singleton(
            maintenance_schedule,
            payload=providers.Singleton(TokenCleanup),
            interval=settings.provided.token_cleanup_interval,
            cron=settings.provided.token_cleanup_cron,
            timezone=settings.provided.token_cleanup_timezone,
        ),
        providers.Singleton(
            maintenance_schedule,
            payload=providers.Singleton(WorkItemRetention),
            interval=settings.provided.retention_interval,
            cron=settings.provided.retention_cron,
            timezone=settings.provided.retention_timezone,
        ),
    )
    schedules = providers.Singleton(served_schedules, app, built_in_schedules)
    # The payload half, with no handler built and so no database reached: what
    # `enqueue` validates against and `status` names.
    catalog = providers.Singleton(KindCatalog, kinds, payload_types)
    registry = providers.Singleton(KindRegistry, kinds, payload_types, handlers, schedules)
    # The kinds this worker claims and the schedules it runs: those of the kinds of
    # WORKQUEUE_KINDS (--kinds), each of which the registry must serve; unset, all.
    claimed_kinds = providers.Singleton(kinds_to_claim, registry, settings.provided.kinds)
    worker_schedules = providers.Singleton(schedules_to_run, schedules, settings.provided.kinds)

    executor_settings = providers.Singleton(
        ExecutorSettings,
        heartbeat_interval=settings.provided.heartbeat_interval,
        lease_duration=settings.provided.lease_duration,
        max_error_length=settings.provided.max_error_length,
        max_progress_bytes=settings.provided.max_progress_bytes,
    )
    # What the loop watchdog renewed, read by every lane's claims (docs/adr/0036).
    renewals = providers.Singleton(Renewals)
    # OpenTelemetry's when the otel extra is installed: it records once the
    # application (its --app module, say) configures a tracer provider.
    tracing = providers.Singleton(default_tracing)
    # One executor per lane (WORKQUEUE_CONCURRENCY), all on the one store and pool.
    executors = providers.Singleton(
        executors_for,
        work_store,
        registry,
        clock,
        kinds=claimed_kinds,
        worker_id=settings.provided.worker_id,
        settings=executor_settings,
        concurrency=settings.provided.concurrency,
        metrics=metrics,
        renewals=renewals,
        tracing=tracing,
    )
    # A handler that blocks the event loop costs only its own item (docs/adr/0036): the
    # watchdog renews the other items' leases meanwhile, on a store it opens when needed.
    watchdog = providers.Singleton(
        loop_watchdog,
        executors,
        renewals,
        clock,
        open_store=providers.Factory(
            partial,
            watchdog_store,
            database,
            clock,
            transaction_pooling=settings.provided.transaction_pooling,
        ),
        worker_id=settings.provided.worker_id,
        settings=executor_settings,
    )
    # The first lane's: what the start-up line names.
    executor = providers.Singleton(first_executor, executors)
    scheduler = providers.Singleton(WorkScheduler, work_queue, worker_schedules)
    recovery = providers.Singleton(
        LeaseRecovery, counted_work_store, max_stalls=settings.provided.max_stalls
    )
    # What the lanes ran, by minute, added to activity_log at every cycle.
    activity = providers.Singleton(ActivityRecorder, activity_log, clock)
    worker = providers.Singleton(
        Worker,
        executor=executors,
        scheduler=scheduler,
        recovery=recovery,
        clock=clock,
        poll_interval=settings.provided.poll_interval,
        notifications=notifications,
        activity=activity,
    )


def build_container(settings: WorkerSettings) -> WorkerContainer:
    """A container wired from ``settings``; nothing in it is built yet."""
    return WorkerContainer(settings=providers.Object(settings))


async def provide(provider: providers.Provider[T]) -> T:
    """The object ``provider`` gives, awaited when building it needed a resource.

    A provider that depends on an async resource (the pool) returns an awaitable;
    the same provider with its dependencies overridden by plain objects does not.
    Callers need not know which.

    Cancelled while waiting (Ctrl-C, a stop signal during start-up), it cancels
    the tasks that building started too: a pool still retrying an unreachable
    database gives up at once instead of retrying on behind the exit.
    """
    before = asyncio.all_tasks()
    provided = provider()
    if not inspect.isawaitable(provided):
        return provided
    started = asyncio.all_tasks() - before
    building = asyncio.ensure_future(provided)
    try:
        # Shielded: a future of the framework's cancelled while its tasks still
        # run makes it log an error, with a traceback, when they end.
        awaited: T = await asyncio.shield(building)
    except asyncio.CancelledError:
        await _abandon(building, started)
        raise
    return awaited


# How long an abandoned build may take to settle once its tasks are cancelled.
_ABANDON_GRACE_SECONDS = 1.0


async def _abandon(building: asyncio.Future[object], started: set[asyncio.Task[object]]) -> None:
    """Cancel what building started, and let the framework settle its future.

    The resources turn their cancellation into an error of their own (see
    ``open_pool``), which the framework passes up its chain of futures; a
    cancellation itself would escape its callbacks as a logged traceback.
    """
    for task in started:
        task.cancel()
    await asyncio.gather(*started, return_exceptions=True)
    await asyncio.wait({building}, timeout=_ABANDON_GRACE_SECONDS)
    if not building.done():
        building.cancel()
    elif not building.cancelled():
        building.exception()  # retrieved: its failure is the cancellation's doing


async def shutdown_resources(container: WorkerContainer) -> None:
    """Close whatever the run opened: pool, listener, embedded server. Failures are logged.

    The run is over either way; a pool that cannot close cleanly (the database
    went away) must not turn a clean stop into a failure.
    """
    try:
        pending = container.shutdown_resources()
        if pending is not None:
            await pending
    except Exception:
        logger.warning("closing the database resources failed", exc_info=True)
