"""A worker's own ``/metrics`` and ``/healthz``, on ``WORKQUEUE_METRICS_PORT``.

Off by default. Set, the worker serves its counters
(:class:`~workqueue.adapters.prometheus.WorkerMetrics`:
items claimed, succeeded, failed, released, leases lost, recovered, heartbeat
latency) in the Prometheus text format, and ``/healthz`` as ``workqueue web`` does
(200 when the database answers and the schema is current, else 503), with uvicorn
in the worker's own event loop. Needs the ``web`` extra; this module is imported
only when the port is set.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable, Iterator

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from workqueue.adapters.prometheus import WorkerMetrics
from workqueue.entrypoints.web.health import Health, health_document
from workqueue.entrypoints.web.run import bind

__all__ = ["MetricsServer", "metrics_app", "start_metrics_server"]

logger = logging.getLogger("workqueue.worker.metrics")

_PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


def metrics_app(metrics: WorkerMetrics, health: Callable[[], Awaitable[Health]]) -> Starlette:
    """The two routes: ``/metrics`` from ``metrics``, ``/healthz`` from ``health()``."""

    async def metrics_route(request: Request) -> Response:
        return Response(metrics.text(), media_type=_PROMETHEUS_TEXT)

    async def healthz_route(request: Request) -> Response:
        checked = await health()
        return JSONResponse(health_document(checked), status_code=200 if checked.healthy() else 503)

    return Starlette(routes=[Route("/metrics", metrics_route), Route("/healthz", healthz_route)])


@contextlib.contextmanager
def _signals_left_to_the_worker() -> Iterator[None]:  # pragma: no mutate block
    # The worker's run owns SIGTERM and SIGINT; uvicorn must not take them.
    yield


class MetricsServer:  # pragma: no mutate block
    """uvicorn serving the metrics app on a bound socket, as a task of the running loop."""

    def __init__(self, app: Starlette, listening: socket.socket) -> None:
        config = uvicorn.Config(
            app, log_config=None, access_log=False, lifespan="off", server_header=False
        )
        self._server = uvicorn.Server(config)
        self._server.capture_signals = _signals_left_to_the_worker  # type: ignore[method-assign]
        self._listening = listening
        self._task = asyncio.create_task(self._server.serve(sockets=[listening]))

    async def stop(self) -> None:
        """Stop serving and wait for it; closes the socket."""
        self._server.should_exit = True
        try:
            await self._task
        finally:
            self._listening.close()


async def start_metrics_server(
    app: Starlette, host: str, port: int
) -> MetricsServer:  # pragma: no mutate block
    """Serve ``app`` on ``host``:``port`` until :meth:`MetricsServer.stop`.

    :raises ListenError: if the address cannot be listened on.
    """
    server = MetricsServer(app, bind(host, port))
    logger.info(
        "serving the worker's metrics on http://%s:%d/metrics",
        host,
        port,
        extra={"host": host, "port": port},
    )
    return server
