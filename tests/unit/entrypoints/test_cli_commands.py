"""The ``workqueue`` command line, run in-process on the in-memory world: each command,
its help, streams, flags and exit statuses."""

from __future__ import annotations

import asyncio
import fcntl
import io
import json
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import uvloop
from dependency_injector import providers
from worker_world import PRODUCTION_KINDS, SECRET, WorkerWorld

from workqueue.adapters.memory import InMemoryRefreshTokenStore
from workqueue.adapters.postgres import SchemaNotCurrentError
from workqueue.domain import (
    MAX_DEDUP_KEY_LENGTH,
    InvalidDedupKeyError,
    InvalidPriorityError,
    InvalidRunAtError,
    RunOutcome,
    TokenCleanup,
    WorkItemRetention,
    WorkStatus,
)
from workqueue.entrypoints.cli import main
from workqueue.entrypoints.commands import enqueue_work, show_status
from workqueue.entrypoints.worker import schema as schema_module
from workqueue.entrypoints.worker.container import WorkerContainer, provide
from workqueue.entrypoints.worker.database import DatabaseTarget
from workqueue.entrypoints.worker.handlers import TokenCleanupHandler
from workqueue.entrypoints.worker.schema import PostgresSchema
from workqueue.entrypoints.worker.settings import WorkerSettings, load_settings

LEASE = timedelta(seconds=60)


def queued_items(world: WorkerWorld) -> list[tuple[str, dict[str, object], str | None]]:
    return [
        (item.kind, item.payload, item.dedup_key)
        for item in world.state.snapshot()
        if item.status is WorkStatus.QUEUED
    ]


class TestEnqueue:
    def test_a_valid_payload_is_enqueued_and_its_id_printed(self, world: WorkerWorld) -> None:
        run = world.cli("enqueue", "work_item_retention", "--payload", '{"retention_days": 7}')

        assert run.status == 0
        assert run.out == "created item 1 (work_item_retention)\n"
        assert queued_items(world) == [("work_item_retention", {"retention_days": 7.0}, None)]

    def test_the_payload_defaults_to_an_empty_object(self, world: WorkerWorld) -> None:
        run = world.cli("enqueue", "token_cleanup")

        assert run.status == 0
        assert queued_items(world) == [("token_cleanup", {}, None)]

    def test_a_second_enqueue_with_the_same_dedup_key_is_absorbed(self, world: WorkerWorld) -> None:
        first = world.cli("enqueue", "token_cleanup", "--dedup-key", "nightly")
        second = world.cli("enqueue", "token_cleanup", "--dedup-key", "nightly")

        assert first.out == "created item 1 (token_cleanup)\n"
        assert second.status == 0
        assert second.out == "absorbed by queued item 1 (token_cleanup, dedup key 'nightly')\n"
        assert queued_items(world) == [("token_cleanup", {}, "nightly")]

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (
                ["work_item_retention", "--payload", '{"retention_days": "soon"}'],
                "invalid payload for kind 'work_item_retention': retention_days:",
            ),
            (
                ["work_item_retention", "--payload", '{"keep": 1}'],
                "invalid payload for kind 'work_item_retention': keep: Extra inputs",
            ),
            (
                ["token_cleanup", "--payload", "{not json"],
                "invalid payload for kind 'token_cleanup': payload: Invalid JSON",
            ),
            (
                ["invoice_run"],
                f"unknown kind 'invoice_run' (known kinds: {', '.join(PRODUCTION_KINDS)})",
            ),
            (["token_cleanup", "--dedup-key", "  "], "dedup key must not be empty or blank"),
            (
                ["token_cleanup", "--dedup-key", "k" * (MAX_DEDUP_KEY_LENGTH + 1)],
                f"the limit is {MAX_DEDUP_KEY_LENGTH}",
            ),
            (["token_cleanup", "--priority", "101"], "priority must be from -100 to 100, not 101"),
            (
                ["token_cleanup", "--run-at", "2030-01-01T09:00"],
                "run_at must have a time zone, not the naive time 2030-01-01T09:00:00",
            ),
            (["token_cleanup", "--run-at", "soon"], "--run-at 'soon' is not an ISO 8601 time"),
            (["token_cleanup", "--delay=-1s"], "delay must not be negative, not -1 seconds"),
            (["token_cleanup", "--delay", "a while"], "--delay 'a while': expected a duration"),
        ],
    )
    def test_bad_input_is_one_line_on_stderr_exit_two_and_nothing_inserted(
        self, world: WorkerWorld, argv: list[str], message: str
    ) -> None:
        run = world.cli("enqueue", *argv)

        assert run.status == 2
        assert run.out == ""
        assert run.err.startswith("workqueue: ")
        assert message in run.err
        assert run.err.count("\n") == 1
        assert world.state.items == {}

    @pytest.mark.parametrize(
        ("argv", "priority", "run_at"),
        [
            ([], 0, datetime(2026, 1, 1, tzinfo=UTC)),
            (["--priority", "-100"], -100, datetime(2026, 1, 1, tzinfo=UTC)),
            (
                ["--priority", "100", "--delay", "90"],
                100,
                datetime(2026, 1, 1, 0, 1, 30, tzinfo=UTC),
            ),
            (["--delay", "PT2H"], 0, datetime(2026, 1, 1, 2, tzinfo=UTC)),
            (
                ["--run-at", "2026-01-02T10:00:00+01:00"],
                0,
                datetime(2026, 1, 2, 9, tzinfo=UTC),
            ),
            (["--run-at", "2026-01-02T09:00:00Z"], 0, datetime(2026, 1, 2, 9, tzinfo=UTC)),
        ],
    )
    def test_an_enqueue_takes_a_priority_and_a_run_at_or_a_delay(
        self, world: WorkerWorld, argv: list[str], priority: int, run_at: datetime
    ) -> None:
        run = world.cli("enqueue", "token_cleanup", *argv)

        assert (run.status, run.err) == (0, "")
        (item,) = world.state.snapshot()
        assert (item.priority, item.run_at) == (priority, run_at)

    def test_a_run_at_and_a_delay_together_are_a_usage_error(
        self, world: WorkerWorld, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = world.cli(
            "enqueue", "token_cleanup", "--run-at", "2026-01-02T09:00:00Z", "--delay", "5"
        )

        assert run.status == 2
        assert "argument --delay: not allowed with argument --run-at" in capsys.readouterr().err
        assert world.state.items == {}

    def test_an_unknown_kind_without_an_application_says_how_to_name_one(
        self, world: WorkerWorld
    ) -> None:
        run = world.cli("enqueue", "send_digest")

        assert (run.status, run.out) == (2, "")
        assert run.err == (
            f"workqueue: unknown kind 'send_digest' (known kinds: {', '.join(PRODUCTION_KINDS)}): "
            "not a built-in kind; if it is your application's, pass --app MODULE or set "
            "WORKQUEUE_APP\n"
        )

    def test_an_unmigrated_database_is_a_runtime_failure(self, world: WorkerWorld) -> None:
        world.schema.missing = ["0001_work_items"]

        run = world.cli("enqueue", "token_cleanup")

        assert run.status == 1
        assert "database is not migrated: run `workqueue migrate`" in run.err
        assert world.state.items == {}


class TestStatus:
    async def fill(self, world: WorkerWorld) -> dict[str, int]:
        queue, store = world.queue, world.store
        failed = (await queue.enqueue(TokenCleanup())).id
        claimed = await store.claim(["token_cleanup"], worker_id="w-old", lease_duration=LEASE)
        assert claimed is not None
        await store.finish(
            claimed.lease, RunOutcome.failed("RuntimeError: disk full\nTraceback...", None)
        )
        running = (await queue.enqueue(WorkItemRetention())).id
        claimed = await store.claim(["work_item_retention"], worker_id="w-1", lease_duration=LEASE)
        assert claimed is not None
        await world.clock.advance(3)
        await store.heartbeat(claimed.lease, progress={"deleted": 12}, lease_duration=LEASE)
        await world.clock.advance(4.5)
        queued = (await queue.enqueue(TokenCleanup(), dedup_key="periodic")).id
        return {"failed": failed, "running": running, "queued": queued}

    def test_the_text_shows_counts_live_items_and_recent_failures(self, world: WorkerWorld) -> None:
        ids = asyncio.run(self.fill(world))

        run = world.cli("status")

        assert run.status == 0
        lines = run.out.splitlines()
        assert lines[0] == "database: postgresql://wq:***@db.example:5432/queue"
        assert lines[2].split() == ["kind", "queued", "running", "succeeded", "failed", "cancelled"]
        assert lines[3].split() == ["token_cleanup", "1", "0", "0", "1", "0"]
        assert lines[4].split() == ["work_item_retention", "0", "1", "0", "0", "0"]
        assert "queued and running: 2" in lines
        assert (
            f"  #{ids['running']} work_item_retention running attempt=1 stalls=0 "
            'worker=w-1 heartbeat=4.5s ago progress={"deleted":12}'
        ) in lines
        assert f"  #{ids['queued']} token_cleanup queued attempt=0 stalls=0" in lines
        assert "failed or cancelled: 1" in lines
        assert any(
            line.startswith(f"  #{ids['failed']} token_cleanup failed attempt=1")
            and line.endswith("error: RuntimeError: disk full")
            for line in lines
        )
        assert SECRET not in run.out

    def test_json_carries_the_same_facts_for_scripts(self, world: WorkerWorld) -> None:
        ids = asyncio.run(self.fill(world))

        run = world.cli("status", "--json")

        assert run.status == 0
        document = json.loads(run.out)
        assert document["database"] == "postgresql://wq:***@db.example:5432/queue"
        assert document["counts"]["token_cleanup"] == {
            "queued": 1,
            "running": 0,
            "succeeded": 0,
            "failed": 1,
            "cancelled": 0,
        }
        running = next(item for item in document["active"] if item["id"] == ids["running"])
        assert running["heartbeat_age_seconds"] == 4.5
        assert running["worker_id"] == "w-1"
        assert running["progress"] == {"deleted": 12}
        (failure,) = document["recent_failures"]
        assert failure["id"] == ids["failed"]
        assert failure["error"].startswith("RuntimeError: disk full")

    def test_an_empty_queue_still_lists_every_kind(self, world: WorkerWorld) -> None:
        run = world.cli("status")

        assert run.status == 0
        assert "queued and running: 0" in run.out
        empty = ["token_cleanup", "0", "0", "0", "0", "0"]
        assert any(line.split() == empty for line in run.out.splitlines())

    def test_the_failure_list_is_bounded_newest_first(self, world: WorkerWorld) -> None:
        async def fail_many() -> list[int]:
            ids = []
            for _ in range(12):
                ids.append((await world.queue.enqueue(TokenCleanup())).id)
                claimed = await world.store.claim(
                    ["token_cleanup"], worker_id="w", lease_duration=LEASE
                )
                assert claimed is not None
                await world.store.finish(claimed.lease, RunOutcome.failed("no", None))
            return ids

        ids = asyncio.run(fail_many())

        document = json.loads(world.cli("status", "--json").out)
        assert document["failed_total"] == 12
        assert [item["id"] for item in document["recent_failures"]] == ids[::-1][:10]

    def test_status_writes_nothing(self, world: WorkerWorld) -> None:
        asyncio.run(self.fill(world))
        before = world.state.snapshot()

        world.cli("status")

        assert world.state.snapshot() == before


class TestMigrate:
    def test_it_says_which_migrations_it_applied_then_that_none_is_pending(
        self, world: WorkerWorld
    ) -> None:
        world.schema.missing = ["0001_work_items", "0002_refresh_tokens"]

        first = world.cli("migrate")
        second = world.cli("migrate")

        assert first.status == 0
        assert first.out.splitlines() == [
            "applied 2 migration(s) to postgresql://wq:***@db.example:5432/queue:",
            "  0001_work_items",
            "  0002_refresh_tokens",
        ]
        assert second.out == "postgresql://wq:***@db.example:5432/queue is already up to date\n"


class TestUsageAndStartup:
    def test_bad_settings_are_one_line_and_exit_two(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_HEARTBEAT_INTERVAL", "60")

        run = world.cli("status")

        assert run.status == 2
        assert run.err == (
            "workqueue: invalid setting WORKQUEUE_HEARTBEAT_INTERVAL: "
            "must be less than WORKQUEUE_LEASE_DURATION (60.0)\n"
        )

    def test_a_password_in_a_bad_database_url_is_not_echoed(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_DATABASE_URL", f"postgresql://u:{SECRET}@host:99999999/db")

        run = world.cli("status")

        assert run.status == 2
        assert "WORKQUEUE_DATABASE_URL" in run.err
        assert SECRET not in run.err

    @pytest.mark.parametrize(
        "argv", [[], ["launch"], ["worker", "--log-format", "xml"], ["enqueue"]]
    )
    def test_bad_usage_exits_two(self, world: WorkerWorld, argv: list[str]) -> None:
        run = world.cli(*argv)

        assert run.status == 2

    def test_a_worker_with_a_missing_handler_stops_with_the_registry_message(
        self, world: WorkerWorld
    ) -> None:
        def without_retention(settings: WorkerSettings) -> WorkerContainer:
            container = world.container(settings)
            container.handlers.override(
                providers.List(
                    providers.Object(
                        TokenCleanupHandler(InMemoryRefreshTokenStore(world.state), world.clock)
                    )
                )
            )
            return container

        run = world.cli("worker", container_factory=without_retention)

        assert run.status == 1
        assert run.err.startswith("workqueue: cannot build the kind registry for WorkKind")
        assert "kind 'work_item_retention' has no handler" in run.err
        assert run.err.count("\n") == 1

    def test_a_worker_on_an_unmigrated_database_with_no_migrate_says_what_to_do(
        self, world: WorkerWorld
    ) -> None:
        world.schema.missing = ["0001_work_items"]

        run = world.cli("worker", "--no-migrate")

        assert run.status == 1
        assert run.err.startswith("workqueue: database is not migrated: run `workqueue migrate`")


HELP = {
    (): """\
usage: workqueue [-h] [--version] COMMAND ...

A durable work queue on PostgreSQL. Settings come from WORKQUEUE_* environment
variables; with WORKQUEUE_DATABASE_URL unset an embedded PostgreSQL is
started.

positional arguments:
  COMMAND
    worker    run a worker until SIGTERM or SIGINT (twice forces exit)
    migrate   apply pending migrations and say which
    status    show counts, live items and recent failures
    show      show item ID in full: its result and every failure included
    schedules
              list the periodic kinds, each with its last and next run
    enqueue   enqueue one item of KIND
    cancel    cancel item ID (queued at once, running through its worker), or
              KIND's queued items
    requeue   enqueue failed or cancelled item ID again as a new item, or
              KIND's failed items
    pause     claim no item of KIND until it is resumed
    resume    resume KIND: workers claim its items again
    cap       at most N items of KIND run at once across every worker
    web       serve the admin page, its JSON API, /metrics, /healthz

options:
  -h, --help  show this help message and exit
  --version   show program's version number and exit
""",
    ("worker",): """\
usage: workqueue worker [-h] [--no-migrate] [--log-format {text,json}]
                        [--concurrency N] [--kinds KIND,...]
                        [--app MODULE[:ATTRIBUTE]]

options:
  -h, --help            show this help message and exit
  --no-migrate          do not apply pending migrations; refuse to start if
                        any is pending
  --log-format {text,json}
                        log line format (default: WORKQUEUE_LOG_FORMAT, else
                        text)
  --concurrency N       run N items at a time in this process (default:
                        WORKQUEUE_CONCURRENCY, else 1)
  --kinds KIND,...      claim and schedule only these kinds (default:
                        WORKQUEUE_KINDS, else all)
  --app MODULE[:ATTRIBUTE]
                        the application (a WorkQueueApp) whose kinds join the
                        built-in ones (default: WORKQUEUE_APP)
""",
    ("migrate",): """\
usage: workqueue migrate [-h]

options:
  -h, --help  show this help message and exit
""",
    ("status",): """\
usage: workqueue status [-h] [--json] [--app MODULE[:ATTRIBUTE]]

options:
  -h, --help            show this help message and exit
  --json                print one JSON document
  --app MODULE[:ATTRIBUTE]
                        the application (a WorkQueueApp) whose kinds join the
                        built-in ones (default: WORKQUEUE_APP)
""",
    ("schedules",): """\
usage: workqueue schedules [-h] [--json] [--app MODULE[:ATTRIBUTE]]

options:
  -h, --help            show this help message and exit
  --json                print one JSON document
  --app MODULE[:ATTRIBUTE]
                        the application (a WorkQueueApp) whose kinds join the
                        built-in ones (default: WORKQUEUE_APP)
""",
    ("show",): """\
usage: workqueue show [-h] [--json] ID

positional arguments:
  ID          the item's id

options:
  -h, --help  show this help message and exit
  --json      print one JSON document
""",
    ("cancel",): """\
usage: workqueue cancel [-h] [--reason TEXT] [--kind KIND] [--queued] [--yes]
                        [ID]

positional arguments:
  ID             the item's id

options:
  -h, --help     show this help message and exit
  --reason TEXT  stored as the item's error (default: 'cancelled by an
                 operator')
  --kind KIND    act on items of KIND instead of item ID (with --queued)
  --queued       with --kind: cancel its queued items, delayed ones too
  --yes          with --kind: act without asking first
""",
    ("requeue",): """\
usage: workqueue requeue [-h] [--kind KIND] [--failed] [--yes]
                         [--app MODULE[:ATTRIBUTE]]
                         [ID]

positional arguments:
  ID                    the item's id

options:
  -h, --help            show this help message and exit
  --kind KIND           act on items of KIND instead of item ID (with
                        --failed)
  --failed              with --kind: requeue its failed items no bulk requeue
                        took yet
  --yes                 with --kind: act without asking first
  --app MODULE[:ATTRIBUTE]
                        the application (a WorkQueueApp) whose kinds join the
                        built-in ones (default: WORKQUEUE_APP)
""",
    ("pause",): """\
usage: workqueue pause [-h] [--reason TEXT] [--app MODULE[:ATTRIBUTE]] KIND

positional arguments:
  KIND                  the kind, e.g. token_cleanup

options:
  -h, --help            show this help message and exit
  --reason TEXT         why, shown with the pause
  --app MODULE[:ATTRIBUTE]
                        the application (a WorkQueueApp) whose kinds join the
                        built-in ones (default: WORKQUEUE_APP)
""",
    ("resume",): """\
usage: workqueue resume [-h] KIND

positional arguments:
  KIND        the kind

options:
  -h, --help  show this help message and exit
""",
    ("cap",): """\
usage: workqueue cap [-h] [--app MODULE[:ATTRIBUTE]] KIND N

positional arguments:
  KIND                  the kind, e.g. token_cleanup
  N                     from 1 to 10000, or none to clear the cap

options:
  -h, --help            show this help message and exit
  --app MODULE[:ATTRIBUTE]
                        the application (a WorkQueueApp) whose kinds join the
                        built-in ones (default: WORKQUEUE_APP)
""",
    ("enqueue",): """\
usage: workqueue enqueue [-h] [--payload JSON | --payload-file PATH]
                         [--dedup-key KEY] [--priority P]
                         [--run-at TIME | --delay DURATION]
                         [--app MODULE[:ATTRIBUTE]]
                         KIND

positional arguments:
  KIND                  the kind, e.g. token_cleanup

options:
  -h, --help            show this help message and exit
  --payload JSON        the payload as JSON (default: {})
  --payload-file PATH   read the payload's JSON from PATH (- for standard
                        input)
  --dedup-key KEY       absorb this enqueue into a queued item of KIND with
                        the same key
  --priority P          from -100 to 100, larger runs sooner (default: 0)
  --run-at TIME         not before TIME, ISO 8601 with its time zone (e.g.
                        2026-12-24T18:00:00+01:00)
  --delay DURATION      not before DURATION from now (e.g. 90, 30s, 5m, 2h,
                        1d)
  --app MODULE[:ATTRIBUTE]
                        the application (a WorkQueueApp) whose kinds join the
                        built-in ones (default: WORKQUEUE_APP)
""",
    ("web",): """\
usage: workqueue web [-h] [--host HOST] [--port PORT]
                     [--app MODULE[:ATTRIBUTE]]

options:
  -h, --help            show this help message and exit
  --host HOST           address to listen on (default: WORKQUEUE_WEB_HOST,
                        else 127.0.0.1)
  --port PORT           port to listen on (default: WORKQUEUE_WEB_PORT, else
                        8080)
  --app MODULE[:ATTRIBUTE]
                        the application (a WorkQueueApp) whose kinds join the
                        built-in ones (default: WORKQUEUE_APP)
""",
}


class StoppedWorker:
    """A worker that has nothing to do: its run returns at once."""

    def __init__(self) -> None:
        self.ran = False

    @property
    def stopping(self) -> bool:
        return True

    async def run(self) -> None:
        self.ran = True

    def stop(self) -> None:
        return None


class ClosableDatabase:
    def __init__(self, target: DatabaseTarget) -> None:
        self.target = target
        self.closed = False

    async def open(self) -> AsyncIterator[DatabaseTarget]:
        try:
            yield self.target
        finally:
            self.closed = True


def with_a_stopped_worker(world: WorkerWorld, worker: StoppedWorker) -> Any:
    def factory(settings: WorkerSettings) -> WorkerContainer:
        container = world.container(settings)
        container.worker.override(providers.Object(worker))
        return container

    return factory


@pytest.mark.parametrize("command", list(HELP), ids=lambda command: " ".join(command) or "main")
def test_the_help_of_every_command_reads_as_documented(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")

    status = main([*command, "--help"])

    assert status == 0
    assert capsys.readouterr().out == HELP[command]


def test_bad_usage_prints_the_usage_on_stderr_and_exits_two(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["status", "--verbose"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("usage: workqueue [-h] [--version] COMMAND ...\n")


def test_the_log_format_flag_makes_every_log_line_json(
    world: WorkerWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    worker = StoppedWorker()

    status = main(
        ["worker", "--log-format", "json"], container_factory=with_a_stopped_worker(world, worker)
    )

    assert (status, worker.ran) == (0, True)
    lines = capsys.readouterr().err.splitlines()
    documents = [json.loads(line) for line in lines]
    assert [document["message"] for document in documents] == ["worker started", "worker shut down"]


def test_the_log_format_and_level_come_from_the_environment_without_the_flag(
    world: WorkerWorld, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKQUEUE_LOG_FORMAT", "json")
    monkeypatch.setenv("WORKQUEUE_LOG_LEVEL", "WARNING")

    status = main(["worker"], container_factory=with_a_stopped_worker(world, StoppedWorker()))

    assert status == 0
    assert logging.getLogger().level == logging.WARNING
    assert capsys.readouterr().err == ""
    logging.getLogger("workqueue.test").warning("after the run")
    assert json.loads(capsys.readouterr().err)["message"] == "after the run"


def test_without_any_format_setting_log_lines_are_text(
    world: WorkerWorld, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKQUEUE_WORKER_ID", "test-worker")
    main(["worker"], container_factory=with_a_stopped_worker(world, StoppedWorker()))

    lines = capsys.readouterr().err.splitlines()
    assert [line.split(" ", 2)[1:] for line in lines] == [
        [
            "INFO",
            "workqueue.cli.worker: worker started worker_id=test-worker "
            'kinds=["token_cleanup","work_item_retention"] '
            "database=postgresql://wq:***@db.example:5432/queue",
        ],
        ["INFO", "workqueue.cli.worker: worker shut down"],
    ]


def test_a_worker_applies_pending_migrations_unless_told_not_to(world: WorkerWorld) -> None:
    world.schema.missing = ["0001_work_items"]
    told_not_to = world.cli(
        "worker", "--no-migrate", container_factory=with_a_stopped_worker(world, StoppedWorker())
    )
    assert (told_not_to.status, world.schema.missing) == (1, ["0001_work_items"])

    default = world.cli("worker", container_factory=with_a_stopped_worker(world, StoppedWorker()))

    assert (default.status, world.schema.missing) == (0, [])


def test_migrate_on_start_off_in_the_environment_also_refuses_an_unmigrated_database(
    world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKQUEUE_MIGRATE_ON_START", "false")
    world.schema.missing = ["0001_work_items"]

    run = world.cli("worker", container_factory=with_a_stopped_worker(world, StoppedWorker()))

    assert (run.status, world.schema.missing) == (1, ["0001_work_items"])


def test_the_container_is_built_from_the_settings_read_from_the_environment(
    world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKQUEUE_WORKER_ID", "from-the-environment")
    given: list[WorkerSettings] = []

    def factory(settings: WorkerSettings) -> WorkerContainer:
        given.append(settings)
        return world.container(settings)

    world.cli("status", container_factory=factory)

    assert [settings.worker_id for settings in given] == ["from-the-environment"]


def test_a_short_command_closes_the_resources_it_opened(
    world: WorkerWorld, caplog: pytest.LogCaptureFixture
) -> None:
    database = ClosableDatabase(world.database)

    def factory(settings: WorkerSettings) -> WorkerContainer:
        container = world.container(settings)
        container.database.override(providers.Resource(database.open))
        return container

    run = world.cli("status", container_factory=factory)

    assert run.status == 0
    assert database.closed
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_output_and_errors_go_to_stdout_and_stderr_by_default(
    world: WorkerWorld, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["migrate"], container_factory=world.container) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "postgresql://wq:***@db.example:5432/queue is already up to date\n",
        "",
    )

    monkeypatch.setenv("WORKQUEUE_POOL_MIN_SIZE", "0")
    assert main(["migrate"], container_factory=world.container) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "",
        "workqueue: invalid setting WORKQUEUE_POOL_MIN_SIZE: must be at least 1\n",
    )


# Bounds the wait for a stop signal that never stops anything, so a broken run fails
# instead of hanging (the signal is ignored then, see `signal_ignored`).
SAFETY_NET = 10.0


class SignallingSchema:
    """A schema whose migration sends ``signum`` to this process, then waits to be cancelled."""

    def __init__(self, signum: signal.Signals) -> None:
        self.signum = signum

    async def apply_pending(self) -> list[str]:
        signal.raise_signal(self.signum)
        await asyncio.sleep(SAFETY_NET)
        raise AssertionError(f"{self.signum.name} did not interrupt the start-up")

    async def check_current(self) -> None:
        return None


class SignalledWorker(StoppedWorker):
    """A worker that, once running, sends ``signum`` to this process and runs until stopped."""

    def __init__(self, signum: signal.Signals) -> None:
        super().__init__()
        self.signum = signum
        self.stopped = asyncio.Event()

    async def run(self) -> None:
        self.ran = True
        signal.raise_signal(self.signum)
        async with asyncio.timeout(SAFETY_NET):
            await self.stopped.wait()

    def stop(self) -> None:
        self.stopped.set()


@pytest.fixture(params=[signal.SIGINT, signal.SIGTERM], ids=lambda signum: signum.name)
def stop_signal(request: pytest.FixtureRequest) -> Iterator[signal.Signals]:
    """SIGINT or SIGTERM, ignored by this process unless the worker's run handles it."""
    signum: signal.Signals = request.param
    previous = signal.signal(signum, signal.SIG_IGN)
    try:
        yield signum
    finally:
        signal.signal(signum, previous)


class TestAWorkerStopSignal:
    def test_during_start_up_is_an_interruption_with_128_plus_the_signal(
        self, world: WorkerWorld, stop_signal: signal.Signals
    ) -> None:
        worker = StoppedWorker()

        def factory(settings: WorkerSettings) -> WorkerContainer:
            container: WorkerContainer = with_a_stopped_worker(world, worker)(settings)
            container.schema.override(providers.Object(SignallingSchema(stop_signal)))
            return container

        run = world.cli("worker", container_factory=factory)

        expected = {signal.SIGINT: 130, signal.SIGTERM: 143}[stop_signal]
        assert (run.status, run.out, run.err) == (expected, "", "workqueue: interrupted\n")
        assert not worker.ran

    def test_after_start_up_is_a_clean_stop_with_status_zero(
        self, world: WorkerWorld, stop_signal: signal.Signals
    ) -> None:
        worker = SignalledWorker(stop_signal)

        run = world.cli("worker", container_factory=with_a_stopped_worker(world, worker))

        assert (run.status, run.out, run.err) == (0, "", "")
        assert (worker.ran, worker.stopped.is_set()) == (True, True)


class TestFailures:
    def test_an_interrupted_command_says_so_and_exits_130(self, world: WorkerWorld) -> None:
        def interrupted(settings: WorkerSettings) -> WorkerContainer:
            raise KeyboardInterrupt

        run = world.cli("status", container_factory=interrupted)

        assert (run.status, run.out, run.err) == (130, "", "workqueue: interrupted\n")

    def test_an_unexpected_error_is_logged_with_its_traceback_and_exits_one(
        self, world: WorkerWorld, caplog: pytest.LogCaptureFixture
    ) -> None:
        def broken(settings: WorkerSettings) -> WorkerContainer:
            raise RuntimeError("boom")

        run = world.cli("status", container_factory=broken)

        assert (run.status, run.err) == (1, "workqueue: boom\n")
        (record,) = [r for r in caplog.records if r.name == "workqueue.cli"]
        assert (record.levelname, record.getMessage()) == ("ERROR", "unexpected error in status")
        assert record.exc_info is not None
        assert isinstance(record.exc_info[1], RuntimeError)

    def test_an_error_without_a_message_is_named_by_its_type(self, world: WorkerWorld) -> None:
        def broken(settings: WorkerSettings) -> WorkerContainer:
            raise RuntimeError

        run = world.cli("status", container_factory=broken)

        assert (run.status, run.err) == (1, "workqueue: RuntimeError\n")


class FakeStdout(io.StringIO):
    """A stdout with a file descriptor number, as the real one has."""

    def fileno(self) -> int:
        return 101


class TestBrokenPipes:
    @staticmethod
    def gone(settings: WorkerSettings) -> WorkerContainer:
        raise BrokenPipeError

    def test_a_reader_that_went_away_is_not_an_error_and_stdout_is_pointed_at_devnull(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        redirected: list[tuple[int, int]] = []
        monkeypatch.setattr(sys, "stdout", FakeStdout())
        monkeypatch.setattr(os, "dup2", lambda fd, fd2: redirected.append((fd, fd2)))

        status = main(["status"], container_factory=self.gone, err=io.StringIO())

        assert status == 0
        ((devnull, target),) = redirected
        try:
            assert target == 101
            assert os.path.samefile(f"/proc/self/fd/{devnull}", os.devnull)
            assert fcntl.fcntl(devnull, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY
        finally:
            os.close(devnull)

    def test_output_to_a_stream_of_the_callers_is_left_alone(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        redirected: list[tuple[int, int]] = []
        monkeypatch.setattr(os, "dup2", lambda fd, fd2: redirected.append((fd, fd2)))

        status = main(["status"], container_factory=self.gone, out=io.StringIO())

        assert (status, redirected) == (0, [])


class LoopRecordingWorker(StoppedWorker):
    """A stopped worker that notes which event loop ran it."""

    loop_type: type | None = None

    async def run(self) -> None:
        self.loop_type = type(asyncio.get_running_loop())
        await super().run()


def test_the_worker_runs_on_uvloop(world: WorkerWorld) -> None:
    worker = LoopRecordingWorker()

    status = main(["worker"], container_factory=with_a_stopped_worker(world, worker))

    assert status == 0
    assert worker.loop_type is uvloop.Loop


def test_without_the_uvloop_extra_the_worker_runs_on_the_default_loop(
    world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    worker = LoopRecordingWorker()

    status = main(["worker"], container_factory=with_a_stopped_worker(world, worker))

    assert status == 0
    assert worker.loop_type is not uvloop.Loop
    assert issubclass(worker.loop_type, asyncio.BaseEventLoop)


def test_the_short_commands_run_on_the_default_event_loop(
    world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_types: list[type] = []

    async def show_status(*args: object, **kwargs: object) -> None:
        loop_types.append(type(asyncio.get_running_loop()))

    monkeypatch.setattr("workqueue.entrypoints.cli.show_status", show_status)

    assert world.cli("status").status == 0
    assert len(loop_types) == 1
    assert not issubclass(loop_types[0], uvloop.Loop)
    assert issubclass(loop_types[0], asyncio.BaseEventLoop)


async def test_an_enqueue_without_a_payload_sends_an_empty_one(world: WorkerWorld) -> None:
    result = await enqueue_work(world.container(), io.StringIO(), kind="token_cleanup")

    item = await world.store.get(result.id)
    assert item is not None
    assert item.payload == {}


async def test_a_bad_dedup_key_is_refused_before_the_database_is_asked_anything(
    world: WorkerWorld,
) -> None:
    world.schema.missing = ["0001_work_items"]

    with pytest.raises(InvalidDedupKeyError):
        await enqueue_work(world.container(), io.StringIO(), kind="token_cleanup", dedup_key=" ")


@pytest.mark.parametrize(
    ("timing", "error"),
    [
        ({"priority": -101}, InvalidPriorityError),
        ({"run_at": datetime(2026, 1, 2)}, InvalidRunAtError),
        ({"delay": timedelta(seconds=-1)}, InvalidRunAtError),
    ],
)
async def test_a_bad_priority_or_time_is_refused_before_the_database_is_asked_anything(
    world: WorkerWorld, timing: dict[str, Any], error: type[Exception]
) -> None:
    world.schema.missing = ["0001_work_items"]

    with pytest.raises(error):
        await enqueue_work(world.container(), io.StringIO(), kind="token_cleanup", **timing)


async def test_status_is_text_unless_json_is_asked_for(world: WorkerWorld) -> None:
    text, document = io.StringIO(), io.StringIO()

    await show_status(world.container(), text)
    await show_status(world.container(), document, as_json=True)

    assert text.getvalue().startswith("database: postgresql://wq:***@db.example:5432/queue\n")
    assert json.loads(document.getvalue())["active_total"] == 0


class TestPostgresSchema:
    """The schema port over the adapter's migration functions, which are scripted here."""

    async def test_applying_returns_the_names_the_migrations_applied(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        pool = object()
        given: list[Any] = []

        async def migrate(target: Any) -> list[str]:
            given.append(target)
            return ["0003_more"]

        monkeypatch.setattr(schema_module, "migrate", migrate)

        assert await PostgresSchema(pool).apply_pending() == ["0003_more"]  # type: ignore[arg-type]
        assert given == [pool]

    async def test_a_current_schema_passes_the_check(self, monkeypatch: pytest.MonkeyPatch) -> None:
        pool = object()
        checked: list[Any] = []

        async def current(target: Any) -> None:
            checked.append(target)

        monkeypatch.setattr(schema_module, "check_schema_current", current)

        await PostgresSchema(pool).check_current()  # type: ignore[arg-type]

        assert checked == [pool]

    async def test_a_schema_that_is_not_current_is_reported_as_the_adapters_one_error(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        not_current = SchemaNotCurrentError(["0002_refresh_tokens"], [])

        async def check(target: Any) -> None:
            raise not_current

        monkeypatch.setattr(schema_module, "check_schema_current", check)

        with pytest.raises(SchemaNotCurrentError) as refused:
            await PostgresSchema(object()).check_current()  # type: ignore[arg-type]

        assert refused.value is not_current
        assert str(refused.value) == (
            "database is not migrated: run `workqueue migrate` (missing: 0002_refresh_tokens)"
        )


class TestTheConcurrencyFlag:
    def test_concurrency_n_gives_the_worker_n_executors_with_the_one_worker_id(
        self, world: WorkerWorld
    ) -> None:
        three = world.container(load_settings(concurrency="3", worker_id="test-worker"))

        executors = asyncio.run(provide(three.executors))
        worker = asyncio.run(provide(three.worker))

        assert len({id(executor) for executor in executors}) == 3
        assert {executor.worker_id for executor in executors} == {"test-worker"}
        assert (worker.concurrency, asyncio.run(provide(three.executor))) == (3, executors[0])

    def test_by_default_the_worker_runs_one_item_at_a_time(self, world: WorkerWorld) -> None:
        container = world.container()

        assert len(asyncio.run(provide(container.executors))) == 1
        assert asyncio.run(provide(container.worker)).concurrency == 1

    def test_the_flag_wins_over_the_environment(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_CONCURRENCY", "2")
        seen: list[int] = []

        def factory(settings: WorkerSettings) -> WorkerContainer:
            seen.append(settings.concurrency)
            return with_a_stopped_worker(world, StoppedWorker())(settings)

        assert world.cli("worker", "--concurrency", "5", container_factory=factory).status == 0
        assert world.cli("worker", container_factory=factory).status == 0
        assert seen == [5, 2]

    def test_a_concurrency_of_zero_is_refused_in_one_line_naming_the_setting(
        self, world: WorkerWorld
    ) -> None:
        run = world.cli("worker", "--concurrency", "0")

        assert run.status == 2
        assert run.err == "workqueue: invalid setting WORKQUEUE_CONCURRENCY: must be at least 1\n"
