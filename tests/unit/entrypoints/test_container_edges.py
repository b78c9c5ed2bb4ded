"""The composition root's helpers: providing objects that need resources, and closing them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from dependency_injector import providers
from worker_world import WorkerWorld

from entrypoints.worker.container import provide, shutdown_resources
from entrypoints.worker.database import DatabaseTarget


class Resource:
    def __init__(self, target: DatabaseTarget, *, closing_fails: bool = False) -> None:
        self.target = target
        self.closing_fails = closing_fails
        self.closed = False

    async def open(self) -> AsyncIterator[DatabaseTarget]:
        yield self.target
        self.closed = True
        if self.closing_fails:
            raise OSError("the server went away")


async def test_an_object_built_on_an_async_resource_is_provided_awaited(
    world: WorkerWorld,
) -> None:
    container = world.container()
    resource = Resource(world.database)
    container.database.override(providers.Resource(resource.open))

    assert await provide(container.database) is world.database


async def test_an_object_built_on_plain_objects_is_provided_as_it_is(world: WorkerWorld) -> None:
    container = world.container()

    assert await provide(container.database) is world.database


async def test_shutting_down_closes_the_opened_resources_quietly(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    container = world.container()
    resource = Resource(world.database)
    container.database.override(providers.Resource(resource.open))
    await provide(container.database)

    await shutdown_resources(container)

    assert resource.closed
    assert caplog.records == []


async def test_a_resource_that_fails_to_close_is_a_warning_not_a_failure(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    container = world.container()
    resource = Resource(world.database, closing_fails=True)
    container.database.override(providers.Resource(resource.open))
    await provide(container.database)

    await shutdown_resources(container)

    (record,) = caplog.records
    assert (record.name, record.levelname, record.getMessage()) == (
        "workqueue.cli",
        "WARNING",
        "closing the database resources failed",
    )
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], OSError)
