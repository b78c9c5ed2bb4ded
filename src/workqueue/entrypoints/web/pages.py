"""The HTML pages, and the fragments their script fetches to refresh without a reload.

``/`` is the overview: counts, the oldest queued item and the paused kinds,
every running item, a page of queued items (keyset-paged) and the latest
unsuccessful items, the lists filtered by kind and status
(:mod:`workqueue.entrypoints.web.lookup`; ``/find?q=`` opens an item's page by its id,
or by its dedup key, or lists the items with that key);
with the admin token, a Pause or Resume button on each kind's row, and beside its
failed and queued counts a link to the bulk requeue or cancel
(:mod:`workqueue.entrypoints.web.bulk`). ``/items/{id}`` is
one item's whole row, with the Cancel or Requeue form under its heading when the view
has its admin token (:mod:`workqueue.entrypoints.web.actions`). Each page marks a
region with ``data-live-src``: ``/static/live.js`` fetches that URL (the same
templates, rendered as a fragment) every 2 s and swaps the region's content.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from workqueue.domain import WorkItem
from workqueue.entrypoints.web.actions import act, act_on_kind
from workqueue.entrypoints.web.activity import read_activity
from workqueue.entrypoints.web.charts import ChartWindow, chart_window, depth_svg, throughput_svg
from workqueue.entrypoints.web.documents import item_document, overview_document
from workqueue.entrypoints.web.lookup import (
    FOUND_SHOWN,
    LISTED_STATUSES,
    UNSUCCESSFUL_SCANNED,
    looked_up,
    narrowed,
    shown_lists,
    status_param,
)
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
    "REFRESH_SECONDS",
    "cancel_item",
    "find_item",
    "item_fragment",
    "item_page",
    "not_found",
    "overview_fragment",
    "overview_page",
    "pause_kind",
    "render",
    "requeue_item",
    "resume_kind",
    "schedules_page",
]

REFRESH_SECONDS = 2
"""How often a page's live region is fetched again."""


def render(request: Request, template: str, context: dict[str, Any], status: int = 200) -> Response:
    """``template`` rendered with ``context`` (plus the page-wide values)."""
    response: Response = request.app.state.templates.TemplateResponse(
        request,
        template,
        {
            "read_only": services(request).actions is None,
            # What the pages' relative times are said from (readable.when).
            "now": services(request).clock.now(),
            "refresh_seconds": REFRESH_SECONDS,
            "notice": None,
            **context,
        },
        status_code=status,
    )
    return response


async def _overview_context(request: Request) -> dict[str, Any]:
    found = services(request)
    kind = kind_param(request)
    status = status_param(request)
    after = int_param(request, "after", default=0, lowest=0, highest=LARGEST_ID)
    window = chart_window(request.query_params.get("window") or None)
    shown = shown_lists(status)
    overview = await found.overview.read()
    now = found.clock.now()
    filtered = kind is not None or status is not None
    status_text = "" if status is None else status.value
    window_text = window.value.text
    query = urlencode(
        {"kind": kind or "", "status": status_text, "after": after, "window": window_text}
    )
    context: dict[str, Any] = {
        "overview": overview_document(overview),
        "kind": kind,
        "status": status_text,
        "listed_statuses": [listed.value for listed in LISTED_STATUSES],
        "window": window_text,
        "windows": [shape.value.text for shape in ChartWindow],
        "shown": shown,
        "filtered": filtered,
        "scanned": UNSUCCESSFUL_SCANNED,
        "after": after,
        "schedules": await read_schedules(found, now),
        # The kinds a Pause button and a Requeue failed link are shown for: those the
        # actions pause, and whose payload model a requeue has.
        "pausable": found.overview.kinds,
        "live_src": f"/fragments/overview?{query}",
    }
    # Each list is read only when the status filter shows it; the template reads
    # its values only then.
    lists: dict[str, list[WorkItem]] = {}
    if shown.running:
        lists["running"] = narrowed(await found.monitor.running(), kind=kind, status=None)
    if shown.queued:
        page = await read_queued_page(found.monitor, kind=kind, after=after, limit=QUEUED_PAGE)
        lists["queued"] = page.items
        context["next_after"] = page.next_after
    if shown.unsuccessful:
        latest = await found.monitor.recent_unsuccessful(
            limit=UNSUCCESSFUL_SCANNED if filtered else FAILURES_SHOWN
        )
        lists["failures"] = narrowed(latest, kind=kind, status=status, limit=FAILURES_SHOWN)
    for name, items in lists.items():
        context[name] = [item_document(item, now) for item in items]
    if found.activity is not None:
        drawn = await read_activity(found.activity, kind=kind, window=window, now=now)
        context["throughput_chart"] = throughput_svg(drawn, now=now)
        context["depth_chart"] = depth_svg(drawn, now=now)
    return context


async def overview_page(request: Request) -> Response:
    """The overview page."""
    return render(request, "overview.html", await _overview_context(request))


async def overview_fragment(request: Request) -> Response:
    """The overview's live region alone."""
    return render(request, "_overview.html", await _overview_context(request))


async def schedules_page(request: Request) -> Response:
    """``GET /schedules``: every periodic kind, its last run and its next."""
    found = services(request)
    now = found.clock.now()
    return render(request, "schedules.html", {"schedules": await read_schedules(found, now)})


async def find_item(request: Request) -> Response:
    """``GET /find?q=``: an id or a dedup key to the item's page; several items with the
    key listed, newest first; none, a 404 page (a 400 page when ``q`` can be neither)."""
    target = looked_up(request.query_params.get("q"))
    if isinstance(target, int):
        return RedirectResponse(f"/items/{target}", status_code=303)
    found = services(request)
    # One more than shown says whether more items have the key, without counting.
    items = await found.monitor.items_by_dedup_key(target, limit=FOUND_SHOWN + 1)
    if not items:
        return not_found(request, f"No item has the id or dedup key \u201c{target}\u201d.")
    if len(items) == 1:
        return RedirectResponse(f"/items/{items[0].id}", status_code=303)
    now = found.clock.now()
    context = {
        "dedup_key": target,
        "items": [item_document(item, now) for item in items[:FOUND_SHOWN]],
        "more": len(items) > FOUND_SHOWN,
        "api_limit": MAX_LIMIT,
    }
    return render(request, "found.html", context)


async def _item_context(request: Request) -> dict[str, Any] | None:
    found = services(request)
    item_id: int = request.path_params["item_id"]
    item = await read_item(found.monitor, item_id)
    if item is None:
        return None
    return {
        "item": item_document(item, found.clock.now()),
        "live_src": f"/fragments/items/{item.id}",
    }


async def item_page(request: Request) -> Response:
    """One item's page, or a 404 page."""
    context = await _item_context(request)
    if context is None:
        return not_found(request, f"There is no item {request.path_params['item_id']}.")
    return render(request, "item.html", context)


async def _after_action(request: Request, verb: str) -> Response:
    found = services(request)
    notice, status = await act(request, found.actions, verb)
    context = await _item_context(request)
    if context is None:
        return render(request, "problem.html", {"title": "Not found", "message": notice}, status)
    return render(request, "item.html", {**context, "notice": notice}, status)


async def cancel_item(request: Request) -> Response:
    """``POST /items/{id}/cancel``: the item's page, saying what the cancel did."""
    return await _after_action(request, "cancel")


async def requeue_item(request: Request) -> Response:
    """``POST /items/{id}/requeue``: the item's page, saying what the requeue did."""
    return await _after_action(request, "requeue")


async def _after_kind_action(request: Request, verb: str) -> Response:
    found = services(request)
    notice, status = await act_on_kind(request, found.actions, found.overview.kinds, verb)
    if status == 404:
        return render(request, "problem.html", {"title": "Not found", "message": notice}, status)
    context = await _overview_context(request)
    return render(request, "overview.html", {**context, "notice": notice}, status)


async def pause_kind(request: Request) -> Response:
    """``POST /kinds/{kind}/pause``: the overview, saying what the pause did."""
    return await _after_kind_action(request, "pause")


async def resume_kind(request: Request) -> Response:
    """``POST /kinds/{kind}/resume``: the overview, saying what the resume did."""
    return await _after_kind_action(request, "resume")


async def item_fragment(request: Request) -> Response:
    """One item's live region alone, or 404."""
    context = await _item_context(request)
    if context is None:
        return Response(status_code=404)
    return render(request, "_item.html", context)


def not_found(request: Request, message: str) -> Response:
    """The 404 page saying ``message``."""
    return render(request, "problem.html", {"title": "Not found", "message": message}, 404)
