"""Django's Tasks framework on workqueue: enqueue, validation and results, on PostgreSQL.

A real Django on psycopg 3 and a real PostgreSQL: ``task.enqueue`` writes the
item on Django's own connection, in the caller's transaction; bad input is
refused by the framework's own errors with nothing written; ``get_result`` reads
an item in every status back as the framework's ``TaskResult``. The items are put
in each status by the work store itself, as a worker would (the worker process
runs tasks in test_django_tasks_worker.py).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connections, transaction

from integration.django_tasks_site import tasks_project
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkStore, close_pool, create_pool
from workqueue.entrypoints.django.tasks_api import (
    InvalidTask,
    TaskResultDoesNotExist,
    TaskResultStatus,
    task_backends,
)

__all__ = ["tasks_project"]

pytestmark = [pytest.mark.postgres, pytest.mark.usefixtures("tasks_project")]

RunInFreshLoop = Callable[[Callable[[], Coroutine[Any, Any, Any]]], Any]


def items() -> list[tuple[str, str, int, Any]]:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT kind, status, priority, payload::text FROM work_items ORDER BY id")
        return list(cursor.fetchall())


def database_url() -> str:
    values = connections["default"].settings_dict
    return (
        f"postgresql://{values['USER']}@{values['HOST']}:{values['PORT'] or 5432}/{values['NAME']}"
    )


def on_the_store(
    run: RunInFreshLoop, act: Callable[[PostgresWorkStore], Coroutine[Any, Any, Any]]
) -> Any:
    """Run ``act`` with a work store on Django's database, as a worker would."""

    async def go() -> Any:
        pool = await create_pool(database_url(), min_size=1, max_size=2)
        store = PostgresWorkStore(pool, SystemClock())
        try:
            return await act(store)
        finally:
            await store.close()
            await close_pool(pool)

    return run(go)


class TestEnqueue:
    def test_an_enqueued_task_is_a_queued_item_of_its_queues_kind(self) -> None:
        from django_tasks_app.tasks import add

        result = add.enqueue(2, b=3)

        assert result.status == TaskResultStatus.READY
        assert (result.id, result.args, result.kwargs, result.backend) == (
            "1",
            [2],
            {"b": 3},
            "default",
        )
        assert result.task.func is add.func
        assert result.enqueued_at is not None
        assert result.errors == []
        assert result.attempts == 0
        assert items() == [
            (
                "django.default",
                "queued",
                0,
                '{"args": [2], "task": "django_tasks_app.tasks.add", "kwargs": {"b": 3}}',
            )
        ]

    async def test_aenqueue_enqueues_from_async_code(self) -> None:
        from asgiref.sync import sync_to_async
        from django_tasks_app.tasks import add_later

        result = await add_later.aenqueue(1, 2)
        fetched = await add_later.aget_result(result.id)

        assert (fetched.status, fetched.args) == (TaskResultStatus.READY, [1, 2])
        assert [row[:2] for row in await sync_to_async(items)()] == [("django.default", "queued")]

    def test_an_enqueue_inside_atomic_commits_with_the_block(self) -> None:
        from django_tasks_app.tasks import add

        with transaction.atomic():
            result = add.enqueue(1, 1)
            # Inside the block, on the same connection, the item is there already.
            assert add.get_result(result.id).status == TaskResultStatus.READY

        assert [row[:2] for row in items()] == [("django.default", "queued")]

    def test_an_enqueue_inside_a_rolled_back_atomic_leaves_nothing(self) -> None:
        from django_tasks_app.tasks import add

        class Undo(Exception):
            pass

        def place_and_undo() -> None:
            with transaction.atomic():
                add.enqueue(1, 1)
                raise Undo

        with pytest.raises(Undo):
            place_and_undo()

        assert items() == []

    def test_priority_and_run_after_are_the_items(self) -> None:
        from django_tasks_app.tasks import add

        later = datetime.now(UTC) + timedelta(hours=1)
        result = add.using(priority=40, run_after=later).enqueue(1, 1)

        assert (result.task.priority, result.task.run_after) == (40, later)
        assert [row[1:3] for row in items()] == [("queued", 40)]


class TestBadInput:
    def test_arguments_that_are_not_json_are_refused_and_nothing_is_written(self) -> None:
        from django_tasks_app.tasks import add

        with pytest.raises(TypeError, match="Unsupported type"):
            add.enqueue(object(), 1)
        with pytest.raises(ValueError, match="task arguments must be JSON"):
            add.enqueue(float("nan"), 1)

        assert items() == []

    def test_an_unknown_queue_is_refused_by_the_framework_and_nothing_is_written(self) -> None:
        from django_tasks_app.tasks import add

        with pytest.raises(InvalidTask, match="Queue 'nowhere' is not valid for backend"):
            add.using(queue_name="nowhere").enqueue(1, 1)

        assert items() == []

    def test_a_priority_out_of_range_is_refused_by_the_framework_and_nothing_is_written(
        self,
    ) -> None:
        from django_tasks_app.tasks import add

        with pytest.raises(
            InvalidTask, match="priority must be a whole number between -100 and 100"
        ):
            add.using(priority=101).enqueue(1, 1)

        assert items() == []

    def test_a_result_id_of_no_item_of_the_backends_queues_does_not_exist(self) -> None:
        from django_tasks_app.tasks import add

        add.enqueue(1, 1)
        other = add.enqueue(1, 2)
        with connections["default"].cursor() as cursor:
            cursor.execute(
                "UPDATE work_items SET kind = 'token_cleanup' WHERE id = %s", [int(other.id)]
            )

        for result_id in ("3", other.id, "x", "0", "-1", "99999999999999999999"):
            with pytest.raises(TaskResultDoesNotExist):
                task_backends["default"].get_result(result_id)


class TestResults:
    def test_a_running_task_reads_as_running_with_its_attempt(
        self, run_in_fresh_loop: RunInFreshLoop
    ) -> None:
        from django_tasks_app.tasks import add

        result = add.enqueue(1, 2)
        on_the_store(
            run_in_fresh_loop,
            lambda store: store.claim(
                ["django.default"], worker_id="w-1", lease_duration=timedelta(minutes=1)
            ),
        )

        running = add.get_result(result.id)

        assert running.status == TaskResultStatus.RUNNING
        assert (running.attempts, running.worker_ids) == (1, ["w-1"])
        assert running.started_at is not None
        assert running.last_attempted_at == running.started_at
        assert running.finished_at is None
        with pytest.raises(ValueError, match="not finished"):
            _ = running.return_value

    def test_a_cancelled_task_reads_as_failed_with_the_cancellation_as_its_error(
        self, run_in_fresh_loop: RunInFreshLoop
    ) -> None:
        from django_tasks_app.tasks import add

        result = add.enqueue(1, 2)
        on_the_store(
            run_in_fresh_loop,
            lambda store: store.cancel(int(result.id), reason="changed my mind"),
        )

        cancelled = add.get_result(result.id)

        assert cancelled.status == TaskResultStatus.FAILED
        assert [(e.exception_class_path, e.traceback) for e in cancelled.errors] == [
            ("asyncio.exceptions.CancelledError", "cancelled: changed my mind")
        ]
        assert cancelled.finished_at is not None

    def test_result_refresh_reads_the_item_again(self) -> None:
        from django_tasks_app.tasks import add

        result = add.enqueue(1, 2)
        with connections["default"].cursor() as cursor:
            cursor.execute(
                "UPDATE work_items SET status = 'succeeded', attempt = 1, worker_id = 'w', "
                "started_at = now(), finished_at = now(), result = '3' WHERE id = %s",
                [int(result.id)],
            )

        result.refresh()

        assert (result.status, result.return_value, result.attempts) == (
            TaskResultStatus.SUCCESSFUL,
            3,
            1,
        )
