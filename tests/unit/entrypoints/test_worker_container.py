"""The composition root: settings reach the services they tune, resources are provided and
closed, and a worker runs on it with its ports overridden by in-memory adapters."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

import asyncpg
import pytest
from dependency_injector import providers
from dependency_injector.errors import Error as DependencyError
from worker_world import PRODUCTION_KINDS, SECRET, WorkerWorld, periodic_kinds

from recorded_spans import RecordedSpans
from workqueue.adapters.memory import InMemoryRefreshTokenStore, InMemoryWorkStore
from workqueue.adapters.otel import OpenTelemetryTracing
from workqueue.adapters.postgres import PostgresWorkStore, SchemaNotCurrentError
from workqueue.adapters.prometheus import WorkerMetrics
from workqueue.adapters.testing import FakeClock
from workqueue.application.execution import ExecutorSettings
from workqueue.application.registry import KindRegistry
from workqueue.domain import (
    HeartbeatAnswer,
    KindRegistryError,
    Lease,
    TokenCleanup,
    WorkContext,
    WorkHandler,
    WorkItemRetention,
    WorkPayload,
    WorkStatus,
)
from workqueue.entrypoints.worker import container as container_module
from workqueue.entrypoints.worker.container import (
    WorkerContainer,
    _abandon,
    build_container,
    executors_for,
    lane_stores,
    provide,
    shutdown_resources,
)
from workqueue.entrypoints.worker.database import DatabaseTarget
from workqueue.entrypoints.worker.handlers import TokenCleanupHandler
from workqueue.entrypoints.worker.run import ShutdownSignals, run_worker
from workqueue.entrypoints.worker.settings import WorkerSettings

# Time never passes on the FakeClock, so a start-up that wrongly succeeds would run
# the worker forever; this bound turns that into a failure instead of a hang.
SAFETY_NET = 10.0


class SlowKind(StrEnum):
    SLOW = "slow"


class Slow(WorkPayload):
    kind = SlowKind.SLOW


class SlowHandler(WorkHandler[Slow]):
    """Reports that it started, then waits until cancelled."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def handle(self, payload: Slow, ctx: WorkContext) -> None:
        ctx.report_progress({"step": "started"})
        self.started.set()
        await asyncio.Event().wait()


class Outspoken(WorkHandler[Slow]):
    """Reports more progress than it may, waits for ``go``, then fails with a long error."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.refusals: list[str] = []

    async def handle(self, payload: Slow, ctx: WorkContext) -> None:
        try:
            ctx.report_progress({"text": "x" * 2048})
        except ValueError as refused:
            self.refusals.append(str(refused).rpartition("; ")[2])
        await self.go.wait()
        raise RuntimeError("x" * 500)


async def statuses(world: WorkerWorld) -> dict[str, WorkStatus]:
    return {item.kind: item.status for item in world.state.snapshot()}


async def test_settings_reach_the_services_they_tune(world: WorkerWorld) -> None:
    settings = WorkerSettings(
        worker_id="w-1",
        heartbeat_interval=timedelta(seconds=1),
        lease_duration=timedelta(seconds=30),
        max_stalls=5,
        max_error_length=100,
        max_progress_bytes=2048,
        token_cleanup_interval=timedelta(hours=6),
        retention_interval=timedelta(hours=12),
    )
    container = world.container(settings)
    handler = Outspoken()
    container.registry.override(providers.Object(KindRegistry(SlowKind, [Slow], [handler])))

    executor = await provide(container.executor)
    recovery = await provide(container.recovery)
    scheduler = await provide(container.scheduler)

    assert executor.worker_id == "w-1"
    assert await provide(container.executor_settings) == ExecutorSettings(
        heartbeat_interval=timedelta(seconds=1),
        lease_duration=timedelta(seconds=30),
        max_error_length=100,
        max_progress_bytes=2048,
    )
    # The executor runs on them: a 30 s lease renewed every second, a progress
    # snapshot of at most 2048 bytes, an error of at most 100 characters.
    item_id = (await world.queue.enqueue(Slow())).id
    started = world.clock.now()
    run = asyncio.create_task(executor.run_next())
    await world.clock.advance(1)
    running = await world.store.get(item_id)
    assert running is not None
    assert running.lease_expires_at == started + timedelta(seconds=31)
    assert running.worker_id == "w-1"
    handler.go.set()
    await run
    failed = await world.store.get(item_id)
    assert failed is not None
    assert (failed.status, len(failed.error or "")) == (WorkStatus.FAILED, 100)
    assert handler.refusals == ["the limit (max_progress_bytes) is 2048"]
    assert recovery.max_stalls == 5
    assert [(s.kind, s.interval, s.dedup_key) for s in scheduler.schedules] == [
        ("token_cleanup", timedelta(hours=6), "periodic"),
        ("work_item_retention", timedelta(hours=12), "periodic"),
    ]


async def test_the_registry_serves_every_production_kind(world: WorkerWorld) -> None:
    registry = await provide(world.container().registry)

    assert registry.kinds == set(PRODUCTION_KINDS)
    assert registry.payload_type("token_cleanup") is TokenCleanup
    assert registry.payload_type("work_item_retention") is WorkItemRetention


async def test_overridden_ports_keep_the_pool_and_the_database_closed(world: WorkerWorld) -> None:
    container = world.container()

    await provide(container.worker)

    assert not container.pool.initialized
    assert not container.database.initialized


async def test_a_worker_on_in_memory_adapters_runs_both_periodic_kinds(
    world: WorkerWorld,
) -> None:
    container = world.container()
    running = asyncio.create_task(run_worker(container, stop_signals=()))
    await world.clock.settle()

    assert await statuses(world) == dict.fromkeys(periodic_kinds(), WorkStatus.SUCCEEDED)
    container.worker().stop()
    await running


async def test_a_missing_handler_stops_startup_with_the_registry_message(
    world: WorkerWorld,
) -> None:
    container = world.container()
    container.handlers.override(
        providers.List(
            providers.Object(
                TokenCleanupHandler(InMemoryRefreshTokenStore(world.state), world.clock)
            )
        )
    )

    with pytest.raises(KindRegistryError, match="kind 'work_item_retention' has no handler"):
        async with asyncio.timeout(SAFETY_NET):
            await run_worker(container, stop_signals=())

    assert world.state.items == {}


async def test_startup_applies_pending_migrations(world: WorkerWorld) -> None:
    world.schema.missing = ["0001_work_items"]
    container = world.container()
    running = asyncio.create_task(run_worker(container, stop_signals=()))
    await world.clock.settle()

    assert world.schema.missing == []
    container.worker().stop()
    await running


async def test_without_migrating_an_unmigrated_database_stops_startup(world: WorkerWorld) -> None:
    world.schema.missing = ["0001_work_items"]

    with pytest.raises(SchemaNotCurrentError, match="run `workqueue migrate`"):
        async with asyncio.timeout(SAFETY_NET):
            await run_worker(world.container(), migrate=False, stop_signals=())

    assert world.state.items == {}


async def test_the_started_line_names_worker_kinds_and_database_without_its_password(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    container = world.container(WorkerSettings(worker_id="w-9"))
    running = asyncio.create_task(run_worker(container, stop_signals=()))
    await world.clock.settle()
    container.worker().stop()
    await running

    (started,) = [r for r in caplog.records if r.getMessage() == "worker started"]
    assert started.__dict__["worker_id"] == "w-9"
    assert started.__dict__["kinds"] == PRODUCTION_KINDS
    assert started.__dict__["database"] == "postgresql://wq:***@db.example:5432/queue"
    assert SECRET not in caplog.text


async def test_stopping_the_worker_releases_the_running_item_without_a_stall(
    world: WorkerWorld,
) -> None:
    slow = SlowHandler()
    container = world.container()
    container.registry.override(providers.Object(KindRegistry(SlowKind, [Slow], [slow])))
    container.schedules.override(providers.Object([]))
    item_id = (await world.queue.enqueue(Slow())).id
    running = asyncio.create_task(run_worker(container, stop_signals=()))
    await slow.started.wait()
    await world.clock.advance(5)

    container.worker().stop()
    await running

    item = await world.store.get(item_id)
    assert item is not None
    assert (item.status, item.stalls, item.attempt) == (WorkStatus.QUEUED, 0, 1)
    assert item.progress == {"step": "started"}


async def test_a_stop_signal_during_startup_abandons_the_startup(world: WorkerWorld) -> None:
    startup = asyncio.create_task(asyncio.Event().wait())
    signals = ShutdownSignals(startup)

    signals.on_signal(signal.SIGTERM)
    await asyncio.gather(startup, return_exceptions=True)

    assert startup.cancelled()
    assert signals.requested


async def test_a_worker_attached_after_a_stop_signal_is_stopped_at_once(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="workqueue.worker")
    worker = await provide(world.container().worker)
    signals = ShutdownSignals(asyncio.create_task(asyncio.sleep(0)))
    signals.on_signal(signal.SIGINT)

    signals.attach(worker)

    # A stopped worker's run ends at once.
    async with asyncio.timeout(SAFETY_NET):
        await worker.run()
    assert "worker test-worker stopping" in caplog.messages


async def test_a_stop_signal_after_startup_stops_the_worker(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="workqueue.worker")
    startup = asyncio.create_task(asyncio.sleep(0))
    worker = await provide(world.container().worker)
    signals = ShutdownSignals(startup)
    signals.attach(worker)

    signals.on_signal(signal.SIGTERM)
    await startup

    assert "worker test-worker stopping" in caplog.messages
    async with asyncio.timeout(SAFETY_NET):
        await worker.run()
    assert not startup.cancelled()


class Resource:
    def __init__(self, target: DatabaseTarget, *, closing_fails: bool = False) -> None:
        self.target = target
        self.closing_fails = closing_fails
        self.closed = False

    async def open(self) -> AsyncIterator[DatabaseTarget]:
        yield self.target
        self.closed = True
        if self.closing_fails:
            raise OSError("the server went away")


async def test_an_object_built_on_an_async_resource_is_provided_awaited(
    world: WorkerWorld,
) -> None:
    container = world.container()
    resource = Resource(world.database)
    container.database.override(providers.Resource(resource.open))

    assert await provide(container.database) is world.database


async def test_an_object_built_on_plain_objects_is_provided_as_it_is(world: WorkerWorld) -> None:
    container = world.container()

    assert await provide(container.database) is world.database


async def test_shutting_down_closes_the_opened_resources_quietly(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    container = world.container()
    resource = Resource(world.database)
    container.database.override(providers.Resource(resource.open))
    await provide(container.database)

    await shutdown_resources(container)

    assert resource.closed
    assert caplog.records == []


async def test_a_resource_that_fails_to_close_is_a_warning_not_a_failure(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    container = world.container()
    resource = Resource(world.database, closing_fails=True)
    container.database.override(providers.Resource(resource.open))
    await provide(container.database)

    await shutdown_resources(container)

    (record,) = caplog.records
    assert (record.name, record.levelname, record.getMessage()) == (
        "workqueue.container",
        "WARNING",
        "closing the database resources failed",
    )
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], OSError)


def test_every_other_setting_reaches_the_argument_it_sets_with_its_own_type() -> None:
    settings = WorkerSettings(
        database_url="postgresql://app@db/queue",
        embedded_data_dir=Path("/srv/pgdata"),
        pool_min_size=2,
        pool_max_size=3,
        connect_attempts=9,
        poll_interval=timedelta(milliseconds=1500),
        retention=timedelta(days=3),
        retention_batch_size=10,
        token_cleanup_batch_size=20,
    )
    container = build_container(settings)

    database = {name: value() for name, value in container.database.kwargs.items()}
    pool = {name: container.pool.kwargs[name]() for name in ("min_size", "max_size", "attempts")}
    token_cleanup, retention = container.built_in_handlers.args

    assert database == {
        "database_url": settings.database_url,
        "embedded_data_dir": Path("/srv/pgdata"),
    }
    assert pool == {"min_size": 2, "max_size": 3, "attempts": 9}
    assert token_cleanup.kwargs["batch_size"]() == 20
    assert retention.args[2]() == timedelta(days=3)
    assert retention.kwargs["batch_size"]() == 10
    assert container.worker.kwargs["poll_interval"]() == timedelta(milliseconds=1500)


def test_a_container_given_no_settings_refuses_to_build_anything_that_needs_them() -> None:
    container = WorkerContainer()

    with pytest.raises(DependencyError, match=r'Dependency "WorkerContainer\.settings" is not'):
        container.executor_settings()


class TestEachLaneKeepsAConnectionOfItsOwn:
    def test_on_postgresql_each_further_lane_gets_a_sibling_store(self) -> None:
        store = PostgresWorkStore(cast(asyncpg.Pool, object()), FakeClock())

        stores = lane_stores(store, 3)

        assert stores[0] is store
        assert len({id(lane) for lane in stores}) == 3
        assert all(isinstance(lane, PostgresWorkStore) for lane in stores)

    def test_any_other_store_is_shared_by_the_lanes(self, world: WorkerWorld) -> None:
        store = world.store

        assert lane_stores(store, 3) == [store, store, store]


class TestEachLaneCountsIntoTheWorkersMetrics:
    async def test_with_a_metrics_port_every_lane_counts_into_the_one_set_of_counters(
        self, world: WorkerWorld
    ) -> None:
        container = world.container(
            WorkerSettings(worker_id="test-worker", concurrency=3, metrics_port=9187)
        )
        await world.queue.enqueue(TokenCleanup())
        await world.queue.enqueue(TokenCleanup())

        executors = await provide(container.executors)
        metrics = await provide(container.metrics)
        assert metrics is not None
        for executor in executors[:2]:
            assert await executor.run_next() is not None

        claimed = metrics.registry.get_sample_value(
            "workqueue_worker_claimed_total", {"kind": "token_cleanup"}
        )
        assert (len(executors), claimed) == (3, 2)

    async def test_without_one_the_lanes_use_the_store_itself(self, world: WorkerWorld) -> None:
        container = world.container(WorkerSettings(worker_id="test-worker", concurrency=2))
        store = await provide(container.work_store)

        executors = await provide(container.executors)

        assert await provide(container.metrics) is None
        await world.queue.enqueue(TokenCleanup())
        assert await executors[1].run_next() is not None
        assert await store.count_by_kind_and_status() == {
            ("token_cleanup", WorkStatus.SUCCEEDED): 1
        }


class TestAnAbandonedBuild:
    """What is left of a start-up cancelled while its providers build (Ctrl-C)."""

    async def test_every_task_it_started_has_ended_once_it_is_abandoned(self) -> None:
        cleaned: list[str] = []

        async def resource() -> object:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                # Cleaning up takes a few turns of the loop.
                for _ in range(3):
                    await asyncio.sleep(0)
                cleaned.append("closed")
                raise
            return None

        task: asyncio.Task[object] = asyncio.ensure_future(resource())
        await asyncio.sleep(0)
        building: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        building.set_result(None)

        await _abandon(building, {task})

        assert task.cancelled()
        assert cleaned == ["closed"]

    async def test_a_build_that_never_settles_is_cancelled_after_the_grace(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(container_module, "_ABANDON_GRACE_SECONDS", 0.01)
        building: asyncio.Future[object] = asyncio.get_running_loop().create_future()

        await asyncio.wait_for(_abandon(building, set()), timeout=5)

        assert building.cancelled()

    async def test_a_failed_build_s_error_is_taken_as_the_cancellation_s_doing(self) -> None:
        building: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        building.set_exception(RuntimeError("connecting was interrupted"))

        await _abandon(building, set())

        assert building.done()
        assert not building.cancelled()


class RecordedHeartbeats(InMemoryWorkStore):
    """The in-memory store, recording how its leases were renewed: one at a time or many."""

    def __init__(self, world: WorkerWorld) -> None:
        super().__init__(world.state, world.clock)
        self.calls: list[str] = []
        self._many = False

    async def heartbeat(self, *args: Any, **kwargs: Any) -> HeartbeatAnswer:
        if not self._many:  # not one of heartbeat_many's own
            self.calls.append("heartbeat")
        return await super().heartbeat(*args, **kwargs)

    async def heartbeat_many(self, *args: Any, **kwargs: Any) -> list[HeartbeatAnswer]:
        self.calls.append("heartbeat_many")
        self._many = True
        try:
            return await super().heartbeat_many(*args, **kwargs)
        finally:
            self._many = False


class TestTheLanesShareOneHeartbeat:
    @pytest.mark.parametrize(
        ("concurrency", "calls"), [(1, ["heartbeat"]), (2, ["heartbeat_many"])]
    )
    async def test_above_one_lane_each_interval_renews_every_lease_in_one_store_call(
        self, world: WorkerWorld, concurrency: int, calls: list[str]
    ) -> None:
        store = RecordedHeartbeats(world)
        handler = SlowHandler()
        executors = executors_for(
            store,
            KindRegistry(SlowKind, [Slow], [handler]),
            world.clock,
            kinds={"slow"},
            worker_id="w",
            settings=ExecutorSettings(),
            concurrency=concurrency,
            metrics=None,
        )
        for _ in executors:
            await world.queue.enqueue(Slow())
        runs = [asyncio.create_task(executor.run_next()) for executor in executors]
        await world.clock.settle()

        await world.clock.advance(2)

        assert store.calls == calls
        assert [item.heartbeat_at for item in world.state.snapshot()] == [
            world.clock.now()
        ] * concurrency
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)

    async def test_a_lease_another_lane_claimed_counts_as_lost_for_its_kind(
        self, world: WorkerWorld
    ) -> None:
        metrics = WorkerMetrics()
        executors = executors_for(
            world.store,
            KindRegistry(SlowKind, [Slow], [SlowHandler()]),
            world.clock,
            kinds={"slow"},
            worker_id="w",
            settings=ExecutorSettings(),
            concurrency=2,
            metrics=metrics,
        )
        for _ in executors:
            await world.queue.enqueue(Slow())
        runs = [asyncio.create_task(executor.run_next()) for executor in executors]
        await world.clock.settle()
        second = max(world.state.items)
        world.state.write(replace(world.state.items[second], attempt=2))

        await world.clock.advance(2)

        lost = metrics.registry.get_sample_value(
            "workqueue_worker_leases_lost_total", {"kind": "slow"}
        )
        assert lost == 1
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)


class Together(WorkHandler[Slow]):
    """Every item waits for one event, so that the lanes finish theirs in one turn."""

    def __init__(self) -> None:
        self.go = asyncio.Event()

    async def handle(self, payload: Slow, ctx: WorkContext) -> None:
        await self.go.wait()


class RecordedCompletions(InMemoryWorkStore):
    """The in-memory store, recording how its items were completed and claimed along."""

    def __init__(self, world: WorkerWorld) -> None:
        super().__init__(world.state, world.clock)
        self.calls: list[str] = []

    async def complete_and_claim_many(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append("complete_and_claim_many")
        return await super().complete_and_claim_many(*args, **kwargs)


class TestTheLanesShareTheirCompletions:
    async def test_lanes_finishing_together_complete_and_claim_in_one_counted_store_call(
        self, world: WorkerWorld
    ) -> None:
        store = RecordedCompletions(world)
        handler = Together()
        metrics = WorkerMetrics()
        executors = executors_for(
            store,
            KindRegistry(SlowKind, [Slow], [handler]),
            world.clock,
            kinds={"slow"},
            worker_id="w",
            settings=ExecutorSettings(lease_duration=timedelta(seconds=45)),
            concurrency=2,
            metrics=metrics,
        )
        for _ in range(4):
            await world.queue.enqueue(Slow())
        runs = [asyncio.create_task(executor.run_next(claim_next=True)) for executor in executors]
        await world.clock.settle()

        handler.go.set()
        await asyncio.gather(*runs)

        assert store.calls == ["complete_and_claim_many"]
        items = world.state.snapshot()
        assert [item.status for item in items] == [WorkStatus.SUCCEEDED] * 2 + [
            WorkStatus.RUNNING
        ] * 2
        assert {(item.worker_id, item.lease_expires_at) for item in items[2:]} == {
            ("w", world.clock.now() + timedelta(seconds=45))
        }
        sample = metrics.registry.get_sample_value
        assert sample("workqueue_worker_succeeded_total", {"kind": "slow"}) == 2
        assert sample("workqueue_worker_claimed_total", {"kind": "slow"}) == 4
        for executor in executors:
            await executor.shutdown()
        assert sample("workqueue_worker_released_total", {"kind": "slow"}) == 2


class TestTheLanesReadTheWatchdogsRenewals:
    """A claim in flight while the loop was blocked is secured as the watchdog renewed it."""

    async def test_every_lane_builds_its_claims_from_the_one_set_of_renewals(
        self, world: WorkerWorld
    ) -> None:
        container = world.container(WorkerSettings(worker_id="test-worker", concurrency=2))
        container.registry.override(
            providers.Object(KindRegistry(SlowKind, [Slow], [SlowHandler()]))
        )
        container.claimed_kinds.override(providers.Object(frozenset({"slow"})))
        executors = await provide(container.executors)
        renewals = await provide(container.renewals)
        renewed_until = world.clock.now() + timedelta(hours=1)
        runs = []
        for executor in executors:
            enqueued = await world.queue.enqueue(Slow())
            renewals.note(Lease(enqueued.id, 1), renewed_until)
            runs.append(asyncio.create_task(executor.run_next()))
            await world.clock.settle()

        secured = [executor.running[1].secured_until for executor in executors if executor.running]
        assert secured == [renewed_until, renewed_until]
        for run in runs:
            run.cancel()
        await asyncio.gather(*runs, return_exceptions=True)


class TestTracing:
    def test_the_worker_traces_with_opentelemetry_when_it_is_installed(self) -> None:
        assert isinstance(build_container(WorkerSettings()).tracing(), OpenTelemetryTracing)

    @pytest.mark.parametrize("concurrency", [1, 2])
    async def test_every_lane_runs_its_items_in_spans_of_the_workers_tracing(
        self, world: WorkerWorld, spans: RecordedSpans, concurrency: int
    ) -> None:
        container = world.container(WorkerSettings(worker_id="w-3", concurrency=concurrency))
        container.tracing.override(providers.Object(spans.tracing))
        executors = await provide(container.executors)
        for executor in executors:
            await world.queue.enqueue(TokenCleanup())
            await executor.run_next()

        runs = spans.named("process token_cleanup")
        assert [(run.attributes or {})["workqueue.worker.id"] for run in runs] == [
            "w-3"
        ] * concurrency
