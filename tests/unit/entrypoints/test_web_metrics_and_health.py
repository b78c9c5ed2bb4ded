"""``/metrics`` and ``/healthz`` on the in-memory queue."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta

import pytest
from prometheus_client.parser import text_string_to_metric_families
from web_world import LEASE, WebWorld

from workqueue.adapters.postgres import SchemaNotCurrentError
from workqueue.domain import StoreUnavailableError, TokenCleanup, WorkItemRetention


@pytest.fixture
def world() -> WebWorld:
    return WebWorld()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def kind(name: str) -> tuple[tuple[str, str], ...]:
    return (("kind", name),)


def kind_status(name: str, status: str) -> tuple[tuple[str, str], ...]:
    return (("kind", name), ("status", status))


class TestMetrics:
    async def test_a_scrape_reads_counts_ages_stalls_and_failures(self, world: WebWorld) -> None:
        old_failure = await world.failed("long ago")
        world.state.write(
            replace(
                world.state.items[old_failure.id],
                finished_at=world.clock.now() - timedelta(hours=2),
            )
        )
        await world.clock.advance(7200)
        stalled = await world.running(worker_id="w-9", kind="work_item_retention")
        world.state.write(replace(world.state.items[stalled.id], stalls=2))
        await world.failed("recent")
        await world.clock.advance(10)
        await world.queue.enqueue(TokenCleanup())
        await world.clock.advance(2.5)

        async with world.client() as client:
            response = await client.get("/metrics")

        assert response.status_code == 200
        assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
        found = samples(response.text)
        assert found[("workqueue_database_up", ())] == 1
        assert found[("workqueue_items", kind_status("token_cleanup", "failed"))] == 2
        assert found[("workqueue_items", kind_status("token_cleanup", "queued"))] == 1
        assert found[("workqueue_items", kind_status("work_item_retention", "running"))] == 1
        assert found[("workqueue_items", kind_status("work_item_retention", "succeeded"))] == 0
        assert found[("workqueue_oldest_queued_age_seconds", kind("token_cleanup"))] == 2.5
        assert found[("workqueue_oldest_queued_age_seconds", kind("work_item_retention"))] == 0
        assert found[("workqueue_oldest_heartbeat_age_seconds", kind("work_item_retention"))] == (
            12.5
        )
        assert found[("workqueue_oldest_heartbeat_age_seconds", kind("token_cleanup"))] == 0
        assert found[("workqueue_stalls_last_hour", kind("work_item_retention"))] == 2
        assert found[("workqueue_stalls_last_hour", kind("token_cleanup"))] == 0
        assert found[("workqueue_failures_last_hour", kind_status("token_cleanup", "failed"))] == 1
        assert found[("workqueue_finished_counts_age_seconds", ())] == 0
        statuses = {dict(labels)["status"] for name, labels in found if name == "workqueue_items"}
        assert statuses == {"queued", "running", "succeeded", "failed", "cancelled"}

    async def test_the_stalest_heartbeat_of_a_kind_is_the_one_shown(self, world: WebWorld) -> None:
        first = await world.running(worker_id="w-1")
        await world.clock.advance(5)
        second = await world.running(worker_id="w-2")
        await world.clock.advance(1)
        await world.store.heartbeat(second.lease, progress=None, lease_duration=LEASE)
        assert second.id > first.id

        async with world.client() as client:
            found = samples((await client.get("/metrics")).text)

        assert found[("workqueue_oldest_heartbeat_age_seconds", kind("token_cleanup"))] == 6

    async def test_the_finished_counts_age_is_how_long_ago_they_were_read(
        self, world: WebWorld
    ) -> None:
        async with world.client() as client:
            await client.get("/metrics")
            await world.clock.advance(3)
            found = samples((await client.get("/metrics")).text)

        assert found[("workqueue_finished_counts_age_seconds", ())] == 3

    async def test_an_unreachable_database_is_up_0_and_nothing_else(
        self, world: WebWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        world.state.unavailable = True

        with caplog.at_level(logging.WARNING, logger="workqueue.web"):
            async with world.client() as client:
                response = await client.get("/metrics")

        assert caplog.messages == [
            "metrics: the database is unavailable: the in-memory store is marked unavailable"
        ]
        assert response.status_code == 200
        assert samples(response.text) == {("workqueue_database_up", ()): 0}


async def test_every_gauge_says_what_it_measures(world: WebWorld) -> None:
    async with world.client() as client:
        text = (await client.get("/metrics")).text

    helps = [line for line in text.splitlines() if line.startswith("# HELP")]
    assert helps == [
        "# HELP workqueue_database_up 1 when the last scrape read the work_items table, 0 when "
        "it could not.",
        "# HELP workqueue_items Items in work_items by kind and status. Finished statuses are "
        "counted at most every few seconds (workqueue_finished_counts_age_seconds).",
        "# HELP workqueue_oldest_queued_age_seconds Seconds the next item a claim takes of each "
        "kind has been queued (0: none queued).",
        "# HELP workqueue_oldest_heartbeat_age_seconds Seconds since the stalest heartbeat among "
        "the running items of each kind (0: none running).",
        "# HELP workqueue_stalls_last_hour Stalls (expired leases) counted on items of each kind "
        "that finished, or last heartbeated, in the last hour.",
        "# HELP workqueue_failures_last_hour Items of each kind that ended unsuccessfully (status "
        "failed, or another unsuccessful final status) in the last hour.",
        "# HELP workqueue_kind_paused 1 when the kind is paused (workqueue pause, or the view's "
        "Pause): no worker claims its items until it is resumed; 0 when it is not.",
        "# HELP workqueue_kind_paused_since_seconds When each paused kind was paused, in seconds "
        "since the Unix epoch.",
        "# HELP workqueue_kind_max_running The cap of each capped kind (workqueue cap, or its "
        "policy): at most this many of its items run at once across every worker.",
        "# HELP workqueue_finished_counts_age_seconds Seconds since the finished items in "
        "workqueue_items were counted.",
    ]


class FailingSchema:
    def __init__(self, error: Exception) -> None:
        self.error = error

    async def apply_pending(self) -> list[str]:
        raise AssertionError("the view never migrates")

    async def check_current(self) -> None:
        raise self.error


class TestHealth:
    async def test_a_readable_database_with_a_current_schema_is_healthy(
        self, world: WebWorld
    ) -> None:
        async with world.client() as client:
            response = await client.get("/healthz")

        assert response.status_code == 200
        assert response.json() == {
            "status": "ok",
            "database": "reachable",
            "schema": "current",
            "reason": None,
        }

    async def test_an_unreachable_database_is_a_503_naming_no_host(self, world: WebWorld) -> None:
        world.state.unavailable = True

        async with world.client() as client:
            response = await client.get("/healthz")

        assert response.status_code == 503
        assert response.json() == {
            "status": "unavailable",
            "database": "unreachable",
            "schema": "unknown",
            "reason": "the database does not answer",
        }

    @pytest.mark.parametrize(
        ("error", "schema", "reason"),
        [
            (
                SchemaNotCurrentError(["0009_next"], []),
                "not current",
                "database is not migrated: run `workqueue migrate` (missing: 0009_next)",
            ),
            (
                PermissionError("permission denied for table workqueue_migrations"),
                "unknown",
                "cannot check the migrations: PermissionError: permission denied for table "
                "workqueue_migrations",
            ),
            (
                RuntimeError("via postgresql://u:hunter2@db/q\n  failed"),
                "unknown",
                "cannot check the migrations: RuntimeError: via postgresql://u:***@db/q failed",
            ),
        ],
        ids=["not-migrated", "no-grant", "password-masked"],
    )
    async def test_a_schema_that_is_not_known_current_is_a_503_saying_why(
        self, world: WebWorld, error: Exception, schema: str, reason: str
    ) -> None:
        world.schema = FailingSchema(error)  # type: ignore[assignment]

        async with world.client() as client:
            response = await client.get("/healthz")

        assert response.status_code == 503
        assert response.json() == {
            "status": "unavailable",
            "database": "reachable",
            "schema": schema,
            "reason": reason,
        }

    async def test_a_database_lost_during_the_schema_check_is_unreachable(
        self, world: WebWorld
    ) -> None:
        world.schema = FailingSchema(StoreUnavailableError("gone to 10.0.0.5:5432"))  # type: ignore[assignment]

        async with world.client() as client:
            document = (await client.get("/healthz")).json()

        assert document == {
            "status": "unavailable",
            "database": "unreachable",
            "schema": "unknown",
            "reason": "the database does not answer",
        }

    async def test_a_table_that_cannot_be_read_is_unreadable(self, world: WebWorld) -> None:
        class Unreadable(type(world.monitor)):  # type: ignore[misc]
            async def running(self) -> list[object]:
                raise PermissionError("permission denied for table work_items")

        world.monitor = Unreadable(world.state)

        async with world.client() as client:
            response = await client.get("/healthz")

        assert response.status_code == 503
        assert response.json() == {
            "status": "unavailable",
            "database": "unreadable",
            "schema": "unknown",
            "reason": "cannot read work_items: PermissionError: permission denied for table "
            "work_items",
        }


async def test_kinds_in_the_table_but_not_served_are_still_measured(world: WebWorld) -> None:
    await world.queue.enqueue(WorkItemRetention())
    world.state.write(replace(world.state.items[1], kind="legacy"))

    async with world.client() as client:
        found = samples((await client.get("/metrics")).text)

    assert found[("workqueue_items", kind_status("legacy", "queued"))] == 1
    assert found[("workqueue_oldest_queued_age_seconds", kind("legacy"))] == 0


class TestPausedKinds:
    async def test_each_kind_says_whether_it_is_paused_and_a_paused_one_since_when(
        self, world: WebWorld
    ) -> None:
        await world.clock.advance(1.5)
        await world.store.pause_kind("token_cleanup", reason="partner down")
        await world.clock.advance(60)
        await world.store.pause_kind("legacy")

        async with world.client() as client:
            lines = (await client.get("/metrics")).text.splitlines()

        start = lines.index("# TYPE workqueue_kind_paused gauge")
        assert lines[start : start + 9] == [
            "# TYPE workqueue_kind_paused gauge",
            'workqueue_kind_paused{kind="legacy"} 1.0',
            'workqueue_kind_paused{kind="token_cleanup"} 1.0',
            'workqueue_kind_paused{kind="work_item_retention"} 0.0',
            "# HELP workqueue_kind_paused_since_seconds When each paused kind was paused, in "
            "seconds since the Unix epoch.",
            "# TYPE workqueue_kind_paused_since_seconds gauge",
            'workqueue_kind_paused_since_seconds{kind="legacy"} 1.7672256615e+09',
            'workqueue_kind_paused_since_seconds{kind="token_cleanup"} 1.7672256015e+09',
            "# HELP workqueue_kind_max_running The cap of each capped kind (workqueue cap, or "
            "its policy): at most this many of its items run at once across every worker.",
        ]
        # The paused kind no one serves is measured as every kind is.
        assert 'workqueue_items{kind="legacy",status="queued"} 0.0' in lines

    async def test_no_kind_paused_is_0_for_each_and_no_time(self, world: WebWorld) -> None:
        async with world.client() as client:
            found = samples((await client.get("/metrics")).text)

        assert {
            (name, labels): value
            for (name, labels), value in found.items()
            if name.startswith("workqueue_kind_paused")
        } == {
            ("workqueue_kind_paused", kind("token_cleanup")): 0,
            ("workqueue_kind_paused", kind("work_item_retention")): 0,
        }


class TestCappedKinds:
    async def test_each_capped_kind_gives_its_cap_and_a_capped_kind_no_one_serves_is_measured(
        self, world: WebWorld
    ) -> None:
        await world.store.cap_kind("token_cleanup", 3)
        await world.store.cap_kind("legacy", 1)

        async with world.client() as client:
            found = samples((await client.get("/metrics")).text)

        assert {
            (name, labels): value
            for (name, labels), value in found.items()
            if name == "workqueue_kind_max_running"
        } == {
            ("workqueue_kind_max_running", kind("legacy")): 1,
            ("workqueue_kind_max_running", kind("token_cleanup")): 3,
        }
        assert found[("workqueue_items", kind_status("legacy", "queued"))] == 0
