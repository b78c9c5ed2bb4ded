"""A worker process runs Django's tasks: ``workqueue worker --app workqueue.django``.

The test process enqueues with the framework's own calls (``task.enqueue``) on a
real Django and PostgreSQL; the stock worker command, started for real with the
test project's settings (``DJANGO_SETTINGS_MODULE``), runs them: sync tasks in a
thread while the loop keeps heartbeating, async ones on the loop, a failing
task retried by its queue's policy, a deferred one not before its time, the
higher priority first. Each result is read back with ``get_result``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from e2e_support import Spawner, WorkerProcess, cli_argv, worker_env

from integration.django_tasks_site import HERE, tasks_project
from workqueue.entrypoints.django.tasks_api import TaskResult, TaskResultStatus

__all__ = ["tasks_project"]

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.usefixtures("tasks_project")]

WITHIN = 30.0


def django_database_url() -> str:
    values = connections["default"].settings_dict
    host = values["HOST"] or "127.0.0.1"
    return f"postgresql://{values['USER']}@{host}:{values['PORT'] or 5432}/{values['NAME']}"


@pytest.fixture
def start_worker(spawn: Spawner) -> Iterator[Callable[..., WorkerProcess]]:
    """Starts ``workqueue worker --app workqueue.django`` on Django's database."""

    def start(*args: str, **settings: str) -> WorkerProcess:
        python_path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
        env = worker_env(
            django_database_url(),
            DJANGO_SETTINGS_MODULE="django_tasks_app.settings",
            PYTHONPATH=python_path,
            **settings,
        )
        return spawn(cli_argv("worker", "--app", "workqueue.django", *args), env, cwd=HERE)

    return start


def finished(result: TaskResult[Any], worker: WorkerProcess) -> TaskResult[Any]:
    """``result`` once its task has finished, read back, waiting on the wall clock."""
    deadline = time.monotonic() + WITHIN
    while True:
        result.refresh()
        if result.is_finished:
            return result
        assert worker.process.poll() is None, f"the worker exited:\n{worker.output()}"
        assert time.monotonic() < deadline, f"{result.id} is {result.status}:\n{worker.output()}"
        time.sleep(0.1)


def heartbeats(item_id: str) -> Any:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT heartbeat_at FROM work_items WHERE id = %s", [int(item_id)])
        return cursor.fetchone()[0]


def test_a_worker_runs_sync_async_context_failing_deferred_and_prioritised_tasks(
    start_worker: Callable[..., WorkerProcess],
) -> None:
    from django_tasks_app import tasks

    added = tasks.add.enqueue(2, b=3)
    added_later = tasks.add_later.enqueue(1, 2)
    on_django = tasks.where_am_i.enqueue()
    with_context = tasks.which_attempt.enqueue("x")
    flaky = tasks.fails_twice.enqueue()
    failing = tasks.always_fails.enqueue()
    not_json = tasks.returns_a_set.enqueue()
    low = tasks.add.using(priority=-50).enqueue(0, 0)
    high = tasks.add.using(priority=50).enqueue(1, 1)
    run_after = datetime.now(UTC) + timedelta(seconds=2)
    deferred = tasks.add.using(run_after=run_after).enqueue(5, 5)

    worker = start_worker(WORKQUEUE_CONCURRENCY="1")

    assert finished(added, worker).return_value == 5
    assert finished(added_later, worker).return_value == {"sum": 3, "thread": "MainThread"}
    where = finished(on_django, worker).return_value
    assert where is not None
    assert where["thread"] != "MainThread"
    assert where["items"] >= 10
    assert finished(with_context, worker).return_value == {
        "label": "x",
        "attempt": 1,
        "id": with_context.id,
    }

    lucky = finished(flaky, worker)
    assert (lucky.status, lucky.return_value, lucky.attempts) == (
        TaskResultStatus.SUCCESSFUL,
        "third time lucky",
        3,
    )
    assert [error.exception_class for error in lucky.errors] == [ValueError, ValueError]
    assert "ValueError: attempt 1 failed" in lucky.errors[0].traceback
    assert "ValueError: attempt 2 failed" in lucky.errors[1].traceback

    failed = finished(failing, worker)
    assert (failed.status, failed.attempts) == (TaskResultStatus.FAILED, 1)
    [error] = failed.errors
    assert error.exception_class is KeyError
    assert 'raise KeyError("nothing here")' in error.traceback

    [refused] = finished(not_json, worker).errors
    assert refused.exception_class_path == "workqueue.domain.errors.WorkQueueError"

    first, second = finished(high, worker), finished(low, worker)
    assert first.started_at is not None
    assert second.started_at is not None
    assert first.started_at < second.started_at

    later = finished(deferred, worker)
    assert later.return_value == 10
    assert later.started_at is not None
    assert later.started_at >= run_after


def test_a_long_sync_task_keeps_its_lease_and_reads_running_meanwhile(
    start_worker: Callable[..., WorkerProcess],
) -> None:
    from django_tasks_app import tasks

    slow = tasks.sleeps.enqueue(2.0)
    worker = start_worker("--kinds", "django.slow", WORKQUEUE_LEASE_DURATION="1")

    deadline = time.monotonic() + WITHIN
    while slow.status != TaskResultStatus.RUNNING:
        assert time.monotonic() < deadline, worker.output()
        time.sleep(0.05)
        slow.refresh()
    beats = {heartbeats(slow.id)}
    while len(beats) < 4 and not slow.is_finished:
        time.sleep(0.1)
        beats.add(heartbeats(slow.id))
        slow.refresh()

    done = finished(slow, worker)
    assert len(beats) >= 4, "the lease was not renewed while the task ran"
    assert (done.status, done.return_value, done.attempts) == (TaskResultStatus.SUCCESSFUL, 2.0, 1)


def test_a_worker_for_one_queue_leaves_the_others(
    start_worker: Callable[..., WorkerProcess],
) -> None:
    from django_tasks_app import tasks

    other = tasks.add.enqueue(1, 1)
    slow = tasks.sleeps.enqueue(0.0)

    worker = start_worker("--kinds", "django.slow")

    assert finished(slow, worker).status == TaskResultStatus.SUCCESSFUL
    other.refresh()
    assert other.status == TaskResultStatus.READY


def test_a_worker_without_django_settings_says_so_in_one_line(spawn: Spawner) -> None:
    env = worker_env(django_database_url())
    env.pop("DJANGO_SETTINGS_MODULE", None)
    worker = spawn(cli_argv("worker", "--app", "workqueue.django"), env, cwd=Path(sys.prefix))
    deadline = time.monotonic() + WITHIN
    while worker.process.poll() is None:
        assert time.monotonic() < deadline, worker.output()
        time.sleep(0.05)
    assert worker.process.returncode == 2, worker.output()
    assert "cannot set Django up" in worker.output()
