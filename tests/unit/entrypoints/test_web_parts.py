"""The view's parts: finished counts read sparingly, settings, durations, wiring, the command."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from datetime import timedelta
from types import SimpleNamespace

import httpx
import pytest
from jinja2 import UndefinedError
from pydantic import SecretStr
from web_world import KINDS, WebWorld
from worker_world import PRODUCTION_KINDS, WorkerWorld

from work_items import T0, running_item
from workqueue.domain import StoreUnavailableError, TokenCleanup, WorkStatus
from workqueue.entrypoints.exit_status import ExitStatus, exit_status_for
from workqueue.entrypoints.web.container import build_web_container
from workqueue.entrypoints.web.documents import heartbeat_age, lease_left
from workqueue.entrypoints.web.listen import ListenError
from workqueue.entrypoints.web.overview import FinishedCounts, OverviewReader
from workqueue.entrypoints.web.reads import LARGEST_ID, read_item, read_queued_page
from workqueue.entrypoints.web.settings import SHORTEST_TOKEN, WebSettings, load_web_settings
from workqueue.entrypoints.web.settings import WebSettings as SettingsClass
from workqueue.entrypoints.web.templating import duration, environment
from workqueue.entrypoints.worker.container import provide
from workqueue.entrypoints.worker.settings import SettingsError


class CountingMonitor:
    """Wraps a monitor, counting the finished counts it was asked for."""

    def __init__(self, monitor: object) -> None:
        self._monitor = monitor
        self.finished_reads = 0
        self.cancelled_reads = 0
        self.fail = False
        self.gate: asyncio.Event | None = None

    def __getattr__(self, name: str) -> object:
        return getattr(self._monitor, name)

    async def count_finished(self) -> dict[tuple[str, WorkStatus], int]:
        self.finished_reads += 1
        if self.gate is not None:
            try:
                await self.gate.wait()
            except asyncio.CancelledError:
                self.cancelled_reads += 1
                raise
        if self.fail:
            raise StoreUnavailableError("down")
        counts: dict[tuple[str, WorkStatus], int] = await self._monitor.count_finished()  # type: ignore[attr-defined]
        return counts


class TestFinishedCounts:
    async def test_the_first_look_waits_and_later_ones_reuse_the_counts(self) -> None:
        world = WebWorld()
        monitor = CountingMonitor(world.monitor)
        reader = OverviewReader(monitor, world.clock, kinds=KINDS, finished_max_age=10)  # type: ignore[arg-type]
        await world.failed("one")

        first = await reader.read()
        await world.failed("two")
        await world.clock.advance(9.9)
        second = await reader.read()

        assert first.counts["token_cleanup"][WorkStatus.FAILED] == 1
        assert second.counts["token_cleanup"][WorkStatus.FAILED] == 1
        assert second.finished_counted_at == first.now
        assert monitor.finished_reads == 1

    async def test_stale_counts_are_served_while_a_recount_runs_in_the_background(self) -> None:
        world = WebWorld()
        monitor = CountingMonitor(world.monitor)
        reader = OverviewReader(monitor, world.clock, kinds=KINDS, finished_max_age=10)  # type: ignore[arg-type]
        await reader.read()
        await world.failed("one")
        await world.clock.advance(10)
        monitor.gate = asyncio.Event()

        stale = await reader.read()
        again = await reader.read()
        monitor.gate.set()
        await world.clock.settle()
        fresh = await reader.read()

        assert stale.counts["token_cleanup"][WorkStatus.FAILED] == 0
        assert again.counts["token_cleanup"][WorkStatus.FAILED] == 0
        assert monitor.finished_reads == 2  # one recount, however many looks
        assert fresh.counts["token_cleanup"][WorkStatus.FAILED] == 1
        assert fresh.finished_counted_at == world.clock.now()
        assert stale.finished_counted_at < fresh.finished_counted_at

    async def test_a_failed_recount_keeps_the_counts_and_is_tried_again(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        world = WebWorld()
        monitor = CountingMonitor(world.monitor)
        counts = FinishedCounts(monitor, world.clock, max_age=5)  # type: ignore[arg-type]
        await world.failed("one")
        before, counted_at = await counts.current()
        await world.clock.advance(5)
        monitor.fail = True

        with caplog.at_level(logging.WARNING, logger="workqueue.web"):
            assert await counts.current() == (before, counted_at)
            await world.clock.settle()
        monitor.fail = False
        await counts.current()
        await world.clock.settle()

        (record,) = [r for r in caplog.records if r.name == "workqueue.web"]
        assert record.getMessage() == "recounting the finished items failed"
        assert record.levelno == logging.WARNING
        assert record.exc_info is not None
        assert isinstance(record.exc_info[1], StoreUnavailableError)
        assert monitor.finished_reads == 3
        assert (await counts.current())[1] == world.clock.now()

    async def test_the_first_count_failing_fails_the_look(self) -> None:
        world = WebWorld()
        monitor = CountingMonitor(world.monitor)
        monitor.fail = True
        counts = FinishedCounts(monitor, world.clock, max_age=5)  # type: ignore[arg-type]

        with pytest.raises(StoreUnavailableError):
            await counts.current()

    async def test_closing_stops_a_recount_under_way(self) -> None:
        world = WebWorld()
        monitor = CountingMonitor(world.monitor)
        reader = OverviewReader(monitor, world.clock, kinds=KINDS, finished_max_age=1)  # type: ignore[arg-type]
        await reader.read()
        await world.clock.advance(1)
        monitor.gate = asyncio.Event()
        await reader.read()
        await asyncio.sleep(0)

        await reader.close()
        await reader.close()

        assert (monitor.finished_reads, monitor.cancelled_reads) == (2, 1)

    async def test_the_default_interval_is_ten_seconds(self) -> None:
        world = WebWorld()
        monitor = CountingMonitor(world.monitor)
        reader = OverviewReader(monitor, world.clock, kinds=KINDS)  # type: ignore[arg-type]
        await reader.read()
        await world.clock.advance(9.99)
        await reader.read()
        assert monitor.finished_reads == 1
        await world.clock.advance(0.01)
        await reader.read()
        await world.clock.settle()
        assert monitor.finished_reads == 2


class TestSettings:
    def test_the_defaults_keep_the_view_on_this_machine(self) -> None:
        settings = load_web_settings()

        assert (settings.web_host, settings.web_port) == ("127.0.0.1", 8080)

    def test_the_environment_sets_host_and_port_and_flags_win(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_WEB_HOST", " 0.0.0.0 ")
        monkeypatch.setenv("WORKQUEUE_WEB_PORT", "9000")
        monkeypatch.setenv("WORKQUEUE_LEASE_DURATION", "30")

        from_environment = load_web_settings()
        from_flags = load_web_settings(host="::1", port=1)

        assert (from_environment.web_host, from_environment.web_port) == ("0.0.0.0", 9000)
        assert (from_flags.web_host, from_flags.web_port) == ("::1", 1)
        assert load_web_settings(port=65535).web_port == 65535

    @pytest.mark.parametrize(
        ("overrides", "message"),
        [
            ({"port": 0}, "invalid setting WORKQUEUE_WEB_PORT: must be a port from 1 to 65535"),
            ({"port": 65536}, "invalid setting WORKQUEUE_WEB_PORT: must be a port from 1 to 65535"),
            ({"host": "  "}, "invalid setting WORKQUEUE_WEB_HOST: must be a host name or address"),
            ({"host": "a b"}, "invalid setting WORKQUEUE_WEB_HOST: must be a host name or address"),
        ],
    )
    def test_a_bad_value_is_one_line_naming_the_setting(
        self, overrides: dict[str, object], message: str
    ) -> None:
        with pytest.raises(SettingsError) as raised:
            load_web_settings(**overrides)  # type: ignore[arg-type]

        assert str(raised.value) == message

    def test_two_bad_values_are_named_on_one_line(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("WORKQUEUE_WEB_PORT", "http")

        with pytest.raises(SettingsError) as raised:
            load_web_settings(host="")

        assert str(raised.value).startswith("invalid setting WORKQUEUE_WEB_HOST: ")
        assert "; invalid setting WORKQUEUE_WEB_PORT: " in str(raised.value)

    def test_without_a_token_the_view_has_no_actions(self) -> None:
        assert load_web_settings().web_token is None

    def test_the_admin_token_comes_from_the_environment_and_is_never_shown(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        token = "x" * SHORTEST_TOKEN
        monkeypatch.setenv("WORKQUEUE_WEB_TOKEN", token)

        settings = load_web_settings()

        assert settings.web_token is not None
        assert settings.web_token.get_secret_value() == token
        assert token not in repr(settings)

    @pytest.mark.parametrize("token", ["x" * (SHORTEST_TOKEN - 1), "with a space in it, long"])
    def test_a_token_too_short_or_with_spaces_is_refused_without_quoting_it(
        self, monkeypatch: pytest.MonkeyPatch, token: str
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_WEB_TOKEN", token)

        with pytest.raises(SettingsError) as raised:
            load_web_settings()

        assert str(raised.value) == (
            "invalid setting WORKQUEUE_WEB_TOKEN: "
            f"must be at least {SHORTEST_TOKEN} characters, without spaces"
        )
        assert token not in str(raised.value)

    def test_no_more_hosts_are_served_unless_named(self) -> None:
        assert load_web_settings().web_allowed_hosts == ()

    def test_the_hosts_to_serve_are_a_comma_separated_list_written_as_compared(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv(
            "WORKQUEUE_WEB_ALLOWED_HOSTS", "admin.example.com, Queue.Example.COM.,[::1],10.0.0.5"
        )

        assert load_web_settings().web_allowed_hosts == (
            "admin.example.com",
            "queue.example.com",
            "::1",
            "10.0.0.5",
        )

    def test_hosts_given_in_code_are_checked_and_written_alike(self) -> None:
        settings = WebSettings(web_allowed_hosts=("Admin.Example.", "[::1]"))

        assert settings.web_allowed_hosts == ("admin.example", "::1")
        with pytest.raises(ValueError, match="without ports"):
            WebSettings(web_allowed_hosts=("admin.example:80",))

    @pytest.mark.parametrize("hosts", ["*", "fe80::1", "under_score-and-dash.example"])
    def test_a_star_and_bare_ipv6_addresses_are_names_too(
        self, monkeypatch: pytest.MonkeyPatch, hosts: str
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_WEB_ALLOWED_HOSTS", hosts)

        assert load_web_settings().web_allowed_hosts == (hosts,)

    @pytest.mark.parametrize(
        "hosts",
        [
            "admin.example.com:8080",
            "admin.example.com,,other.example",
            "admin.example.com,",
            " ",
            "admin example",
            "http://admin.example.com",
            "*.example.com",
            "[::1]:8080",
            "a..b",
        ],
    )
    def test_a_list_that_is_not_of_names_is_refused_in_one_line(
        self, monkeypatch: pytest.MonkeyPatch, hosts: str
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_WEB_ALLOWED_HOSTS", hosts)

        with pytest.raises(SettingsError) as raised:
            load_web_settings()

        assert str(raised.value) == (
            "invalid setting WORKQUEUE_WEB_ALLOWED_HOSTS: must be host names or addresses "
            "separated by commas, without ports, or *"
        )

    def test_the_settings_are_frozen(self) -> None:
        assert SettingsClass is WebSettings
        with pytest.raises(ValueError, match="frozen"):
            load_web_settings().web_port = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "\u2013"),
        (0, "0.0 s"),
        (0.44, "0.4 s"),
        (9.94, "9.9 s"),
        (10, "10 s"),
        (59.9, "59 s"),
        (60, "1 min 0 s"),
        (125, "2 min 5 s"),
        (3599, "59 min 59 s"),
        (3600, "1 h 0 min"),
        (7805, "2 h 10 min"),
        (86399, "23 h 59 min"),
        (86400, "1 d 0 h"),
        (90000, "1 d 1 h"),
        (-15, "-15 s"),
        (-0.5, "-0.5 s"),
    ],
)
def test_a_duration_reads_in_its_two_largest_units(seconds: float | None, text: str) -> None:
    assert duration(seconds) == text


class TestWiring:
    async def test_the_web_container_builds_the_app_on_the_worker_container(self) -> None:
        world = WorkerWorld()
        await world.queue.enqueue(TokenCleanup())
        web = build_web_container(world.container())

        app = await provide(web.app)
        reader = await provide(web.overview)
        overview = await reader.read()

        assert await provide(web.app) is app
        assert sorted(overview.counts) == PRODUCTION_KINDS
        assert overview.counts["token_cleanup"][WorkStatus.QUEUED] == 1
        services = app.state.services
        assert services.overview is reader
        assert services.clock is world.clock
        assert services.schema is world.schema
        assert services.actions is None, "no token: read-only"
        await reader.close()

    @pytest.mark.parametrize(
        ("allowed", "served", "refused"),
        [
            ({}, ["127.0.0.1:8080", "localhost", "[::1]:8080"], ["admin.example", "0.0.0.0"]),
            (
                {"allowed_hosts": ("admin.example",)},
                ["admin.example:443"],
                ["localhost", "127.0.0.1"],
            ),
        ],
    )
    async def test_the_app_serves_the_hosts_it_is_given_else_this_machines_own(
        self, allowed: dict[str, tuple[str, ...]], served: list[str], refused: list[str]
    ) -> None:
        web = build_web_container(WorkerWorld().container(), **allowed)
        app = await provide(web.app)

        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://x") as client:
            statuses = {
                host: (await client.get("/healthz", headers={"host": host})).status_code
                for host in served + refused
            }

        assert statuses == {**dict.fromkeys(served, 200), **dict.fromkeys(refused, 400)}
        await (await provide(web.overview)).close()

    async def test_with_a_token_the_app_has_its_actions_on_the_worker_containers_store(
        self,
    ) -> None:
        world = WorkerWorld()
        core = world.container()
        web = build_web_container(core, token=SecretStr("t" * SHORTEST_TOKEN))

        actions = (await provide(web.app)).state.services.actions

        assert actions is not None
        assert actions.token == "t" * SHORTEST_TOKEN
        assert actions.store is await provide(core.work_store)
        assert actions.queue is await provide(core.work_queue)
        assert actions.decode == (await provide(core.catalog)).decode
        await (await provide(web.overview)).close()


class TestCommand:
    def test_workqueue_web_serves_on_the_flags_host_and_port(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        served: list[tuple[object, WebSettings]] = []

        async def serve(core: object, settings: WebSettings) -> None:
            served.append((core, settings))

        monkeypatch.setattr("workqueue.entrypoints.web.run.serve_web", serve)

        run = world.cli("web", "--host", "0.0.0.0", "--port", "9001")

        assert run.status == 0
        ((_, settings),) = served
        assert (settings.web_host, settings.web_port) == ("0.0.0.0", 9001)

    def test_workqueue_web_without_flags_reads_the_environment(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        served: list[WebSettings] = []

        async def serve(core: object, settings: WebSettings) -> None:
            served.append(settings)

        monkeypatch.setattr("workqueue.entrypoints.web.run.serve_web", serve)
        monkeypatch.setenv("WORKQUEUE_WEB_PORT", "8181")

        assert world.cli("web").status == 0
        assert (served[0].web_host, served[0].web_port) == ("127.0.0.1", 8181)

    def test_a_bad_port_is_a_usage_error_of_one_line(self, world: WorkerWorld) -> None:
        run = world.cli("web", "--port", "70000")

        assert run.status == 2
        assert run.err == (
            "workqueue: invalid setting WORKQUEUE_WEB_PORT: must be a port from 1 to 65535\n"
        )


def test_an_address_that_cannot_be_listened_on_is_a_runtime_failure() -> None:
    assert exit_status_for(ListenError("cannot listen on 127.0.0.1:80: taken")) == (
        ExitStatus.FAILURE
    )


class AskedIds:
    """A monitor that only records which ids it was asked for."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    async def item(self, item_id: int) -> None:
        self.asked.append(item_id)


async def test_an_id_no_bigint_can_hold_is_not_asked_for() -> None:
    monitor = AskedIds()

    assert await read_item(monitor, LARGEST_ID) is None  # type: ignore[arg-type]
    assert await read_item(monitor, LARGEST_ID + 1) is None  # type: ignore[arg-type]

    assert monitor.asked == [LARGEST_ID]


class AskedLimits:
    """A monitor that records the limits it was asked for and returns that many items."""

    def __init__(self, items: list[object]) -> None:
        self.items = items
        self.limits: list[int] = []

    async def queued(self, *, kind: str | None, after_id: int, limit: int) -> list[object]:
        self.limits.append(limit)
        return self.items[:limit]


async def test_a_page_asks_for_one_item_more_than_it_shows() -> None:
    monitor = AskedLimits([SimpleNamespace(id=n) for n in range(10)])

    page = await read_queued_page(monitor, kind=None, after=0, limit=3)  # type: ignore[arg-type]

    assert monitor.limits == [4]
    assert page.next_after == 2


def test_only_a_running_item_has_a_lease_left() -> None:
    now = T0
    running = running_item(lease_expires_at=now + timedelta(seconds=30))
    failed = dataclasses.replace(running, status=WorkStatus.FAILED, finished_at=now)

    assert lease_left(running, now) == 30
    assert lease_left(failed, now) is None
    assert heartbeat_age(failed, now) is None


def test_a_name_a_template_lacks_fails_the_page_instead_of_rendering_blank() -> None:
    with pytest.raises(UndefinedError):
        environment().from_string("{{ missing }}").render()
    assert environment().from_string("{{ text }}").render(text="<b>") == "&lt;b&gt;"
