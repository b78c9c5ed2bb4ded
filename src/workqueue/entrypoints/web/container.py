"""The composition root of ``workqueue web``: the view's objects, on the worker's database.

The web view reads the same database as the worker, through the same providers
(database, pool, clock, schema, kind registry) and the read-only monitor of
:class:`~workqueue.entrypoints.worker.container.WorkerContainer`. This container adds what
only the view needs, built on first use::

    web = build_web_container(worker_container)
    app = await provide(web.app)

Tests override the worker container's providers (in-memory monitor, FakeClock),
never this module's wiring.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from dependency_injector import containers, providers
from pydantic import SecretStr

from workqueue.application.registry import KindCatalog
from workqueue.domain import WorkQueue, WorkStore
from workqueue.entrypoints.web.actions import WebActions
from workqueue.entrypoints.web.app import create_app
from workqueue.entrypoints.web.hosts import LOCAL_HOSTS
from workqueue.entrypoints.web.overview import OverviewReader
from workqueue.entrypoints.web.reads import WebServices
from workqueue.entrypoints.worker.container import WorkerContainer

__all__ = ["WebContainer", "build_web_container"]


def _kind_names(catalog: KindCatalog[Any]) -> frozenset[str]:
    return catalog.kinds


def _actions(
    token: SecretStr | None, store: WorkStore, queue: WorkQueue, catalog: KindCatalog[Any]
) -> WebActions | None:
    if token is None:
        return None
    return WebActions(token.get_secret_value(), store, queue, catalog.decode)


class WebContainer(containers.DeclarativeContainer):
    """The view's object graph over a worker container (``core``)."""

    core = providers.DependenciesContainer()
    # The admin token (WORKQUEUE_WEB_TOKEN); None leaves the view read-only.
    token: providers.Object[SecretStr | None] = providers.Object(None)
    # The hosts the view serves (workqueue.entrypoints.web.hosts.served_hosts).
    allowed_hosts: providers.Object[Collection[str]] = providers.Object(LOCAL_HOSTS)

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
        actions=providers.Callable(_actions, token, core.work_store, core.work_queue, core.catalog),
        schedules=core.schedules,
        activity=core.activity_log,
    )
    app = providers.Singleton(create_app, services, allowed_hosts=allowed_hosts)


def build_web_container(
    core: WorkerContainer,
    *,
    token: SecretStr | None = None,
    allowed_hosts: Collection[str] = LOCAL_HOSTS,
) -> WebContainer:
    """A web container reading through ``core``'s providers; nothing in it is built yet.

    :param token: the admin token the actions need; without one the view is read-only.
    :param allowed_hosts: the hosts the view serves; a request for another is a 400.
    """
    web = WebContainer(core=core)
    web.token.override(providers.Object(token))
    web.allowed_hosts.override(providers.Object(allowed_hosts))
    return web
