"""``workqueue web``: serve the view with uvicorn until SIGTERM or SIGINT.

Two things are done here rather than left to uvicorn, so that ``workqueue web``
ends like the other commands:

- the listening socket is bound before serving: an address that is taken is a
  :class:`~workqueue.entrypoints.web.listen.ListenError` (one line, exit status 1), not
  uvicorn's own exit;
- SIGTERM and SIGINT only ask the server to stop (a second SIGINT forces it).
  uvicorn would raise the signal again once it stopped, killing the process
  before the pool is closed and with a signal's exit status instead of 0.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
from collections.abc import Iterator

import uvicorn

from workqueue.entrypoints.web.container import build_web_container
from workqueue.entrypoints.web.hosts import served_hosts
from workqueue.entrypoints.web.listen import ListenError
from workqueue.entrypoints.web.settings import WebSettings
from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = ["bind", "serve_web"]

logger = logging.getLogger("workqueue.web")

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def bind(host: str, port: int) -> socket.socket:  # pragma: no mutate block
    """A socket bound to ``host``:``port``, ready for the server to listen on.

    :raises ListenError: if the address cannot be resolved or is taken.
    """
    try:
        family, kind, protocol, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM
        )[0]
        listening = socket.socket(family, kind, protocol)
    except OSError as error:
        raise ListenError(f"cannot listen on {host}:{port}: {error}") from None
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(address)
    except OSError as error:
        listening.close()
        raise ListenError(f"cannot listen on {host}:{port}: {error}") from None
    return listening


@contextlib.contextmanager
def _stop_on_signals(server: uvicorn.Server) -> Iterator[None]:  # pragma: no mutate block
    previous = {signum: signal.signal(signum, server.handle_exit) for signum in _STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


async def serve_web(
    core: WorkerContainer, settings: WebSettings
) -> None:  # pragma: no mutate block
    """Open the database, then serve the view on ``settings``' host and port.

    :raises DatabaseUnreachableError: if the database does not answer at start.
    :raises ListenError: if the address cannot be listened on.
    """
    web = build_web_container(
        core,
        token=settings.web_token,
        allowed_hosts=served_hosts(settings.web_host, settings.web_allowed_hosts),
    )
    app = await provide(web.app)
    overview = await provide(web.overview)
    database = await provide(core.database)
    listening = bind(settings.web_host, settings.web_port)
    config = uvicorn.Config(
        app,
        # The CLI configured logging already; uvicorn's access log stays off (a
        # page refreshes every 2 s).
        log_config=None,
        access_log=False,
        lifespan="off",
        server_header=False,
    )
    server = uvicorn.Server(config)
    server.capture_signals = lambda: _stop_on_signals(server)  # type: ignore[method-assign]
    logger.info(
        "serving the admin view on http://%s:%d/ (database %s)",
        settings.web_host,
        settings.web_port,
        database.shown,
        extra={"host": settings.web_host, "port": settings.web_port},
    )
    try:
        await server.serve(sockets=[listening])
    finally:
        listening.close()
        await overview.close()
    logger.info("the admin view stopped")
