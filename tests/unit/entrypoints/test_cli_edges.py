"""The command line at its edges: its help, its streams, its flags and its exit statuses."""

from __future__ import annotations

import asyncio
import fcntl
import io
import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvloop
from dependency_injector import providers
from worker_world import WorkerWorld

from entrypoints.cli import main
from entrypoints.worker.container import WorkerContainer
from entrypoints.worker.database import DatabaseTarget
from entrypoints.worker.settings import WorkerSettings

HELP = {
    (): """\
usage: workqueue [-h] COMMAND ...

A durable work queue on PostgreSQL. Settings come from WORKQUEUE_* environment
variables; with WORKQUEUE_DATABASE_URL unset an embedded PostgreSQL is
started.

positional arguments:
  COMMAND
    worker    run a worker until SIGTERM or SIGINT (twice forces exit)
    migrate   apply pending migrations and say which
    status    show counts, live items and recent failures
    enqueue   enqueue one item of KIND
    web       serve the read-only admin page, its JSON API, /metrics, /healthz

options:
  -h, --help  show this help message and exit
""",
    ("worker",): """\
usage: workqueue worker [-h] [--no-migrate] [--log-format {text,json}]

options:
  -h, --help            show this help message and exit
  --no-migrate          do not apply pending migrations; refuse to start if
                        any is pending
  --log-format {text,json}
                        log line format (default: WORKQUEUE_LOG_FORMAT, else
                        text)
""",
    ("migrate",): """\
usage: workqueue migrate [-h]

options:
  -h, --help  show this help message and exit
""",
    ("status",): """\
usage: workqueue status [-h] [--json]

options:
  -h, --help  show this help message and exit
  --json      print one JSON document
""",
    ("enqueue",): """\
usage: workqueue enqueue [-h] [--payload JSON] [--dedup-key KEY] KIND

positional arguments:
  KIND             the kind, e.g. token_cleanup

options:
  -h, --help       show this help message and exit
  --payload JSON   the payload as JSON (default: {})
  --dedup-key KEY  absorb this enqueue into a queued item of KIND with the
                   same key
""",
    ("web",): """\
usage: workqueue web [-h] [--host HOST] [--port PORT]

options:
  -h, --help   show this help message and exit
  --host HOST  address to listen on (default: WORKQUEUE_WEB_HOST, else
               127.0.0.1)
  --port PORT  port to listen on (default: WORKQUEUE_WEB_PORT, else 8080)
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
    assert captured.err.startswith("usage: workqueue [-h] COMMAND ...\n")


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


def test_the_short_commands_run_on_the_default_event_loop(
    world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_types: list[type] = []

    async def show_status(*args: object, **kwargs: object) -> None:
        loop_types.append(type(asyncio.get_running_loop()))

    monkeypatch.setattr("entrypoints.cli.show_status", show_status)

    assert world.cli("status").status == 0
    assert len(loop_types) == 1
    assert not issubclass(loop_types[0], uvloop.Loop)
    assert issubclass(loop_types[0], asyncio.BaseEventLoop)
