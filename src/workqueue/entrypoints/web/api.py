"""``/api/``: the page's data as JSON, for scripts. Read-only; documented in the README.

- ``GET /api/overview``: counts per kind and status, totals, the oldest queued items,
  the paused kinds.
- ``GET /api/running``: every running item.
- ``GET /api/queued?kind=&after=&limit=``: queued items oldest first, keyset-paged.
- ``GET /api/failures?limit=``: the latest unsuccessful items, with their errors.
- ``GET /api/items/{id}``: one item's whole row.
- ``GET /api/items?dedup_key=&limit=``: the items of any kind and status whose dedup
  key is exactly ``dedup_key``, newest first (``limit`` 1-500, default 50); none is
  ``"items": []``, not a 404.
- ``GET /api/schedules``: every periodic kind's schedule, its last run and its next.
- ``GET /api/pauses``: every paused kind, since when and why.
- ``GET /api/activity?kind=&window=hour|day``: the charts' buckets: items ended and
  the queue's depth, per minute over the hour or per 15 minutes over the day.

A bad parameter answers 400 and an unknown item 404, each ``{"error": "..."}``.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import JsonValue
from starlette.requests import Request
from starlette.responses import JSONResponse

from workqueue.domain import WorkItem
from workqueue.entrypoints.timestamps import iso_timestamp
from workqueue.entrypoints.web.activity import activity_document, read_activity
from workqueue.entrypoints.web.charts import chart_window
from workqueue.entrypoints.web.documents import item_document, overview_document, pause_document
from workqueue.entrypoints.web.lookup import FOUND_SHOWN, dedup_key_param
from workqueue.entrypoints.web.reads import (
    FAILURES_SHOWN,
    LARGEST_ID,
    MAX_LIMIT,
    QUEUED_PAGE,
    int_param,
    kind_param,
    read_item,
    read_queued_page,
    read_schedules,
    services,
)

__all__ = [
    "api_activity",
    "api_failures",
    "api_item",
    "api_items_by_dedup_key",
    "api_overview",
    "api_pauses",
    "api_queued",
    "api_running",
    "api_schedules",
]


async def api_overview(request: Request) -> JSONResponse:
    """Counts, totals, the oldest queued item of each kind, and the paused kinds."""
    overview = await services(request).overview.read()
    return JSONResponse({"read_only": True, **overview_document(overview)})


def _items_document(items: list[WorkItem], now: datetime) -> dict[str, JsonValue]:
    return {"now": iso_timestamp(now), "items": [item_document(item, now) for item in items]}


def _items_response(items: list[WorkItem], now: datetime) -> JSONResponse:
    return JSONResponse(_items_document(items, now))


async def api_running(request: Request) -> JSONResponse:
    """Every running item, however long the backlog."""
    found = services(request)
    items = await found.monitor.running()
    return _items_response(items, found.clock.now())


async def api_queued(request: Request) -> JSONResponse:
    """One page of queued items; ``next_after`` is the ``after`` of the next page, or null."""
    found = services(request)
    page = await read_queued_page(
        found.monitor,
        kind=kind_param(request),
        after=int_param(request, "after", default=0, lowest=0, highest=LARGEST_ID),
        limit=int_param(request, "limit", default=QUEUED_PAGE, lowest=1, highest=MAX_LIMIT),
    )
    return JSONResponse(
        {
            **_items_document(page.items, found.clock.now()),
            "kind": page.kind,
            "after": page.after,
            "next_after": page.next_after,
        }
    )


async def api_failures(request: Request) -> JSONResponse:
    """The latest items that ended unsuccessfully, newest first."""
    found = services(request)
    limit = int_param(request, "limit", default=FAILURES_SHOWN, lowest=1, highest=MAX_LIMIT)
    items = await found.monitor.recent_unsuccessful(limit=limit)
    return _items_response(items, found.clock.now())


async def api_item(request: Request) -> JSONResponse:
    """One item, or 404."""
    found = services(request)
    item_id: int = request.path_params["item_id"]
    item = await read_item(found.monitor, item_id)
    if item is None:
        return JSONResponse({"error": f"no item {item_id}"}, status_code=404)
    now = found.clock.now()
    return JSONResponse({"now": iso_timestamp(now), "item": item_document(item, now)})


async def api_items_by_dedup_key(request: Request) -> JSONResponse:
    """The items whose dedup key is ``dedup_key``, newest first (a 400 without one)."""
    found = services(request)
    dedup_key = dedup_key_param(request)
    limit = int_param(request, "limit", default=FOUND_SHOWN, lowest=1, highest=MAX_LIMIT)
    items = await found.monitor.items_by_dedup_key(dedup_key, limit=limit)
    return JSONResponse({**_items_document(items, found.clock.now()), "dedup_key": dedup_key})


async def api_schedules(request: Request) -> JSONResponse:
    """Every periodic kind's schedule (see :mod:`workqueue.entrypoints.schedule_report`)."""
    found = services(request)
    now = found.clock.now()
    return JSONResponse({"now": iso_timestamp(now), "schedules": await read_schedules(found, now)})


async def api_pauses(request: Request) -> JSONResponse:
    """Every paused kind by kind name: since when, and why (null: no reason given)."""
    found = services(request)
    pauses = await found.monitor.paused_kinds()
    return JSONResponse(
        {
            "now": iso_timestamp(found.clock.now()),
            "pauses": [pause_document(pause) for pause in pauses],
        }
    )


async def api_activity(request: Request) -> JSONResponse:
    """The charts' buckets (:mod:`workqueue.entrypoints.web.activity`), or 404 without a log."""
    found = services(request)
    kind = kind_param(request)
    window = chart_window(request.query_params.get("window") or None)
    if found.activity is None:
        return JSONResponse({"error": "this view reads no activity"}, status_code=404)
    now = found.clock.now()
    drawn = await read_activity(found.activity, kind=kind, window=window, now=now)
    return JSONResponse(activity_document(drawn, kind=kind, window=window, now=now))
