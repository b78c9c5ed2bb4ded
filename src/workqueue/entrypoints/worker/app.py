"""An application's own kinds: what ``--app MODULE[:ATTRIBUTE]`` (or ``WORKQUEUE_APP``) names.

An application declares its kinds in its own package, in one
:class:`WorkQueueApp`; the stock ``workqueue worker`` then serves them beside
the built-in maintenance kinds, and ``enqueue`` and ``status`` know them::

    app = WorkQueueApp(
        kinds=[ReportKind],
        payloads=[BuildReport],
        handlers=[BuildReportHandler],
        schedules=[WorkSchedule(BuildReport(), interval=timedelta(hours=1))],
    )

A handler is given as a factory the worker calls once, at start-up, with the
:class:`WorkerResources` (its pool, work queue, clock and settings): a handler
class whose constructor takes them, or any callable that builds one from them. So a
handler reaches what the worker has without importing the container (ADR 0016).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from workqueue.domain import (
    Clock,
    WorkHandler,
    WorkPayload,
    WorkQueue,
    WorkQueueError,
    WorkSchedule,
)
from workqueue.entrypoints.worker.settings import WorkerSettings

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "DEFAULT_APP_ATTRIBUTE",
    "NO_APP",
    "AppLoadError",
    "HandlerFactory",
    "WorkQueueApp",
    "WorkerResources",
    "load_app",
]

DEFAULT_APP_ATTRIBUTE = "app"
"""The attribute ``--app MODULE`` reads when no ``:ATTRIBUTE`` is given."""


class AppLoadError(WorkQueueError, ValueError):
    """``--app`` (``WORKQUEUE_APP``) names no application: not importable, or no kinds in it."""


@dataclass(frozen=True, slots=True)
class WorkerResources:
    """What the worker has, handed to each application handler factory at start-up.

    :param pool: the worker's asyncpg pool (the application's own tables live there too).
    :param queue: the worker's :class:`~workqueue.domain.WorkQueue`, to enqueue follow-up work.
    :param clock: the worker's clock; handlers sleep and stamp time through it.
    :param settings: the worker's settings, as read from ``WORKQUEUE_*``.
    """

    pool: asyncpg.Pool
    queue: WorkQueue
    clock: Clock
    settings: WorkerSettings


HandlerFactory = Callable[[WorkerResources], WorkHandler[Any]]
"""Builds one handler from the worker's resources: a handler class, or any callable."""


@dataclass(frozen=True, slots=True)
class WorkQueueApp:
    """An application's kinds: the enums, a payload model and a handler per kind, schedules.

    :param kinds: the application's kind enums (or single members of them).
    :param payloads: one :class:`~workqueue.domain.WorkPayload` subclass per kind.
    :param handlers: one :data:`HandlerFactory` per kind, called once at the worker's
        start-up with its :class:`WorkerResources`.
    :param schedules: the application's periodic kinds.
    :param token_cleanup: False for an application without refresh tokens: its
        workers then neither serve nor schedule the built-in ``token_cleanup`` kind.
    """

    kinds: Sequence[type[Enum] | Enum]
    payloads: Sequence[type[WorkPayload]]
    handlers: Sequence[HandlerFactory]
    schedules: Sequence[WorkSchedule] = field(default_factory=tuple)
    token_cleanup: bool = True

    def build_handlers(self, resources: WorkerResources) -> list[WorkHandler[Any]]:
        """Call every handler factory with ``resources``: the application's handlers."""
        return [factory(resources) for factory in self.handlers]


NO_APP = WorkQueueApp(kinds=(), payloads=(), handlers=())
"""No application: a worker serves the built-in kinds only."""


def load_app(reference: str | None) -> WorkQueueApp:
    """The :class:`WorkQueueApp` that ``MODULE[:ATTRIBUTE]`` names; :data:`NO_APP` for None.

    ``ATTRIBUTE`` defaults to ``app``. The current directory is searched first, as
    ``python -m`` would, so ``--app myproject.work`` finds the checkout it runs in.

    :raises AppLoadError: if the module cannot be imported, has no such attribute,
        or the attribute is not a :class:`WorkQueueApp` with at least one kind.
    """
    if reference is None:
        return NO_APP
    module_name, _, attribute = reference.partition(":")
    attribute = attribute or DEFAULT_APP_ATTRIBUTE
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        reason = " ".join(f"{type(error).__name__}: {error}".split())
        raise AppLoadError(f"cannot import the application {module_name!r}: {reason}") from error
    app = getattr(module, attribute, None)
    if not isinstance(app, WorkQueueApp):
        found = "nothing" if app is None else f"a {type(app).__name__}"
        raise AppLoadError(
            f"the application {module_name}:{attribute} must be a WorkQueueApp, "
            f"but {module_name}.{attribute} is {found}"
        )
    if not app.kinds:
        raise AppLoadError(f"the application {module_name}:{attribute} declares no kinds")
    return app
