"""The queue's services over the domain ports: registry, executor, scheduler, recovery, worker.

Nothing here does I/O except through the ports it is given, and nothing imports an
adapter: the composition root wires the store, the queue and the clock in.

Every default of the services is defined once, here: :data:`DEFAULT_EXECUTOR_SETTINGS`
(heartbeat, lease, error and progress bounds), :data:`DEFAULT_POLL_INTERVAL`,
:data:`DEFAULT_MAX_STALLS`, :data:`DEFAULT_CONCURRENCY`; the worker's settings take
theirs from these.
"""

from __future__ import annotations

from workqueue.application.bulk import cancel_queued, requeue_failed
from workqueue.application.context import DEFAULT_MAX_PROGRESS_BYTES, ExecutionContext
from workqueue.application.execution import (
    DEFAULT_EXECUTOR_SETTINGS,
    TRUNCATION_MARKER,
    ExecutionOutcome,
    ExecutionStatus,
    ExecutorSettings,
    bound_error,
    error_text,
)
from workqueue.application.executor import WorkExecutor
from workqueue.application.lanes import DEFAULT_CONCURRENCY, ExecutorLanes
from workqueue.application.recovery import DEFAULT_MAX_STALLS, LeaseRecovery
from workqueue.application.registry import (
    Dispatch,
    KindCatalog,
    KindRegistry,
    Kinds,
    describe_validation_error,
)
from workqueue.application.requeue import REQUEUABLE_STATUSES, requeue
from workqueue.application.scheduler import ScheduleOutcome, ScheduleStatus, WorkScheduler
from workqueue.application.worker import DEFAULT_POLL_INTERVAL, Worker

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_EXECUTOR_SETTINGS",
    "DEFAULT_MAX_PROGRESS_BYTES",
    "DEFAULT_MAX_STALLS",
    "DEFAULT_POLL_INTERVAL",
    "REQUEUABLE_STATUSES",
    "TRUNCATION_MARKER",
    "Dispatch",
    "ExecutionContext",
    "ExecutionOutcome",
    "ExecutionStatus",
    "ExecutorLanes",
    "ExecutorSettings",
    "KindCatalog",
    "KindRegistry",
    "Kinds",
    "LeaseRecovery",
    "ScheduleOutcome",
    "ScheduleStatus",
    "WorkExecutor",
    "WorkScheduler",
    "Worker",
    "bound_error",
    "cancel_queued",
    "describe_validation_error",
    "error_text",
    "requeue",
    "requeue_failed",
]
