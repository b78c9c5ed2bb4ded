"""A worker writes the fleet-wide cap each of its kinds' policies declares
(``KindPolicy(max_running=N)``) to the store as it starts, before its first claim; an operator's
cap stays, and the start-up log says which cap is in force (docs/adr/0035)."""

from __future__ import annotations

import asyncio
import logging
from enum import StrEnum

import pytest
from dependency_injector import providers
from worker_world import WorkerWorld

from workqueue.adapters.memory.state import StoredCap
from workqueue.domain import (
    CapSource,
    KindPolicy,
    WorkContext,
    WorkHandler,
    WorkPayload,
    WorkStatus,
)
from workqueue.entrypoints.worker.app import WorkerResources, WorkQueueApp
from workqueue.entrypoints.worker.container import WorkerContainer
from workqueue.entrypoints.worker.run import run_worker
from workqueue.entrypoints.worker.settings import WorkerSettings


class SiteKind(StrEnum):
    # An uncapped kind whose name sorts before the capped one's: the worker goes
    # on past it to the next.
    ARCHIVE = "archive_page"
    CRAWL = "crawl_page"
    INDEX = "index_page"


class Archive(WorkPayload):
    kind = SiteKind.ARCHIVE


class Crawl(WorkPayload):
    kind = SiteKind.CRAWL


class Index(WorkPayload):
    kind = SiteKind.INDEX


class CrawlHandler(WorkHandler[Crawl]):
    """The handler of a kind whose policy caps it at two running at once."""

    policy = KindPolicy(max_running=2)

    async def handle(self, payload: Crawl, ctx: WorkContext) -> None:
        return None


class IndexHandler(WorkHandler[Index]):
    """The handler of a kind with the default policy: no cap."""

    async def handle(self, payload: Index, ctx: WorkContext) -> None:
        return None


class ArchiveHandler(WorkHandler[Archive]):
    """The handler of another kind with the default policy."""

    async def handle(self, payload: Archive, ctx: WorkContext) -> None:
        return None


def archive_handler(resources: WorkerResources) -> ArchiveHandler:
    return ArchiveHandler()


def crawl_handler(resources: WorkerResources) -> CrawlHandler:
    return CrawlHandler()


def index_handler(resources: WorkerResources) -> IndexHandler:
    return IndexHandler()


SITE = WorkQueueApp(
    kinds=[SiteKind],
    payloads=[Archive, Crawl, Index],
    handlers=[archive_handler, crawl_handler, index_handler],
    token_cleanup=False,
)


def site_worker(world: WorkerWorld, *kinds: str) -> WorkerContainer:
    """The world's container for a worker of the site's kinds (those ``kinds`` only, if any)."""
    container = world.container(WorkerSettings(worker_id="test-worker", kinds=list(kinds)))
    container.app.override(providers.Object(SITE))
    # The in-memory world has no pool; the application's handlers get this.
    container.pool.override(providers.Object("the pool"))
    return container


async def start_and_stop(world: WorkerWorld, container: WorkerContainer) -> None:
    """Start a worker on ``container``, let it do all it finds to do, then stop it."""
    running = asyncio.create_task(run_worker(container, stop_signals=()))
    await world.clock.settle()
    container.worker().stop()
    await running


async def test_a_kind_whose_policy_declares_a_cap_is_capped_by_its_policy_as_a_worker_starts(
    world: WorkerWorld,
) -> None:
    await start_and_stop(world, site_worker(world))

    assert world.state.caps == {
        SiteKind.CRAWL.value: StoredCap(2, CapSource.POLICY, world.clock.now())
    }


async def test_the_cap_holds_from_the_workers_first_claim(world: WorkerWorld) -> None:
    container = site_worker(world)
    release = asyncio.Event()
    started: list[int] = []

    class WaitingCrawlHandler(CrawlHandler):
        async def handle(self, payload: Crawl, ctx: WorkContext) -> None:
            started.append(ctx.item_id)
            await release.wait()

    container.app.override(
        providers.Object(
            WorkQueueApp(
                kinds=[SiteKind],
                payloads=[Archive, Crawl, Index],
                handlers=[
                    archive_handler,
                    lambda resources: WaitingCrawlHandler(),
                    index_handler,
                ],
                token_cleanup=False,
            )
        )
    )
    container.settings.override(
        providers.Object(WorkerSettings(worker_id="test-worker", concurrency=4))
    )
    for _ in range(4):
        await world.queue.enqueue(Crawl())

    running = asyncio.create_task(run_worker(container, stop_signals=()))
    await world.clock.settle()
    crawls = [item for item in world.state.snapshot() if item.kind == SiteKind.CRAWL]
    while_held = (list(started), [item.status for item in crawls])
    release.set()
    await world.clock.settle()
    container.worker().stop()
    await running

    assert while_held == ([1, 2], [WorkStatus.RUNNING] * 2 + [WorkStatus.QUEUED] * 2)
    assert started == [1, 2, 3, 4]


async def test_an_operators_cap_already_set_stays_and_the_log_says_it_is_in_force(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="workqueue.caps")
    operator = await world.store.cap_kind(SiteKind.CRAWL.value, 5)
    assert operator is not None

    await start_and_stop(world, site_worker(world))

    assert world.state.caps == {
        SiteKind.CRAWL.value: StoredCap(5, CapSource.OPERATOR, operator.set_at)
    }
    (line,) = caplog.records
    assert line.getMessage() == (
        "crawl_page is capped at 5 running at once by an operator (its policy says 2; "
        "`workqueue cap crawl_page none` hands it back to its policy)"
    )
    assert (line.levelno, line.__dict__["kind"], line.__dict__["max_running"]) == (
        logging.INFO,
        "crawl_page",
        5,
    )
    assert line.__dict__["cap_source"] == "operator"


async def test_the_log_says_the_cap_its_policy_set(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="workqueue.caps")

    await start_and_stop(world, site_worker(world))

    (line,) = caplog.records
    assert line.getMessage() == "crawl_page is capped at 2 running at once by its policy"
    assert (line.__dict__["kind"], line.__dict__["max_running"], line.__dict__["cap_source"]) == (
        "crawl_page",
        2,
        "policy",
    )


async def test_a_policy_cap_written_before_with_another_count_is_replaced(
    world: WorkerWorld,
) -> None:
    await world.store.cap_kind(SiteKind.CRAWL.value, 7, source=CapSource.POLICY)

    await start_and_stop(world, site_worker(world))

    assert world.state.caps[SiteKind.CRAWL.value].max_running == 2


async def test_a_cap_of_a_kind_whose_policy_declares_none_is_left_as_it_is(
    world: WorkerWorld,
) -> None:
    await world.store.cap_kind(SiteKind.INDEX.value, 3, source=CapSource.POLICY)
    before = dict(world.state.caps)

    await start_and_stop(world, site_worker(world, SiteKind.INDEX.value))

    assert world.state.caps == before


async def test_a_worker_for_some_kinds_writes_the_caps_of_those_only(world: WorkerWorld) -> None:
    await start_and_stop(world, site_worker(world, SiteKind.INDEX.value))

    assert world.state.caps == {}
