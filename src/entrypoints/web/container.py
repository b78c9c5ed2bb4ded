"""The composition root of ``workqueue web``: the view's objects, on the worker's database.

The web view reads the same database as the worker, through the same providers
(database, pool, clock, schema, kind registry) and the read-only monitor of
:class:`~entrypoints.worker.container.WorkerContainer`. This container adds what
only the view needs, built on first use::

    web = build_web_container(worker_container)
    app = await provide(web.app)

Tests override the worker container's providers (in-memory monitor, FakeClock),
never this module's wiring.
"""

from __future__ import annotations

from typing import Any

from dependency_injector import containers, providers

from application.registry import KindCatalog
from entrypoints.web.app import create_app
from entrypoints.web.overview import OverviewReader
from entrypoints.web.reads import WebServices
from entrypoints.worker.container import WorkerContainer

__all__ = ["WebContainer", "build_web_container"]


def _kind_names(catalog: KindCatalog[Any]) -> frozenset[str]:
    return catalog.kinds


class WebContainer(containers.DeclarativeContainer):
    """The view's object graph over a worker container (``core``)."""

    core = providers.DependenciesContainer()

    overview = providers.Singleton(
        OverviewReader,
        core.work_monitor,
        core.clock,
        kinds=providers.Callable(_kind_names, core.catalog),
    )
    services = providers.Singleton(
        WebServices,
        monitor=core.work_monitor,
        overview=overview,
        schema=core.schema,
        clock=core.clock,
    )
    app = providers.Singleton(create_app, services)


def build_web_container(core: WorkerContainer) -> WebContainer:
    """A web container reading through ``core``'s providers; nothing in it is built yet."""
    return WebContainer(core=core)
