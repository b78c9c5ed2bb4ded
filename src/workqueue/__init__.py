"""workqueue: a durable work queue on PostgreSQL.

The public face of the package: what a producer and an application need, under
one name (``from workqueue import WorkPayload, PostgresWorkQueue``). The layers
stay where they are (``workqueue.domain``, ``workqueue.application``,
``workqueue.adapters``, ``workqueue.entrypoints``; ADR 0025) and each name here
is the object defined there.

Each name is imported on first use: ``import workqueue`` costs nothing, a
producer's ``from workqueue import PostgresWorkQueue`` loads neither the command
line's settings nor its container, and a name whose extra is not installed
(``PsycopgWorkQueue`` without ``psycopg``) raises
:class:`~workqueue.entrypoints.extras.MissingExtraError` naming the extra, while
every other name works.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from workqueue._version import __version__

if TYPE_CHECKING:
    from workqueue.adapters.clock import SystemClock
    from workqueue.adapters.postgres import (
        MigrationError,
        PostgresWorkQueue,
        SchemaNotCurrentError,
        close_pool,
        create_pool,
    )
    from workqueue.adapters.psycopg import PsycopgWorkQueue
    from workqueue.domain import (
        Backoff,
        Clock,
        EnqueueFailedError,
        EnqueueRequest,
        EnqueueResult,
        InsideTransactionError,
        InvalidCancelReasonError,
        InvalidDedupKeyError,
        InvalidPayloadError,
        InvalidPolicyError,
        InvalidPriorityError,
        InvalidRunAtError,
        InvalidScheduleError,
        KindPolicy,
        KindRegistryError,
        Overlap,
        PayloadDefinitionError,
        Snooze,
        StoreUnavailableError,
        UnknownKindError,
        WorkContext,
        WorkHandler,
        WorkPayload,
        WorkQueue,
        WorkQueueError,
        WorkSchedule,
    )
    from workqueue.entrypoints.extras import MissingExtraError
    from workqueue.entrypoints.worker.app import WorkerResources, WorkQueueApp

# Where each public name is defined. The module is imported when the name is first read.
_HOME = {
    # what a producer needs
    "WorkPayload": "workqueue.domain",
    "WorkQueue": "workqueue.domain",
    "EnqueueRequest": "workqueue.domain",
    "EnqueueResult": "workqueue.domain",
    "Clock": "workqueue.domain",
    "SystemClock": "workqueue.adapters.clock",
    "PostgresWorkQueue": "workqueue.adapters.postgres",
    "create_pool": "workqueue.adapters.postgres",
    "close_pool": "workqueue.adapters.postgres",
    "PsycopgWorkQueue": "workqueue.adapters.psycopg",
    # what an application that declares kinds needs
    "WorkHandler": "workqueue.domain",
    "WorkContext": "workqueue.domain",
    "WorkSchedule": "workqueue.domain",
    "Overlap": "workqueue.domain",
    "KindPolicy": "workqueue.domain",
    "Snooze": "workqueue.domain",
    "Backoff": "workqueue.domain",
    "WorkQueueApp": "workqueue.entrypoints.worker.app",
    "WorkerResources": "workqueue.entrypoints.worker.app",
    # the errors a producer or an application may catch
    "WorkQueueError": "workqueue.domain",
    "EnqueueFailedError": "workqueue.domain",
    "InsideTransactionError": "workqueue.domain",
    "InvalidCancelReasonError": "workqueue.domain",
    "InvalidDedupKeyError": "workqueue.domain",
    "InvalidPolicyError": "workqueue.domain",
    "InvalidPriorityError": "workqueue.domain",
    "InvalidRunAtError": "workqueue.domain",
    "InvalidScheduleError": "workqueue.domain",
    "InvalidPayloadError": "workqueue.domain",
    "KindRegistryError": "workqueue.domain",
    "PayloadDefinitionError": "workqueue.domain",
    "StoreUnavailableError": "workqueue.domain",
    "UnknownKindError": "workqueue.domain",
    "MigrationError": "workqueue.adapters.postgres",
    "SchemaNotCurrentError": "workqueue.adapters.postgres",
    "MissingExtraError": "workqueue.entrypoints.extras",
}

__all__ = [
    "Backoff",
    "Clock",
    "EnqueueFailedError",
    "EnqueueRequest",
    "EnqueueResult",
    "InsideTransactionError",
    "InvalidCancelReasonError",
    "InvalidDedupKeyError",
    "InvalidPayloadError",
    "InvalidPolicyError",
    "InvalidPriorityError",
    "InvalidRunAtError",
    "InvalidScheduleError",
    "KindPolicy",
    "KindRegistryError",
    "MigrationError",
    "MissingExtraError",
    "Overlap",
    "PayloadDefinitionError",
    "PostgresWorkQueue",
    "PsycopgWorkQueue",
    "SchemaNotCurrentError",
    "Snooze",
    "StoreUnavailableError",
    "SystemClock",
    "UnknownKindError",
    "WorkContext",
    "WorkHandler",
    "WorkPayload",
    "WorkQueue",
    "WorkQueueApp",
    "WorkQueueError",
    "WorkSchedule",
    "WorkerResources",
    "__version__",
    "close_pool",
    "create_pool",
]


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'workqueue' has no attribute {name!r}")
    try:
        module = importlib.import_module(home)
    except ModuleNotFoundError as error:
        from workqueue.entrypoints.extras import missing_extra

        missing = missing_extra(error, f"workqueue.{name}")
        if missing is None:
            raise
        raise missing from error
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
