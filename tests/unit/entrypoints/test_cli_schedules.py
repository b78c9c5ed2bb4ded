"""``workqueue schedules``: every periodic kind, how it is scheduled, its last run and its next."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from worker_world import WorkerWorld

from workqueue.domain import (
    InvalidScheduleError,
    RunOutcome,
    TokenCleanup,
    WorkItemRetention,
    WorkSchedule,
)
from workqueue.entrypoints.exit_status import ExitStatus, exit_status_for
from workqueue.entrypoints.schedule_report import render_schedules

LEASE = timedelta(seconds=60)
NIGHTLY = {"WORKQUEUE_RETENTION_CRON": "0 3 * * *", "WORKQUEUE_RETENTION_TIMEZONE": "Europe/Paris"}


@pytest.fixture
def nightly_retention(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in NIGHTLY.items():
        monkeypatch.setenv(name, value)


def test_a_fresh_database_lists_the_built_in_schedules_due_now(world: WorkerWorld) -> None:
    run = world.cli("schedules")

    assert (run.status, run.err) == (0, "")
    assert run.out == (
        "token_cleanup: every 86400 s\n"
        "  next run: now\n"
        "  last run: none\n"
        "work_item_retention: every 86400 s\n"
        "  next run: now\n"
        "  last run: none\n"
    )


@pytest.mark.usefixtures("nightly_retention")
def test_a_calendar_shows_its_last_fire_time_its_next_and_its_last_run(
    world: WorkerWorld,
) -> None:
    async def one_nightly_run() -> int:
        await world.clock.advance(2 * 3600)  # 03:00 in Paris, 2026-01-01
        schedule = WorkSchedule(WorkItemRetention(), cron="0 3 * * *", timezone="Europe/Paris")
        created = await world.queue.enqueue_if_due(schedule)
        assert created is not None
        item = await world.store.claim(["work_item_retention"], worker_id="w", lease_duration=LEASE)
        assert item is not None
        await world.clock.advance(5)
        assert await world.store.finish(item.lease, RunOutcome.succeeded(None))
        return created.id

    item_id = asyncio.run(one_nightly_run())

    run = world.cli("schedules")

    assert run.out.split("work_item_retention")[1] == (
        ": cron '0 3 * * *' in Europe/Paris, a fire time while one runs: skip\n"
        "  next run: 2026-01-02T02:00:00Z\n"
        "  last fire time: 2026-01-01T02:00:00Z\n"
        f"  last run: item {item_id}, succeeded, finished 2026-01-01T02:00:05Z\n"
    )


@pytest.mark.usefixtures("nightly_retention")
def test_the_json_document_has_every_field_of_each_schedule(world: WorkerWorld) -> None:
    async def a_cleanup_that_ran() -> int:
        result = await world.queue.enqueue(TokenCleanup(), dedup_key="periodic")
        item = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
        assert item is not None
        await world.clock.advance(10)
        assert await world.store.finish(item.lease, RunOutcome.failed("boom", None))
        return result.id

    item_id = asyncio.run(a_cleanup_that_ran())

    run = world.cli("schedules", "--json")

    assert json.loads(run.out) == {
        "schedules": [
            {
                "kind": "token_cleanup",
                "interval_seconds": 86400.0,
                "cron": None,
                "timezone": None,
                "overlap": None,
                "last_fire_at": None,
                "next_run_at": "2026-01-02T00:00:10Z",
                "last_item": {
                    "id": item_id,
                    "status": "failed",
                    "enqueued_at": "2026-01-01T00:00:00Z",
                    "finished_at": "2026-01-01T00:00:10Z",
                },
            },
            {
                "kind": "work_item_retention",
                "interval_seconds": None,
                "cron": "0 3 * * *",
                "timezone": "Europe/Paris",
                "overlap": "skip",
                "last_fire_at": None,
                "next_run_at": "2025-12-31T02:00:00Z",
                "last_item": None,
            },
        ]
    }


def test_an_interval_kind_whose_item_runs_is_next_due_after_it_finishes(
    world: WorkerWorld,
) -> None:
    async def running_cleanup() -> None:
        await world.queue.enqueue(TokenCleanup())
        assert await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)

    asyncio.run(running_cleanup())

    run = world.cli("schedules")

    assert run.out.startswith(
        "token_cleanup: every 86400 s\n"
        "  next run: an interval after its last item finishes\n"
        "  last run: item 1, running\n"
    )


def test_an_overdue_interval_kind_says_since_when(world: WorkerWorld) -> None:
    async def cleanup_two_days_ago() -> None:
        await world.queue.enqueue(TokenCleanup())
        item = await world.store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
        assert item is not None
        assert await world.store.finish(item.lease, RunOutcome.succeeded(None))
        await world.clock.advance(2 * 86400)

    asyncio.run(cleanup_two_days_ago())

    run = world.cli("schedules")

    assert "  next run: now (due since 2026-01-02T00:00:00Z)\n" in run.out


def test_no_periodic_kinds_say_so(world: WorkerWorld) -> None:
    assert render_schedules([], {}, world.clock.now()) == "no periodic kinds"


@pytest.mark.parametrize(
    ("setting", "value", "error"),
    [
        pytest.param(
            "WORKQUEUE_TOKEN_CLEANUP_CRON",
            "0 3 * *",
            "cron expression '0 3 * *' cannot be read: Wrong number of fields",
            id="a cron expression that cannot be read",
        ),
        pytest.param(
            "WORKQUEUE_RETENTION_TIMEZONE",
            "Europe/Atlantis",
            "unknown time zone 'Europe/Atlantis'",
            id="an unknown time zone",
        ),
    ],
)
def test_a_schedule_setting_that_is_wrong_is_one_line_naming_it_and_exit_two(
    world: WorkerWorld, monkeypatch: pytest.MonkeyPatch, setting: str, value: str, error: str
) -> None:
    monkeypatch.setenv(setting, value)

    run = world.cli("schedules")

    assert run.status == 2
    assert run.err == f"workqueue: invalid setting {setting}: {error}\n"


@pytest.mark.usefixtures("nightly_retention")
def test_a_calendar_with_no_turn_yet_says_so_and_is_due_since_its_newest_fire_time(
    world: WorkerWorld,
) -> None:
    run = world.cli("schedules")

    assert run.out.split("work_item_retention")[1] == (
        ": cron '0 3 * * *' in Europe/Paris, a fire time while one runs: skip\n"
        "  next run: now (due since 2025-12-31T02:00:00Z)\n"
        "  last fire time: none yet\n"
        "  last run: none\n"
    )


@pytest.mark.usefixtures("nightly_retention")
def test_the_json_document_gives_a_calendar_s_last_fire_time(world: WorkerWorld) -> None:
    schedule = WorkSchedule(WorkItemRetention(), cron="0 3 * * *", timezone="Europe/Paris")
    created = asyncio.run(world.queue.enqueue_if_due(schedule))
    assert created is not None

    retention = json.loads(world.cli("schedules", "--json").out)["schedules"][1]

    assert retention["last_fire_at"] == "2025-12-31T02:00:00Z"
    assert retention["next_run_at"] == "2026-01-01T02:00:00Z"
    assert retention["last_item"]["status"] == "queued"


def test_a_schedule_that_cannot_hold_is_a_usage_error() -> None:
    error = InvalidScheduleError("schedule of 'x': give exactly one of interval and cron")

    assert exit_status_for(error) is ExitStatus.USAGE
