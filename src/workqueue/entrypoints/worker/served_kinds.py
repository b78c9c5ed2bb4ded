"""Which kinds a worker serves: the built-in maintenance kinds, joined by an application's.

The container asks these functions for each list the registry is built from, so
the built-in kinds an application leaves out (``token_cleanup`` for one without
refresh tokens) go with their payload, their handler and their schedule.

A worker told ``WORKQUEUE_KINDS`` (``--kinds``) still serves every kind, but claims
and schedules only those (:func:`kinds_to_claim`, :func:`schedules_to_run`):
another worker serves the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

from workqueue.application.registry import KindCatalog
from workqueue.domain import WorkHandler, WorkKind, WorkPayload, WorkSchedule
from workqueue.entrypoints.worker.app import WorkerResources, WorkQueueApp
from workqueue.entrypoints.worker.settings import SettingsError, env_name

__all__ = [
    "built_in_kinds",
    "kinds_to_claim",
    "schedules_to_run",
    "served_handlers",
    "served_kinds",
    "served_payloads",
    "served_schedules",
]

# The setting a worker's claimed kinds come from, as an operator writes it.
_KINDS_SETTING = env_name("kinds")


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


def kinds_to_claim(catalog: KindCatalog[Any], named: frozenset[str]) -> frozenset[str]:
    """The kinds a worker claims: those ``named`` (``WORKQUEUE_KINDS``), else every kind served.

    :raises SettingsError: if a kind named is not served here (no handler would run
        its items); the one line names each such kind and the kinds served.
    """
    unserved = named - catalog.kinds
    if unserved:
        raise SettingsError(
            f"invalid setting {_KINDS_SETTING}: no handler serves "
            f"{', '.join(repr(name) for name in sorted(unserved))} "
            f"(the kinds served: {', '.join(sorted(catalog.kinds))})"
        )
    return named or catalog.kinds


def schedules_to_run(
    schedules: Sequence[WorkSchedule], named: frozenset[str]
) -> list[WorkSchedule]:
    """The schedules a worker runs: those of the kinds ``named`` (``WORKQUEUE_KINDS``), else
    all. Another worker, serving the other kinds, enqueues theirs."""
    return [schedule for schedule in schedules if not named or schedule.kind in named]
