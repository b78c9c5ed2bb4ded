"""An in-memory world to run the CLI and the worker in: shared state, a FakeClock,
and a container whose ports are all overridden with in-memory adapters.

Only the providers are overridden; every service (registry, executor, scheduler,
recovery, worker) is still built by the production container, so these tests
exercise its wiring.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from dependency_injector import providers

from workqueue.adapters.memory import (
    InMemoryActivityLog,
    InMemoryRefreshTokenStore,
    InMemoryState,
    InMemoryWorkMonitor,
    InMemoryWorkNotifications,
    InMemoryWorkQueue,
    InMemoryWorkStore,
)
from workqueue.adapters.postgres import SchemaNotCurrentError
from workqueue.adapters.testing import FakeClock
from workqueue.domain import WorkKind, kind_name
from workqueue.entrypoints.cli import ContainerFactory, main
from workqueue.entrypoints.worker.container import WorkerContainer, build_container
from workqueue.entrypoints.worker.database import DatabaseTarget
from workqueue.entrypoints.worker.settings import WorkerSettings

# Derived, never listed: adding a kind as the README says needs no test edited.
PRODUCTION_KINDS = sorted(kind_name(kind) for kind in WorkKind)


def periodic_kinds() -> list[str]:
    """The built-in kinds with a schedule, as the production container declares them."""
    container = build_container(WorkerSettings(worker_id="periodic-kinds"))
    return sorted(schedule.kind for schedule in container.built_in_schedules())


# A URL with a password, so every test that shows the database also shows it is hidden.
SECRET = "s3cret-pw"
DATABASE_URL = f"postgresql://wq:{SECRET}@db.example:5432/queue"


class FakeSchema:
    """The Schema port: migrations as a list of names still to apply."""

    def __init__(self, missing: Sequence[str] = ()) -> None:
        self.missing = list(missing)

    async def apply_pending(self) -> list[str]:
        applied, self.missing = self.missing, []
        return applied

    async def check_current(self) -> None:
        if self.missing:
            raise SchemaNotCurrentError(self.missing, [])


@dataclass
class CliRun:
    status: int
    out: str
    err: str


@dataclass
class WorkerWorld:
    state: InMemoryState = field(default_factory=InMemoryState)
    clock: FakeClock = field(default_factory=FakeClock)
    schema: FakeSchema = field(default_factory=FakeSchema)
    database: DatabaseTarget = field(default_factory=lambda: DatabaseTarget(dsn=DATABASE_URL))

    def container(self, settings: WorkerSettings | None = None) -> WorkerContainer:
        container = build_container(settings or WorkerSettings(worker_id="test-worker"))
        container.clock.override(providers.Object(self.clock))
        container.database.override(providers.Object(self.database))
        container.schema.override(providers.Object(self.schema))
        container.work_queue.override(providers.Object(self.queue))
        container.work_store.override(providers.Object(self.store))
        container.work_monitor.override(providers.Object(InMemoryWorkMonitor(self.state)))
        container.activity_log.override(
            providers.Object(InMemoryActivityLog(self.state, self.clock))
        )
        container.refresh_tokens.override(providers.Object(InMemoryRefreshTokenStore(self.state)))
        container.notifications.override(providers.Object(InMemoryWorkNotifications(self.state)))
        return container

    @property
    def queue(self) -> InMemoryWorkQueue:
        return InMemoryWorkQueue(self.state, self.clock)

    @property
    def store(self) -> InMemoryWorkStore:
        return InMemoryWorkStore(self.state, self.clock)

    def cli(self, *argv: str, container_factory: ContainerFactory | None = None) -> CliRun:
        """Run ``workqueue ARGV`` in this process on this world (or the given container)."""
        out, err = io.StringIO(), io.StringIO()
        factory = self.container if container_factory is None else container_factory
        status = main(list(argv), container_factory=factory, out=out, err=err)
        return CliRun(status, out.getvalue(), err.getvalue())
