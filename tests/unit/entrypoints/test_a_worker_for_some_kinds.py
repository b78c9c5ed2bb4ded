"""A worker for some kinds (``WORKQUEUE_KINDS``, ``--kinds``): it claims and schedules only
those, a kind no handler serves is refused at start-up, and the other commands never read it."""

from __future__ import annotations

import asyncio
import json
import logging
from enum import StrEnum

import pytest
from dependency_injector import providers
from worker_world import PRODUCTION_KINDS, WorkerWorld, periodic_kinds

from workqueue.application.registry import KindRegistry
from workqueue.domain import (
    TokenCleanup,
    WorkContext,
    WorkHandler,
    WorkItemRetention,
    WorkPayload,
    WorkStatus,
)
from workqueue.entrypoints.worker.container import WorkerContainer, provide
from workqueue.entrypoints.worker.run import run_worker
from workqueue.entrypoints.worker.settings import SettingsError, WorkerSettings, load_settings

# Time never passes on the FakeClock, so a start-up that wrongly succeeds would run
# the worker forever; this bound turns that into a failure instead of a hang.
SAFETY_NET = 10.0

RETENTION = WorkItemRetention.kind.value
TOKEN_CLEANUP = TokenCleanup.kind.value
EMPTY_NAME = (
    "invalid setting WORKQUEUE_KINDS: names an empty kind: "
    "separate the kinds by single commas, e.g. a,b"
)


def limited_to(*kinds: str, concurrency: int = 1) -> WorkerSettings:
    """The settings of a worker told ``--kinds`` with ``kinds``."""
    return load_settings(kinds=",".join(kinds), concurrency=concurrency, worker_id="test-worker")


async def run_until_idle(world: WorkerWorld, container: WorkerContainer) -> None:
    """Start a worker on ``container``, let it do all it finds to do, then stop it."""
    running = asyncio.create_task(run_worker(container, stop_signals=()))
    await world.clock.settle()
    container.worker().stop()
    await running


def statuses(world: WorkerWorld) -> list[tuple[str, WorkStatus]]:
    """Each item's kind and status, oldest first."""
    return [(item.kind, item.status) for item in world.state.snapshot()]


class OnlyKind(StrEnum):
    ONLY = "only"


class Only(WorkPayload):
    kind = OnlyKind.ONLY


class OnlyHandler(WorkHandler[Only]):
    """The handler of a registry that serves none of the built-in kinds."""

    async def handle(self, payload: Only, ctx: WorkContext) -> None:
        return None


class StoppedWorker:
    """A worker with nothing to do: its run returns at once."""

    async def run(self) -> None:
        return None

    def stop(self) -> None:
        return None


class TestTheKindsSetting:
    def test_unset_it_names_no_kind_and_the_worker_claims_every_kind_served(
        self, world: WorkerWorld
    ) -> None:
        settings = load_settings(worker_id="test-worker")

        executor = asyncio.run(provide(world.container(settings).executor))

        assert settings.kinds == frozenset()
        assert sorted(executor.kinds) == PRODUCTION_KINDS

    def test_workqueue_kinds_names_kinds_separated_by_commas_duplicates_and_spaces_ignored(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_KINDS", f" {TOKEN_CLEANUP} , {RETENTION},{TOKEN_CLEANUP}")

        assert load_settings().kinds == {TOKEN_CLEANUP, RETENTION}

    @pytest.mark.parametrize("blank", ["", "  "], ids=["empty", "spaces"])
    def test_a_blank_value_names_no_kind(self, monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
        monkeypatch.setenv("WORKQUEUE_KINDS", blank)

        assert load_settings().kinds == frozenset()
        assert load_settings(kinds=blank).kinds == frozenset()

    def test_kinds_given_in_code_are_a_collection_of_names(self) -> None:
        assert WorkerSettings(kinds=["alpha", " beta "]).kinds == {"alpha", "beta"}

    @pytest.mark.parametrize("value", ["a,,b", "a,", ",a", "a, ,b", ","])
    def test_an_empty_name_is_refused_in_one_line_naming_the_setting(
        self, monkeypatch: pytest.MonkeyPatch, value: str
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_KINDS", value)

        with pytest.raises(SettingsError) as refused:
            load_settings()

        assert str(refused.value) == EMPTY_NAME

    def test_an_empty_name_in_code_is_refused_too(self) -> None:
        with pytest.raises(SettingsError) as refused:
            load_settings(kinds=["alpha", " "])

        assert str(refused.value) == EMPTY_NAME

    def test_the_flag_wins_over_the_environment(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_KINDS", TOKEN_CLEANUP)
        seen: list[frozenset[str]] = []

        def factory(settings: WorkerSettings) -> WorkerContainer:
            seen.append(settings.kinds)
            container = world.container(settings)
            container.worker.override(providers.Object(StoppedWorker()))
            return container

        assert world.cli("worker", "--kinds", RETENTION, container_factory=factory).status == 0
        assert world.cli("worker", container_factory=factory).status == 0
        assert seen == [{RETENTION}, {TOKEN_CLEANUP}]

    def test_a_flag_with_an_empty_name_exits_2_with_one_line(self, world: WorkerWorld) -> None:
        run = world.cli("worker", "--kinds", "a,,b")

        assert (run.status, run.err) == (2, f"workqueue: {EMPTY_NAME}\n")


class TestAKindNoHandlerServesIsRefusedAtStartUp:
    def test_the_worker_exits_2_with_one_line_naming_it_and_the_kinds_served(
        self, world: WorkerWorld
    ) -> None:
        run = world.cli("worker", "--kinds", f"{RETENTION},send_digest,archive")

        assert run.status == 2
        assert run.err == (
            "workqueue: invalid setting WORKQUEUE_KINDS: no handler serves "
            f"'archive', 'send_digest' (the kinds served: {', '.join(PRODUCTION_KINDS)})\n"
        )
        assert world.state.items == {}

    async def test_it_is_refused_before_any_database_is_migrated(self, world: WorkerWorld) -> None:
        world.schema.missing = ["0001_work_items"]

        with pytest.raises(SettingsError, match="no handler serves 'send_digest'"):
            async with asyncio.timeout(SAFETY_NET):
                await run_worker(world.container(limited_to("send_digest")), stop_signals=())

        assert world.schema.missing == ["0001_work_items"]

    async def test_the_kinds_are_checked_against_the_registry_the_executors_run_on(
        self, world: WorkerWorld
    ) -> None:
        container = world.container(limited_to(RETENTION))
        container.registry.override(
            providers.Object(KindRegistry(OnlyKind, [Only], [OnlyHandler()]))
        )

        with pytest.raises(SettingsError) as refused:
            await provide(container.executors)

        assert str(refused.value) == (
            f"invalid setting WORKQUEUE_KINDS: no handler serves '{RETENTION}' "
            "(the kinds served: only)"
        )


class TestALimitedWorkerClaimsOnlyItsKinds:
    async def test_it_runs_the_items_of_its_kinds_and_leaves_the_others_queued(
        self, world: WorkerWorld
    ) -> None:
        await world.queue.enqueue(TokenCleanup())
        await world.queue.enqueue(WorkItemRetention())

        await run_until_idle(world, world.container(limited_to(RETENTION)))

        assert statuses(world) == [
            (TOKEN_CLEANUP, WorkStatus.QUEUED),
            (RETENTION, WorkStatus.SUCCEEDED),
        ]

    async def test_its_lanes_claim_only_its_kinds_also_along_with_a_completion(
        self, world: WorkerWorld
    ) -> None:
        for payload in (WorkItemRetention(), TokenCleanup(), WorkItemRetention()):
            await world.queue.enqueue(payload)
        await world.queue.enqueue(WorkItemRetention())

        await run_until_idle(world, world.container(limited_to(RETENTION, concurrency=2)))

        assert statuses(world) == [
            (RETENTION, WorkStatus.SUCCEEDED),
            (TOKEN_CLEANUP, WorkStatus.QUEUED),
            (RETENTION, WorkStatus.SUCCEEDED),
            (RETENTION, WorkStatus.SUCCEEDED),
        ]

    async def test_an_item_of_its_kinds_wakes_it_and_one_of_another_does_not(
        self, world: WorkerWorld
    ) -> None:
        container = world.container(limited_to(TOKEN_CLEANUP))
        running = asyncio.create_task(run_worker(container, stop_signals=()))
        await world.clock.settle()
        before = world.clock.now()

        await world.queue.enqueue(WorkItemRetention())
        await world.queue.enqueue(TokenCleanup())
        await world.clock.settle()

        assert world.clock.now() == before
        assert statuses(world)[-2:] == [
            (RETENTION, WorkStatus.QUEUED),
            (TOKEN_CLEANUP, WorkStatus.SUCCEEDED),
        ]
        container.worker().stop()
        await running

    async def test_the_start_up_lines_name_only_its_kinds(
        self, world: WorkerWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.INFO)

        await run_until_idle(world, world.container(limited_to(RETENTION)))

        assert f"worker test-worker started for kinds {RETENTION}" in caplog.messages
        (started,) = [r for r in caplog.records if r.getMessage() == "worker started"]
        assert started.__dict__["kinds"] == [RETENTION]


class TestALimitedWorkerSchedulesOnlyItsKinds:
    async def test_it_enqueues_the_periodic_items_of_its_kinds_only(
        self, world: WorkerWorld
    ) -> None:
        await run_until_idle(world, world.container(limited_to(RETENTION)))

        assert RETENTION in periodic_kinds()
        assert statuses(world) == [(RETENTION, WorkStatus.SUCCEEDED)]

    async def test_told_every_kind_it_enqueues_every_periodic_item(
        self, world: WorkerWorld
    ) -> None:
        await run_until_idle(world, world.container(limited_to(*PRODUCTION_KINDS)))

        assert sorted(kind for kind, _ in statuses(world)) == periodic_kinds()


class TestTheOtherCommandsDoNotReadIt:
    def test_enqueue_status_and_schedules_serve_every_kind(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_KINDS", RETENTION)

        enqueued = world.cli("enqueue", TOKEN_CLEANUP)
        status = json.loads(world.cli("status", "--json").out)
        schedules = json.loads(world.cli("schedules", "--json").out)

        assert (enqueued.status, enqueued.err) == (0, "")
        assert status["counts"][TOKEN_CLEANUP]["queued"] == 1
        assert sorted(s["kind"] for s in schedules["schedules"]) == periodic_kinds()
