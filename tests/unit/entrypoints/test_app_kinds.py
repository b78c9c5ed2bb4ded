"""An application's own kinds through ``--app MODULE[:ATTRIBUTE]`` (or ``WORKQUEUE_APP``): loaded,
served beside the built-in ones, and every way an application can be wrong refused at start-up
with one line and an exit status."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from dependency_injector import providers
from worker_world import PRODUCTION_KINDS, WorkerWorld, periodic_kinds

from workqueue.domain import RunOutcome, WorkStatus
from workqueue.entrypoints.cli import build_parser
from workqueue.entrypoints.worker.app import NO_APP, AppLoadError, WorkQueueApp, load_app
from workqueue.entrypoints.worker.container import WorkerContainer, provide
from workqueue.entrypoints.worker.run import run_worker
from workqueue.entrypoints.worker.settings import WorkerSettings

LEASE = timedelta(seconds=60)

APPLICATION = """
from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

from workqueue.domain import WorkContext, WorkHandler, WorkPayload, WorkSchedule
from workqueue.entrypoints.worker.app import WorkerResources, WorkQueueApp


class GardenKind(StrEnum):
    MOW = "mow"
    WATER = "water"


class Neighbour(StrEnum):
    MOW = "mow"


class Mow(WorkPayload):
    kind = GardenKind.MOW
    lawns: int = 1


class MowAgain(WorkPayload):
    kind = GardenKind.MOW


class Water(WorkPayload):
    kind = GardenKind.WATER


class NeighbourMow(WorkPayload):
    kind = Neighbour.MOW


class MowHandler(WorkHandler[Mow]):
    def __init__(self, resources: WorkerResources) -> None:
        self.resources = resources

    async def handle(self, payload: Mow, ctx: WorkContext) -> None:
        ctx.report_progress({"mown": payload.lawns})


class WaterHandler(WorkHandler[Water]):
    def __init__(self, resources: WorkerResources) -> None:
        pass

    async def handle(self, payload: Water, ctx: WorkContext) -> None:
        return None


class NeighbourMowHandler(WorkHandler[NeighbourMow]):
    def __init__(self, resources: WorkerResources) -> None:
        pass

    async def handle(self, payload: NeighbourMow, ctx: WorkContext) -> None:
        return None


HOURLY = timedelta(hours=1)

app = WorkQueueApp(
    kinds=[GardenKind],
    payloads=[Mow, Water],
    handlers=[MowHandler, WaterHandler],
    schedules=[WorkSchedule(Water(), interval=HOURLY)],
)
no_tokens = WorkQueueApp(
    kinds=[GardenKind], payloads=[Mow, Water], handlers=[MowHandler, WaterHandler],
    token_cleanup=False,
)
no_payload = WorkQueueApp(kinds=[GardenKind], payloads=[Mow], handlers=[MowHandler, WaterHandler])
no_handler = WorkQueueApp(kinds=[GardenKind], payloads=[Mow, Water], handlers=[MowHandler])
two_payloads = WorkQueueApp(
    kinds=[GardenKind], payloads=[Mow, MowAgain, Water], handlers=[MowHandler, WaterHandler]
)
two_handlers = WorkQueueApp(
    kinds=[GardenKind], payloads=[Mow, Water], handlers=[MowHandler, MowHandler, WaterHandler]
)
one_name_twice = WorkQueueApp(
    kinds=[GardenKind, Neighbour],
    payloads=[Mow, Water, NeighbourMow],
    handlers=[MowHandler, WaterHandler, NeighbourMowHandler],
)
builtin_name_again = WorkQueueApp(
    kinds=[StrEnum("Clash", {"CLEANUP": "token_cleanup"})], payloads=[], handlers=[]
)
unserved_schedule = WorkQueueApp(
    kinds=[GardenKind.MOW],
    payloads=[Mow],
    handlers=[MowHandler],
    schedules=[WorkSchedule(Water(), interval=HOURLY)],
)
no_kinds = WorkQueueApp(kinds=[], payloads=[], handlers=[])
not_an_app = {"kinds": [GardenKind]}
"""


@pytest.fixture(autouse=True)
def application(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``garden.py`` in the current directory, where ``--app garden`` finds it."""
    (tmp_path / "garden.py").write_text(textwrap.dedent(APPLICATION))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    sys.modules.pop("garden", None)


def with_app(world: WorkerWorld) -> Callable[[WorkerSettings], WorkerContainer]:
    """The world's container, with a stand-in pool for the application's handlers."""

    def container(settings: WorkerSettings) -> WorkerContainer:
        built = world.container(settings)
        # The in-memory world has no pool; the application's handlers get this.
        built.pool.override(providers.Object("the pool"))
        return built

    return container


class TestLoading:
    def test_a_module_is_read_for_its_app_attribute(self) -> None:
        app = load_app("garden")

        assert isinstance(app, WorkQueueApp)
        assert [payload.__name__ for payload in app.payloads] == ["Mow", "Water"]

    def test_an_attribute_after_a_colon_is_read_instead(self) -> None:
        assert load_app("garden:no_tokens").token_cleanup is False

    def test_the_current_directory_is_searched_before_the_rest_of_the_path(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "garden.py").write_text("app = None\n")
        monkeypatch.setattr(sys, "path", [str(elsewhere), *sys.path])

        assert isinstance(load_app("garden"), WorkQueueApp)

    def test_no_reference_is_no_application(self) -> None:
        assert load_app(None) is NO_APP

    @pytest.mark.parametrize(
        ("reference", "message"),
        [
            (
                "orchard",
                "cannot import the application 'orchard': "
                "ModuleNotFoundError: No module named 'orchard'",
            ),
            (
                "garden:shed",
                "the application garden:shed must be a WorkQueueApp, but garden.shed is nothing",
            ),
            (
                "garden:not_an_app",
                "the application garden:not_an_app must be a WorkQueueApp, "
                "but garden.not_an_app is a dict",
            ),
            ("garden:no_kinds", "the application garden:no_kinds declares no kinds"),
        ],
    )
    def test_what_names_no_application_is_refused_in_one_line(
        self, reference: str, message: str
    ) -> None:
        with pytest.raises(AppLoadError) as refused:
            load_app(reference)

        assert str(refused.value) == message

    def test_a_module_that_fails_on_import_is_refused_with_its_error(self, tmp_path: Path) -> None:
        (tmp_path / "broken.py").write_text("raise RuntimeError('no water\\nin the tap')\n")

        with pytest.raises(AppLoadError) as refused:
            load_app("broken")

        assert str(refused.value) == (
            "cannot import the application 'broken': RuntimeError: no water in the tap"
        )

    def test_a_kind_policy_that_cannot_hold_is_refused_naming_the_field(
        self, tmp_path: Path
    ) -> None:
        (tmp_path / "flaky.py").write_text(
            "from workqueue import KindPolicy\nPOLICY = KindPolicy(max_attempts=0)\n"
        )

        with pytest.raises(AppLoadError) as refused:
            load_app("flaky")

        assert str(refused.value) == (
            "cannot import the application 'flaky': "
            "InvalidPolicyError: max_attempts must be at least 1, not 0"
        )

    def test_a_schedule_that_cannot_be_read_is_refused_naming_its_kind(
        self, tmp_path: Path
    ) -> None:
        (tmp_path / "nightly.py").write_text(
            "from enum import StrEnum\n"
            "from workqueue import WorkPayload, WorkSchedule\n"
            "class Kind(StrEnum):\n"
            "    MOW = 'mow'\n"
            "class Mow(WorkPayload):\n"
            "    kind = Kind.MOW\n"
            "SCHEDULE = WorkSchedule(Mow(), cron='0 25 * * *', timezone='Europe/Paris')\n"
        )

        with pytest.raises(AppLoadError) as refused:
            load_app("nightly")

        assert str(refused.value) == (
            "cannot import the application 'nightly': InvalidScheduleError: schedule of 'mow': "
            "cron expression '0 25 * * *' cannot be read: Bad hour"
        )


class TestServing:
    async def test_the_registry_serves_the_application_beside_the_built_in_kinds(
        self, world: WorkerWorld
    ) -> None:
        container = with_app(world)(WorkerSettings(app="garden"))

        registry = await provide(container.registry)
        schedules = await provide(container.schedules)

        assert sorted(registry.kinds) == sorted(["mow", "water", *PRODUCTION_KINDS])
        assert registry.handler("mow").resources.pool == "the pool"  # type: ignore[attr-defined]
        assert sorted(schedule.kind for schedule in schedules) == sorted(
            ["water", *periodic_kinds()]
        )

    async def test_an_application_without_refresh_tokens_serves_no_token_cleanup(
        self, world: WorkerWorld
    ) -> None:
        container = with_app(world)(WorkerSettings(app="garden:no_tokens"))

        registry = await provide(container.registry)
        schedules = await provide(container.schedules)

        without = [kind for kind in PRODUCTION_KINDS if kind != "token_cleanup"]
        assert sorted(registry.kinds) == sorted(["mow", "water", *without])
        assert sorted(schedule.kind for schedule in schedules) == [
            kind for kind in periodic_kinds() if kind != "token_cleanup"
        ]

    async def test_one_worker_runs_the_applications_items_and_the_built_in_ones(
        self, world: WorkerWorld
    ) -> None:
        container = with_app(world)(WorkerSettings(app="garden", worker_id="w"))
        running = asyncio.create_task(run_worker(container, stop_signals=()))
        await world.clock.settle()

        finished = {item.kind: item.status for item in world.state.snapshot()}
        assert finished == dict.fromkeys(["water", *periodic_kinds()], WorkStatus.SUCCEEDED)
        (await provide(container.worker)).stop()
        await running

    def test_an_application_kind_is_paused_by_name_with_the_application(
        self, world: WorkerWorld
    ) -> None:
        run = world.cli("pause", "mow", "--app", "garden", container_factory=with_app(world))

        assert (run.status, run.err) == (0, "")
        assert list(world.state.pauses) == ["mow"]

    def test_enqueue_validates_and_stores_an_application_payload(self, world: WorkerWorld) -> None:
        run = world.cli(
            "enqueue",
            "mow",
            "--payload",
            '{"lawns": 2}',
            "--app",
            "garden",
            container_factory=with_app(world),
        )

        assert (run.status, run.out, run.err) == (0, "created item 1 (mow)\n", "")
        (item,) = world.state.snapshot()
        assert (item.kind, item.payload) == ("mow", {"lawns": 2})

    def test_enqueue_refuses_an_application_payload_that_does_not_validate(
        self, world: WorkerWorld
    ) -> None:
        run = world.cli(
            "enqueue",
            "mow",
            "--payload",
            '{"lawns": "all"}',
            "--app",
            "garden",
            container_factory=with_app(world),
        )

        assert run.status == 2
        assert run.err.startswith("workqueue: invalid payload for kind 'mow': lawns: ")

    def test_the_app_setting_names_the_application_as_the_option_does(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_APP", "garden")

        run = world.cli("enqueue", "water", container_factory=with_app(world))

        assert (run.status, run.out) == (0, "created item 1 (water)\n")

    def test_the_option_wins_over_the_setting(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_APP", "garden:no_kinds")

        run = world.cli("enqueue", "water", "--app", "garden", container_factory=with_app(world))

        assert (run.status, run.out, run.err) == (0, "created item 1 (water)\n", "")

    @pytest.mark.parametrize("named", ["option", "setting"])
    def test_a_kind_unknown_to_the_named_application_is_simply_unknown(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch, named: str
    ) -> None:
        # Left out by this application: a built-in kind, yet not served.
        argv = ["enqueue", "token_cleanup"]
        if named == "option":
            argv += ["--app", "garden:no_tokens"]
        else:
            monkeypatch.setenv("WORKQUEUE_APP", "garden:no_tokens")

        run = world.cli(*argv, container_factory=with_app(world))

        served = sorted(["mow", "water", *(k for k in PRODUCTION_KINDS if k != "token_cleanup")])
        assert (run.status, run.out) == (2, "")
        assert (
            run.err
            == f"workqueue: unknown kind 'token_cleanup' (known kinds: {', '.join(served)})\n"
        )

    def test_requeue_knows_the_applications_kinds(self, world: WorkerWorld) -> None:
        enqueued = world.cli("enqueue", "mow", "--app", "garden", container_factory=with_app(world))
        assert enqueued.status == 0, enqueued.err

        async def fail_it() -> None:
            claimed = await world.store.claim(["mow"], worker_id="w", lease_duration=LEASE)
            assert claimed is not None
            assert await world.store.finish(claimed.lease, RunOutcome.failed("rain", None))

        asyncio.run(fail_it())
        run = world.cli("requeue", "1", "--app", "garden", container_factory=with_app(world))

        assert run.status == 0, run.err
        assert [(item.kind, item.status.value) for item in world.state.items.values()] == [
            ("mow", "failed"),
            ("mow", "queued"),
        ]

    def test_the_view_takes_an_application_too(self) -> None:
        assert build_parser().parse_args(["web", "--app", "garden"]).app == "garden"

    def test_status_names_the_applications_kinds(self, world: WorkerWorld) -> None:
        run = world.cli("status", "--app", "garden", container_factory=with_app(world))

        assert run.status == 0, run.err
        for kind in ["mow", "water", *PRODUCTION_KINDS]:
            assert kind in run.out

    def test_an_app_setting_that_is_no_module_name_is_a_usage_error(
        self, world: WorkerWorld
    ) -> None:
        run = world.cli("status", "--app", "my-app:")

        assert (run.status, run.err) == (
            2,
            "workqueue: invalid setting WORKQUEUE_APP: must be MODULE[:ATTRIBUTE], "
            "e.g. myapp.work:app\n",
        )


class TestStartupFailures:
    @pytest.mark.parametrize(
        ("app", "status", "message"),
        [
            (
                "garden:no_payload",
                1,
                "cannot build the kind registry for WorkKind or GardenKind: "
                "kind 'water' has no payload class",
            ),
            (
                "garden:no_handler",
                1,
                "cannot build the kind registry for WorkKind or GardenKind: "
                "kind 'water' has no handler",
            ),
            (
                "garden:two_payloads",
                1,
                "cannot build the kind registry for WorkKind or GardenKind: "
                "kind 'mow' has 2 payload classes: Mow, MowAgain",
            ),
            (
                "garden:two_handlers",
                1,
                "cannot build the kind registry for WorkKind or GardenKind: "
                "kind 'mow' has 2 handlers: MowHandler, MowHandler",
            ),
            (
                "garden:unserved_schedule",
                1,
                "cannot build the kind registry for WorkKind or GardenKind: "
                "schedule of kind 'water' has no handler: its items would never be claimed",
            ),
            (
                "orchard",
                2,
                "cannot import the application 'orchard': "
                "ModuleNotFoundError: No module named 'orchard'",
            ),
            ("garden:no_kinds", 2, "the application garden:no_kinds declares no kinds"),
        ],
    )
    def test_a_worker_with_a_broken_application_stops_in_one_line_naming_the_culprit(
        self, world: WorkerWorld, app: str, status: int, message: str
    ) -> None:
        run = world.cli("worker", "--app", app, container_factory=with_app(world))

        assert (run.status, run.err) == (status, f"workqueue: {message}\n")
        assert world.state.snapshot() == []

    def test_two_kinds_of_one_name_from_different_enums_stop_the_worker_naming_both(
        self, world: WorkerWorld
    ) -> None:
        run = world.cli(
            "worker",
            "--app",
            "garden:one_name_twice",
            container_factory=with_app(world),
        )

        assert run.status == 1
        assert run.err.startswith(
            "workqueue: cannot build the kind registry for WorkKind or GardenKind or Neighbour: "
            "kind 'mow' is declared twice: GardenKind.MOW and Neighbour.MOW; "
        )
        assert run.err.count("\n") == 1

    def test_an_application_kind_named_as_a_built_in_one_stops_the_worker(
        self, world: WorkerWorld
    ) -> None:
        run = world.cli(
            "worker",
            "--app",
            "garden:builtin_name_again",
            container_factory=with_app(world),
        )

        assert run.status == 1
        assert (
            "kind 'token_cleanup' is declared twice: WorkKind.TOKEN_CLEANUP and Clash.CLEANUP"
            in (run.err)
        )

    def test_a_broken_application_is_refused_before_any_database_is_reached(
        self, world: WorkerWorld
    ) -> None:
        def unreachable(settings: WorkerSettings) -> WorkerContainer:
            container = with_app(world)(settings)
            container.database.override(providers.Callable(pytest.fail, "reached the database"))
            return container

        for command in (["worker"], ["status"], ["enqueue", "mow"]):
            run = world.cli(*command, "--app", "garden:no_payload", container_factory=unreachable)

            assert run.status == 1, run.err
            assert "kind 'water' has no payload class" in run.err
