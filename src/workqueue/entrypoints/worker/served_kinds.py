"""Which kinds a worker serves: the built-in maintenance kinds, joined by an application's.

The container asks these functions for each list the registry is built from, so
the built-in kinds an application leaves out (``token_cleanup`` for one without
refresh tokens) go with their payload, their handler and their schedule.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

from workqueue.domain import WorkHandler, WorkKind, WorkPayload, WorkSchedule
from workqueue.entrypoints.worker.app import WorkerResources, WorkQueueApp

__all__ = [
    "built_in_kinds",
    "served_handlers",
    "served_kinds",
    "served_payloads",
    "served_schedules",
]


def built_in_kinds(app: WorkQueueApp) -> list[WorkKind]:
    """The built-in kinds served beside ``app``'s: every one, unless ``app`` leaves it out."""
    return [kind for kind in WorkKind if app.token_cleanup or kind is not WorkKind.TOKEN_CLEANUP]


def served_kinds(app: WorkQueueApp) -> list[type[Enum] | Enum]:
    """The kinds the registry serves: the built-in ones kept, then ``app``'s."""
    return [*built_in_kinds(app), *app.kinds]


def served_payloads(
    app: WorkQueueApp, built_in: Sequence[type[WorkPayload]]
) -> list[type[WorkPayload]]:
    """The built-in payload models of the kinds kept, then ``app``'s."""
    kept = built_in_kinds(app)
    return [*(payload for payload in built_in if payload.kind in kept), *app.payloads]


def served_handlers(
    app: WorkQueueApp, built_in: Sequence[WorkHandler[Any]], resources: WorkerResources | None
) -> list[WorkHandler[Any]]:
    """The built-in handlers of the kinds kept, then ``app``'s, built from ``resources``.

    ``resources`` is None only when ``app`` has no handlers (nothing to build them for).
    """
    kept = built_in_kinds(app)
    handlers = [handler for handler in built_in if handler.payload_type.kind in kept]
    if resources is not None:
        handlers.extend(app.build_handlers(resources))
    return handlers


def served_schedules(app: WorkQueueApp, built_in: Sequence[WorkSchedule]) -> list[WorkSchedule]:
    """The built-in schedules of the kinds kept, then ``app``'s."""
    kept = {kind.value for kind in built_in_kinds(app)}
    return [*(schedule for schedule in built_in if schedule.kind in kept), *app.schedules]
