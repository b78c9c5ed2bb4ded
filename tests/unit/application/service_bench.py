"""The bench the application-service tests run on: in-memory store, FakeClock, scripted handlers.

The services are generic over the kind enum, so these tests declare their own
kinds (``Job``) and payloads. Each test scripts what a labelled item does when it
is handled (``bench.script.on("a", behaviour)``) and reads the outcome back through
the store, as a caller would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field, replace
from datetime import timedelta
from enum import StrEnum
from typing import Any

import pytest
from pydantic import JsonValue

from workqueue.adapters.memory import (
    InMemoryState,
    InMemoryWorkNotifications,
    InMemoryWorkQueue,
    InMemoryWorkStore,
)
from workqueue.adapters.testing import FakeClock
from workqueue.application import (
    ExecutionOutcome,
    ExecutionStatus,
    ExecutorSettings,
    KindRegistry,
    LeaseRecovery,
    Worker,
    WorkExecutor,
    WorkScheduler,
)
from workqueue.domain import (
    NO_TRACING,
    KindPolicy,
    Lease,
    RunOutcome,
    StoreUnavailableError,
    Tracing,
    WorkContext,
    WorkHandler,
    WorkItem,
    WorkNotifications,
    WorkPayload,
    WorkSchedule,
    WorkStore,
)

LEASE = timedelta(seconds=60)


class Job(StrEnum):
    ALPHA = "alpha"
    BETA = "beta"


class AlphaJob(WorkPayload):
    kind = Job.ALPHA

    label: str
    count: int = 0


class BetaJob(WorkPayload):
    kind = Job.BETA

    label: str


Behaviour = Callable[[WorkContext], Awaitable[JsonValue]]


class Script:
    """What each labelled item does when handled, and a record of what happened to it."""

    def __init__(self) -> None:
        self.behaviours: dict[str, Behaviour] = {}
        self.contexts: dict[str, WorkContext] = {}
        self.started: list[str] = []
        self.returned: list[str] = []
        self.cancelled: list[str] = []
        self.running = 0
        self.most_running = 0

    def on(self, label: str, behaviour: Behaviour) -> None:
        self.behaviours[label] = behaviour

    def block(self, label: str) -> asyncio.Event:
        """Make ``label`` wait until the returned event is set."""
        release = asyncio.Event()

        async def wait(ctx: WorkContext) -> None:
            await release.wait()

        self.on(label, wait)
        return release

    def fail_with(self, label: str, error: BaseException) -> None:
        async def fail(ctx: WorkContext) -> None:
            raise error

        self.on(label, fail)

    async def run(self, label: str, ctx: WorkContext) -> JsonValue:
        self.started.append(label)
        self.contexts[label] = ctx
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        result: JsonValue = None
        try:
            behaviour = self.behaviours.get(label)
            if behaviour is not None:
                result = await behaviour(ctx)
        except asyncio.CancelledError:
            self.cancelled.append(label)
            raise
        finally:
            self.running -= 1
        self.returned.append(label)
        return result


class AlphaHandler(WorkHandler[AlphaJob]):
    def __init__(self, script: Script) -> None:
        self.script = script

    async def handle(self, payload: AlphaJob, ctx: WorkContext) -> JsonValue:
        return await self.script.run(payload.label, ctx)


class BetaHandler(WorkHandler[BetaJob]):
    def __init__(self, script: Script) -> None:
        self.script = script

    async def handle(self, payload: BetaJob, ctx: WorkContext) -> JsonValue:
        return await self.script.run(payload.label, ctx)


def call_name(name: str, args: tuple[Any, ...]) -> str:
    """How a spy logs a store call: its method, and for a finish its ending too."""
    if name == "finish":
        outcome: RunOutcome = args[1]
        return f"finish {outcome.ending}"
    return name


class StoreSpy:
    """A WorkStore that forwards to another and logs calls (:func:`call_name`).

    Tests may override a method, or one call name (``overrides["finish released"]``).
    """

    def __init__(self, inner: WorkStore) -> None:
        self.inner = inner
        self.calls: list[str] = []
        self.overrides: dict[str, Callable[..., Awaitable[Any]]] = {}

    def count(self, name: str) -> int:
        return self.calls.count(name)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        async def forward(*args: Any, **kwargs: Any) -> Any:
            call = call_name(name, args)
            self.calls.append(call)
            return await self.overrides.get(call, method)(*args, **kwargs)

        return forward


@dataclass
class Bench:
    """One in-memory world: state, clock, store, queue, notifications and scripted handlers."""

    clock: FakeClock = field(default_factory=FakeClock)
    state: InMemoryState = field(default_factory=InMemoryState)
    script: Script = field(default_factory=Script)

    def __post_init__(self) -> None:
        self.store = InMemoryWorkStore(self.state, self.clock)
        self.queue = InMemoryWorkQueue(self.state, self.clock)
        self.notifications = InMemoryWorkNotifications(self.state)
        self.registry = KindRegistry(
            Job, [AlphaJob, BetaJob], [AlphaHandler(self.script), BetaHandler(self.script)]
        )

    def with_policy(self, policy: KindPolicy) -> None:
        """Give the alpha kind ``policy`` (its handler declares it, as an application's does)."""
        handler = type("AlphaHandlerWithPolicy", (AlphaHandler,), {"policy": policy})
        self.registry = KindRegistry(
            Job, [AlphaJob, BetaJob], [handler(self.script), BetaHandler(self.script)]
        )

    def executor(
        self,
        *,
        store: Any = None,
        worker_id: str = "worker-1",
        settings: ExecutorSettings | None = None,
        draw: float = 0.0,
        kinds: Collection[str] | None = None,
        tracing: Tracing = NO_TRACING,
    ) -> WorkExecutor:
        """An executor on the bench; ``draw`` is the random number of every retry's jitter,
        ``kinds`` the kinds it claims (not given, the registry's), ``tracing`` what records
        the span of each attempt."""
        return WorkExecutor(
            self.store if store is None else store,
            self.registry,
            self.clock,
            worker_id=worker_id,
            settings=ExecutorSettings() if settings is None else settings,
            draw=lambda: draw,
            kinds=kinds,
            tracing=tracing,
        )

    def worker(
        self,
        *,
        executor: WorkExecutor | None = None,
        schedules: Collection[WorkSchedule] = (),
        notifications: WorkNotifications | None = None,
        poll_interval: float = 5.0,
    ) -> Worker:
        """A worker over ``executor`` (a new one by default); ``poll_interval`` in seconds."""
        return Worker(
            executor=self.executor() if executor is None else executor,
            scheduler=WorkScheduler(self.queue, list(schedules)),
            recovery=LeaseRecovery(self.store),
            clock=self.clock,
            poll_interval=timedelta(seconds=poll_interval),
            notifications=notifications,
        )

    @staticmethod
    def payload(label: str, *, beta: bool = False) -> WorkPayload:
        return BetaJob(label=label) if beta else AlphaJob(label=label)

    async def enqueue(
        self,
        label: str,
        *,
        beta: bool = False,
        dedup_key: str | None = None,
        priority: int = 0,
        delay: float | None = None,
    ) -> int:
        """Enqueue ``label``'s item; ``delay`` in seconds makes it wait that long."""
        result = await self.queue.enqueue(
            self.payload(label, beta=beta),
            dedup_key=dedup_key,
            priority=priority,
            delay=None if delay is None else timedelta(seconds=delay),
        )
        return result.id

    async def item(self, item_id: int) -> WorkItem:
        item = await self.store.get(item_id)
        assert item is not None, f"item {item_id} is gone"
        return item

    def corrupt_payload(self, item_id: int, payload: dict[str, Any]) -> None:
        """Back door: give a stored item a payload its model no longer accepts."""
        self.state.write(replace(self.state.items[item_id], payload=payload))

    def take_over(self, item_id: int, *, worker_id: str = "worker-2") -> Lease:
        """Back door: the item was recovered and claimed again by another worker."""
        item = self.state.items[item_id]
        taken = replace(item, attempt=item.attempt + 1, worker_id=worker_id)
        self.state.write(taken)
        return taken.lease

    async def claim_as_dead_worker(self, *, worker_id: str = "dead-worker") -> WorkItem:
        """Claim the next item as a worker that will never heartbeat nor finish it."""
        item = await self.store.claim(
            self.registry.kinds, worker_id=worker_id, lease_duration=LEASE
        )
        assert item is not None
        return item


def status_of(outcome: ExecutionOutcome | None) -> ExecutionStatus | None:
    """The outcome's status, or None when there was no item to run."""
    return None if outcome is None else outcome.status


def seconds(value: float) -> timedelta:
    return timedelta(seconds=value)


def start(
    bench: Bench, executor: WorkExecutor | None = None
) -> asyncio.Task[ExecutionOutcome | None]:
    """One ``run_next`` of ``executor`` (a new one of the bench's by default), as a task."""
    return asyncio.create_task((executor or bench.executor()).run_next())


def finished(run: asyncio.Task[ExecutionOutcome | None]) -> ExecutionOutcome | None:
    """The outcome of a run that must have ended by now (a hang fails, it does not wait)."""
    assert run.done(), "run_next is still running"
    return run.result()


EXECUTOR_LOG = "workqueue.executor"


def executor_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    """Level and message of every line the executor logged."""
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == EXECUTOR_LOG]


def item_fields(caplog: pytest.LogCaptureFixture) -> list[tuple[object, object, object]]:
    """The item fields of every executor line (None where a line lacks one)."""
    return [
        (getattr(r, "item_id", None), getattr(r, "kind", None), getattr(r, "attempt", None))
        for r in caplog.records
        if r.name == EXECUTOR_LOG
    ]


def fenced(spy: StoreSpy, name: str) -> None:
    """Make the write ``name`` (``"finish failed"``) on ``spy`` always find the lease not held."""

    async def refuse(*args: Any, **kwargs: Any) -> bool:
        return False

    spy.overrides[name] = refuse


def unavailable(name: str, spy: StoreSpy) -> list[str]:
    """Make ``name`` on ``spy`` always find the store unreachable; returns the call log."""
    calls: list[str] = []

    async def refuse(*args: Any, **kwargs: Any) -> bool:
        calls.append(name)
        raise StoreUnavailableError("connection refused")

    spy.overrides[name] = refuse
    return calls
