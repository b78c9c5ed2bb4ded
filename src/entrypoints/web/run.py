"""``workqueue web``: serve the view with uvicorn until SIGTERM or SIGINT."""

from __future__ import annotations

import logging

import uvicorn

from entrypoints.web.container import build_web_container
from entrypoints.web.settings import WebSettings
from entrypoints.worker.container import WorkerContainer, provide

__all__ = ["serve_web"]

logger = logging.getLogger("workqueue.web")


async def serve_web(
    core: WorkerContainer, settings: WebSettings
) -> None:  # pragma: no mutate block
    """Open the database, then serve the view on ``settings``' host and port.

    uvicorn handles SIGTERM and SIGINT: it stops accepting, finishes the requests
    under way and returns; the caller then closes the pool.

    :raises DatabaseUnreachableError: if the database does not answer at start.
    :raises OSError: if the address cannot be listened on.
    """
    web = build_web_container(core)
    app = await provide(web.app)
    overview = await provide(web.overview)
    database = await provide(core.database)
    config = uvicorn.Config(
        app,
        host=settings.web_host,
        port=settings.web_port,
        # The CLI configured logging already; uvicorn's access log stays off (a
        # page refreshes every 2 s).
        log_config=None,
        access_log=False,
        lifespan="off",
        server_header=False,
    )
    server = uvicorn.Server(config)
    # The line below says where the view is; uvicorn's own INFO lines would repeat it.
    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
    logger.info(
        "serving the admin view on http://%s:%d/ (database %s)",
        settings.web_host,
        settings.web_port,
        database.shown,
        extra={"host": settings.web_host, "port": settings.web_port},
    )
    try:
        await server.serve()
    finally:
        await overview.close()
    if not server.started:
        raise OSError(f"cannot listen on {settings.web_host}:{settings.web_port}")
