"""A start-up cancelled while a resource is still being opened (Ctrl-C during connection
retries) abandons that opening at once: the tasks building it are cancelled and the
container's framework settles its future, with nothing logged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest
from dependency_injector import containers, providers

from workqueue.entrypoints.worker import container as container_module
from workqueue.entrypoints.worker.container import provide


class Opening:
    """A resource that never finishes opening; cancelled, it ends as ``open_pool`` does."""

    def __init__(self, *, error_on_cancel: bool = True) -> None:
        self.started = asyncio.Event()
        self.ended: list[str] = []
        self.error_on_cancel = error_on_cancel

    async def open(self) -> AsyncIterator[str]:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.ended.append("cancelled")
            if self.error_on_cancel:
                raise RuntimeError("opening was interrupted") from None
            raise
        yield "opened"


def container_over(opening: Opening) -> containers.DynamicContainer:
    built = containers.DynamicContainer()
    built.resource = providers.Resource(opening.open)
    built.user = providers.Singleton(list, providers.List(built.resource))
    return built


async def test_a_cancelled_provide_cancels_the_opening_it_started_and_logs_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    opening = Opening()
    providing = asyncio.ensure_future(provide(container_over(opening).user))
    await opening.started.wait()

    providing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await providing

    assert opening.ended == ["cancelled"]
    assert asyncio.all_tasks() == {asyncio.current_task()}
    await asyncio.sleep(0)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_an_opening_that_ends_cancelled_is_given_up_after_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(container_module, "_ABANDON_GRACE_SECONDS", 0.01)
    opening = Opening(error_on_cancel=False)
    providing = asyncio.ensure_future(provide(container_over(opening).user))
    await opening.started.wait()

    providing.cancel()
    async with asyncio.timeout(5):
        with pytest.raises(asyncio.CancelledError):
            await providing

    assert opening.ended == ["cancelled"]


async def test_a_provide_that_is_not_cancelled_gives_the_object(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def opened() -> AsyncIterator[str]:
        yield "opened"

    built = containers.DynamicContainer()
    built.resource = providers.Resource(opened)

    assert await provide(built.resource) == "opened"
