"""``workqueue`` as an operator runs it: a real process on a real PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import signal

import pytest
from e2e_support import (
    Spawner,
    cli_argv,
    eventually,
    run_cli,
    script_argv,
    work_items,
    worker_env,
)

from workqueue.entrypoints.worker.container import build_container
from workqueue.entrypoints.worker.settings import WorkerSettings

pytestmark = pytest.mark.e2e

SECRET = "e2e-pw-never-logged"
# The built-in periodic kinds, as the production container schedules them.
PERIODIC_KINDS = sorted(
    schedule.kind for schedule in build_container(WorkerSettings()).built_in_schedules()
)


async def test_both_periodic_kinds_succeed_once_even_with_a_second_worker_beside(
    database_url: str, spawn: Spawner
) -> None:
    env = worker_env(database_url)
    first = spawn(cli_argv("worker"), env)

    async def both_succeeded() -> bool:
        items = await work_items(database_url)
        return sorted((i["kind"], i["status"]) for i in items) == [
            (kind, "succeeded") for kind in PERIODIC_KINDS
        ]

    await eventually(
        both_succeeded, within=20, what="two succeeded periodic items", context=first.output
    )
    second = spawn(cli_argv("worker"), env)
    await second.wait_for_output("worker started")
    # Nothing should happen now, and only waiting shows that: 1.5 s is several poll
    # cycles (0.2 s) of both workers, in which neither finds a periodic kind due.
    await asyncio.sleep(1.5)

    assert await both_succeeded()
    status = run_cli(cli_argv("status", "--json"), env)
    assert status.returncode == 0, status.stderr
    counts = json.loads(status.stdout)["counts"]
    assert counts["token_cleanup"]["succeeded"] == 1
    assert counts["work_item_retention"]["succeeded"] == 1

    first.send(signal.SIGTERM)
    second.send(signal.SIGTERM)
    assert await first.exit_status() == 0, first.output()
    assert await second.exit_status() == 0, second.output()
    assert "worker shut down" in first.output()


async def test_sigterm_during_a_long_handler_releases_its_item_without_a_stall(
    database_url: str, spawn: Spawner
) -> None:
    env = worker_env(database_url)
    enqueued = run_cli(script_argv("enqueue", "e2e_nap", "--payload", '{"seconds": 60}'), env)
    assert enqueued.returncode == 0, enqueued.stderr
    worker = spawn(script_argv("worker"), env)

    async def napping() -> bool:
        items = await work_items(database_url)
        return (
            bool(items)
            and items[0]["status"] == "running"
            and items[0]["progress"] == {"napping": True}
        )

    await eventually(napping, within=15, what="a running nap with progress", context=worker.output)
    worker.send(signal.SIGTERM)

    assert await worker.exit_status(within=10) == 0, worker.output()
    (item,) = await work_items(database_url)
    assert (item["status"], item["stalls"], item["attempt"]) == ("queued", 0, 1)
    assert item["worker_id"] is None


async def test_a_second_signal_forces_the_exit_when_the_graceful_stop_is_stuck(
    database_url: str, spawn: Spawner
) -> None:
    env = worker_env(database_url)
    enqueued = run_cli(script_argv("enqueue", "e2e_stubborn"), env)
    assert enqueued.returncode == 0, enqueued.stderr
    worker = spawn(script_argv("worker"), env)

    async def running() -> bool:
        items = await work_items(database_url)
        return bool(items) and items[0]["status"] == "running"

    await eventually(running, within=15, what="a running stubborn item", context=worker.output)
    worker.send(signal.SIGTERM)
    await worker.wait_for_output("stopping gracefully")
    worker.send(signal.SIGTERM)

    assert await worker.exit_status(within=10) == 128 + signal.SIGTERM, worker.output()
    assert "exiting at once" in worker.output()


def test_a_worker_told_not_to_migrate_refuses_an_unmigrated_database(
    empty_database_url: str,
) -> None:
    run = run_cli(cli_argv("worker", "--no-migrate"), worker_env(empty_database_url))

    assert run.returncode == 1
    assert "workqueue: database is not migrated: run `workqueue migrate`" in run.stderr


def test_migrate_says_what_it_applied_and_then_that_it_is_up_to_date(
    empty_database_url: str,
) -> None:
    env = worker_env(empty_database_url)

    first = run_cli(cli_argv("migrate"), env)
    second = run_cli(cli_argv("migrate"), env)

    assert first.returncode == 0, first.stderr
    assert "0001_work_items" in first.stdout
    assert second.returncode == 0, second.stderr
    assert "already up to date" in second.stdout


def test_an_unreachable_database_is_one_line_and_exit_one_without_the_password() -> None:
    env = worker_env(f"postgresql://app:{SECRET}@127.0.0.1:1/queue", WORKQUEUE_CONNECT_ATTEMPTS="2")

    run = run_cli(cli_argv("worker"), env)

    assert run.returncode == 1
    (line,) = [line for line in run.stderr.splitlines() if line.startswith("workqueue: ")]
    assert line.startswith("workqueue: cannot reach the database postgresql://app:***@127.0.0.1:1")
    assert SECRET not in run.stderr


async def test_a_worker_of_five_lanes_runs_five_items_at_once_and_sigterm_releases_all(
    database_url: str, spawn: Spawner
) -> None:
    env = worker_env(database_url)
    for _ in range(6):
        enqueued = run_cli(script_argv("enqueue", "e2e_nap", "--payload", '{"seconds": 60}'), env)
        assert enqueued.returncode == 0, enqueued.stderr
    worker = spawn(script_argv("worker", "--concurrency", "5"), env)

    async def five_napping() -> bool:
        items = await work_items(database_url)
        napping = [i for i in items if i["status"] == "running" and i["progress"]]
        return len(napping) == 5

    await eventually(five_napping, within=15, what="five running naps", context=worker.output)
    items = await work_items(database_url)
    assert len({i["worker_id"] for i in items if i["status"] == "running"}) == 1
    assert "5 items at a time" in worker.output()
    worker.send(signal.SIGTERM)

    assert await worker.exit_status(within=10) == 0, worker.output()
    items = await work_items(database_url)
    assert [(i["status"], i["stalls"]) for i in items] == [("queued", 0)] * 6
    assert {i["attempt"] for i in items} <= {0, 1}
