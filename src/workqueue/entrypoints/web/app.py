"""The ASGI application of ``workqueue web``: routes, headers and error pages.

:func:`create_app` takes the services (the composition root,
:mod:`workqueue.entrypoints.web.container`, builds them; tests pass in-memory ones) and
returns a Starlette application. Every route reads, but the POSTs of
:mod:`workqueue.entrypoints.web.actions` (cancel, requeue, pause, resume) and of
:mod:`workqueue.entrypoints.web.bulk` (a kind's failed items requeued, its queued ones
cancelled), which need the admin token.
Every route answers only requests for a host the view serves
(:mod:`workqueue.entrypoints.web.hosts`).

Every response carries a strict Content-Security-Policy: scripts and styles
only from ``/static/``, no inline script, no framing. Together with autoescaped
templates, text from the table cannot run in the page even if an escape were
missed.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from workqueue.domain import StoreUnavailableError
from workqueue.entrypoints.web.api import (
    api_activity,
    api_failures,
    api_item,
    api_items_by_dedup_key,
    api_overview,
    api_pauses,
    api_queued,
    api_running,
    api_schedules,
)
from workqueue.entrypoints.web.bulk import (
    cancel_queued_kind,
    cancel_queued_page,
    requeue_failed_kind,
    requeue_failed_page,
)
from workqueue.entrypoints.web.health import check_health, health_document
from workqueue.entrypoints.web.hosts import AllowedHosts
from workqueue.entrypoints.web.metrics import UNAVAILABLE, metrics_text, read_sample
from workqueue.entrypoints.web.pages import (
    cancel_item,
    find_item,
    item_fragment,
    item_page,
    overview_fragment,
    overview_page,
    pause_kind,
    render,
    requeue_item,
    resume_kind,
    schedules_page,
)
from workqueue.entrypoints.web.reads import BadQueryError, WebServices, services
from workqueue.entrypoints.web.templating import environment

__all__ = ["SECURITY_HEADERS", "create_app"]

logger = logging.getLogger("workqueue.web")

SECURITY_HEADERS: dict[str, str] = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    # Not no-referrer: under it a browser sends "Origin: null" with a form's POST, and
    # the actions' same-origin check could not tell this view's own pages from others.
    # Other origins still get no referrer at all.
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
"""Headers on every response."""

_HEADER_NAMES = frozenset(name.encode("ascii") for name in SECURITY_HEADERS)

_METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# The actions change the table: POST only (a GET, a link or a prefetch, is refused).
_ACTION_METHODS = ("POST",)


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                # Starlette's responses always send their headers, lower-case.
                headers = [
                    (name, value) for name, value in message["headers"] if name not in _HEADER_NAMES
                ]
                headers += [
                    (name.encode(), value.encode()) for name, value in SECURITY_HEADERS.items()
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self._app(scope, receive, send_with_headers)


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


async def _bad_query(request: Request, error: Exception) -> Response:
    if _wants_json(request):
        return JSONResponse({"error": str(error)}, status_code=400)
    return render(request, "problem.html", {"title": "Bad request", "message": str(error)}, 400)


async def _unavailable(request: Request, error: Exception) -> Response:
    # The error names the host; the page says only what the reader can act on.
    logger.warning("the database is unavailable: %s", error)
    message = "The database does not answer. The page tries again by itself."
    if _wants_json(request):
        return JSONResponse({"error": "the database does not answer"}, status_code=503)
    return render(
        request, "problem.html", {"title": "Database unavailable", "message": message}, 503
    )


async def metrics(request: Request) -> Response:
    """``/metrics``: the Prometheus text format, read from the table now."""
    found = services(request)
    try:
        sample = await read_sample(found.overview, found.monitor)
    except StoreUnavailableError as error:
        logger.warning("metrics: the database is unavailable: %s", error)
        sample = UNAVAILABLE
    return Response(metrics_text(sample), media_type=_METRICS_TYPE)


async def healthz(request: Request) -> Response:
    """``/healthz``: 200 when the database is readable and the schema current, else 503."""
    found = services(request)
    health = await check_health(found.monitor, found.schema)
    return JSONResponse(health_document(health), status_code=200 if health.healthy() else 503)


async def _not_found(request: Request, error: Exception) -> Response:
    if _wants_json(request):
        return JSONResponse({"error": "no such endpoint"}, status_code=404)
    if request.url.path.startswith("/static/"):
        return PlainTextResponse("not found", status_code=404)
    return render(request, "problem.html", {"title": "Not found", "message": "No such page."}, 404)


def create_app(services: WebServices, *, allowed_hosts: Collection[str]) -> Starlette:
    """The application, reading through ``services``.

    :param allowed_hosts: the hosts it serves (:mod:`workqueue.entrypoints.web.hosts`): a
        request whose ``Host`` header names another is answered 400, and nothing else.
    """
    app = Starlette(
        routes=[
            Route("/", overview_page),
            Route("/find", find_item),
            Route("/schedules", schedules_page),
            Route("/items/{item_id:int}", item_page),
            Route("/items/{item_id:int}/cancel", cancel_item, methods=_ACTION_METHODS),
            Route("/items/{item_id:int}/requeue", requeue_item, methods=_ACTION_METHODS),
            # A kind is any text, a "/" too: the path convertor takes it whole.
            Route("/kinds/{kind:path}/pause", pause_kind, methods=_ACTION_METHODS),
            Route("/kinds/{kind:path}/resume", resume_kind, methods=_ACTION_METHODS),
            # A bulk action's confirmation (GET) and the action (POST), on one path.
            Route("/kinds/{kind:path}/requeue-failed", requeue_failed_page, methods=("GET",)),
            Route(
                "/kinds/{kind:path}/requeue-failed", requeue_failed_kind, methods=_ACTION_METHODS
            ),
            Route("/kinds/{kind:path}/cancel-queued", cancel_queued_page, methods=("GET",)),
            Route("/kinds/{kind:path}/cancel-queued", cancel_queued_kind, methods=_ACTION_METHODS),
            Route("/fragments/overview", overview_fragment),
            Route("/fragments/items/{item_id:int}", item_fragment),
            Route("/api/overview", api_overview),
            Route("/api/running", api_running),
            Route("/api/queued", api_queued),
            Route("/api/failures", api_failures),
            Route("/api/items", api_items_by_dedup_key),
            Route("/api/items/{item_id:int}", api_item),
            Route("/api/schedules", api_schedules),
            Route("/api/pauses", api_pauses),
            Route("/api/activity", api_activity),
            Route("/metrics", metrics),
            Route("/healthz", healthz),
            Mount("/static", StaticFiles(packages=[("workqueue.entrypoints.web", "static")])),
        ],
        exception_handlers={
            BadQueryError: _bad_query,
            StoreUnavailableError: _unavailable,
            404: _not_found,
        },
    )
    app.state.services = services
    app.state.templates = Jinja2Templates(env=environment())
    # Added first, so inside SecurityHeaders: a refused host's 400 carries the headers too.
    app.add_middleware(AllowedHosts, hosts=allowed_hosts)
    app.add_middleware(SecurityHeaders)
    return app
