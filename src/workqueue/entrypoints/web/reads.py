"""What the pages and the API read, and the query parameters that shape it.

Both the HTML pages and ``/api/`` go through these functions, so a page and its
JSON twin always show the same items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import JsonValue
from starlette.requests import Request

from workqueue.domain import (
    LARGEST_ITEM_ID,
    ActivityLog,
    Clock,
    WorkItem,
    WorkMonitor,
    WorkQueueError,
    WorkSchedule,
    unstorable_character,
)
from workqueue.entrypoints.schedule_report import schedule_document
from workqueue.entrypoints.web.overview import OverviewReader
from workqueue.entrypoints.worker.schema import Schema

if TYPE_CHECKING:
    # Only a type here: the actions read LARGEST_ID from this module.
    from workqueue.entrypoints.web.actions import WebActions

__all__ = [
    "FAILURES_SHOWN",
    "LARGEST_ID",
    "MAX_LIMIT",
    "QUEUED_PAGE",
    "BadQueryError",
    "QueuedPage",
    "WebServices",
    "int_param",
    "kind_param",
    "read_item",
    "read_queued_page",
    "read_schedules",
    "services",
]

QUEUED_PAGE = 50
"""Queued items per page, unless ``limit`` says otherwise."""

FAILURES_SHOWN = 20
"""Unsuccessful items listed, unless ``limit`` says otherwise."""

MAX_LIMIT = 500
"""The largest ``limit`` a request may ask for."""

LARGEST_ID = LARGEST_ITEM_ID
"""The largest id a row can have (``bigint``); larger ones name no item."""


@dataclass(frozen=True, slots=True)
class WebServices:
    """Everything the routes read, built by the composition root."""

    monitor: WorkMonitor
    overview: OverviewReader
    schema: Schema
    clock: Clock
    actions: WebActions | None = None
    """Cancel and requeue, when ``WORKQUEUE_WEB_TOKEN`` is set; None: read-only."""
    schedules: Sequence[WorkSchedule] = ()
    """The periodic kinds' schedules, as the worker of the same settings runs them."""
    activity: ActivityLog | None = None
    """The fleet's activity by minute, which the charts draw; None: no charts."""


async def read_schedules(found: WebServices, now: datetime) -> list[dict[str, JsonValue]]:
    """Each schedule's document (:mod:`workqueue.entrypoints.schedule_report`)."""
    turns = await found.monitor.schedule_turns([schedule.kind for schedule in found.schedules])
    return [schedule_document(schedule, turns[schedule.kind], now) for schedule in found.schedules]


def services(request: Request) -> WebServices:
    """The services of the application serving ``request``."""
    found: WebServices = request.app.state.services
    return found


class BadQueryError(WorkQueueError, ValueError):
    """A query parameter cannot be used; the message names it and says what it takes."""


def int_param(request: Request, name: str, *, default: int, lowest: int, highest: int) -> int:
    """The integer query parameter ``name``, ``default`` when absent or empty.

    :raises BadQueryError: if it is not an integer from ``lowest`` to ``highest``.
    """
    text = request.query_params.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise BadQueryError(f"{name} must be an integer") from None
    if not lowest <= value <= highest:
        raise BadQueryError(f"{name} must be from {lowest} to {highest}")
    return value


def kind_param(request: Request) -> str | None:
    """The ``kind`` filter, None when absent or blank.

    :raises BadQueryError: if it holds what no kind can (a NUL character, which the
        database would refuse to compare with).
    """
    kind = request.query_params.get("kind", "").strip()
    character = unstorable_character(kind)
    if character is not None:
        raise BadQueryError(f"kind must not contain {character}")
    return kind or None


@dataclass(frozen=True, slots=True)
class QueuedPage:
    """One page of queued items; ``next_after`` is where the next page starts, if any."""

    kind: str | None
    after: int
    items: list[WorkItem]
    next_after: int | None


async def read_queued_page(
    monitor: WorkMonitor, *, kind: str | None, after: int, limit: int
) -> QueuedPage:
    """Up to ``limit`` queued items after id ``after``, and whether more follow.

    :raises StoreUnavailableError: if the monitor cannot be reached.
    """
    # One more than shown says whether there is a next page without counting.
    items = await monitor.queued(kind=kind, after_id=after, limit=limit + 1)
    shown = items[:limit]
    next_after = shown[-1].id if len(items) > limit else None
    return QueuedPage(kind=kind, after=after, items=shown, next_after=next_after)


async def read_item(monitor: WorkMonitor, item_id: int) -> WorkItem | None:
    """The item with this id, or None (also for an id no row can have).

    :raises StoreUnavailableError: if the monitor cannot be reached.
    """
    if item_id > LARGEST_ID:
        return None
    return await monitor.item(item_id)
