"""A Django task's result, read from its item in every workqueue status."""

from __future__ import annotations

from datetime import timedelta
from types import ModuleType

import pytest
from django_unit_backend import CLOCK, MemoryBackend, change

from workqueue.domain import Failure, WorkQueueError, WorkStatus
from workqueue.entrypoints.django.failures import (
    CANCELLED_PATH,
    TaskRaised,
    cancel_error,
    raised,
    task_error,
)
from workqueue.entrypoints.django.results import STATUSES, load_task
from workqueue.entrypoints.django.tasks_api import (
    InvalidTask,
    TaskError,
    TaskResultDoesNotExist,
    TaskResultStatus,
    task_backends,
)

LATER = CLOCK.now() + timedelta(seconds=10)
LATEST = CLOCK.now() + timedelta(seconds=20)


def test_each_workqueue_status_is_one_of_the_frameworks() -> None:
    assert STATUSES == {
        WorkStatus.QUEUED: TaskResultStatus.READY,
        WorkStatus.RUNNING: TaskResultStatus.RUNNING,
        WorkStatus.SUCCEEDED: TaskResultStatus.SUCCESSFUL,
        WorkStatus.FAILED: TaskResultStatus.FAILED,
        WorkStatus.CANCELLED: TaskResultStatus.FAILED,
    }


class TestEveryStatus:
    def test_a_queued_task_is_ready_with_no_attempt_error_or_times(self, tasks: ModuleType) -> None:
        result = tasks.add.get_result(tasks.add.enqueue(1, 2).id)

        assert result.status == TaskResultStatus.READY
        assert (result.attempts, result.worker_ids, result.errors) == (0, [], [])
        assert (result.started_at, result.finished_at, result.last_attempted_at) == (None,) * 3
        assert result.task.run_after is None
        assert result.task.func is tasks.add.func
        with pytest.raises(ValueError, match="not finished"):
            _ = result.return_value

    def test_a_delayed_task_is_ready_with_its_run_after(self, tasks: ModuleType) -> None:
        result = tasks.add.using(run_after=LATER).enqueue(1, 2)

        read = tasks.add.get_result(result.id)

        assert (read.status, read.task.run_after) == (TaskResultStatus.READY, LATER)

    def test_a_running_task_is_running_at_its_attempt(self, tasks: ModuleType) -> None:
        result = tasks.add.enqueue(1, 2)
        change(1, status=WorkStatus.RUNNING, attempt=2, started_at=LATER, worker_id="w-1")

        read = tasks.add.get_result(result.id)

        assert read.status == TaskResultStatus.RUNNING
        assert (read.attempts, read.worker_ids) == (2, ["w-1", "w-1"])
        assert (read.started_at, read.last_attempted_at, read.finished_at) == (LATER, LATER, None)

    def test_a_succeeded_task_has_its_return_value(self, tasks: ModuleType) -> None:
        result = tasks.add.enqueue(1, 2)
        change(
            1,
            status=WorkStatus.SUCCEEDED,
            attempt=1,
            started_at=LATER,
            finished_at=LATEST,
            worker_id="w-1",
            result=3,
        )

        read = tasks.add.get_result(result.id)

        assert (read.status, read.return_value) == (TaskResultStatus.SUCCESSFUL, 3)
        assert (read.enqueued_at, read.started_at, read.finished_at) == (CLOCK.now(), LATER, LATEST)
        assert read.is_finished

    def test_a_failed_task_has_the_error_of_each_attempt(self, tasks: ModuleType) -> None:
        result = tasks.add.enqueue(1, 2)
        failures = (
            Failure(1, LATER, "TaskRaised: builtins.KeyError\nTraceback (first)\nKeyError: 'a'\n"),
            Failure(2, LATEST, "result is not JSON"),
        )
        change(1, status=WorkStatus.FAILED, attempt=2, failures=failures, worker_id=None)

        read = tasks.add.get_result(result.id)

        assert read.status == TaskResultStatus.FAILED
        assert read.errors == [
            TaskError(
                exception_class_path="builtins.KeyError",
                traceback="Traceback (first)\nKeyError: 'a'\n",
            ),
            TaskError(
                exception_class_path="workqueue.domain.errors.WorkQueueError",
                traceback="result is not JSON",
            ),
        ]
        assert read.errors[0].exception_class is KeyError
        assert read.worker_ids == ["", ""]
        with pytest.raises(ValueError, match="Task failed"):
            _ = read.return_value

    def test_a_cancelled_task_failed_with_a_cancellation_and_its_reason(
        self, tasks: ModuleType
    ) -> None:
        result = tasks.add.enqueue(1, 2)
        change(1, status=WorkStatus.CANCELLED, error="not needed", result=9)

        read = tasks.add.get_result(result.id)

        assert read.status == TaskResultStatus.FAILED
        assert read.errors == [
            TaskError(exception_class_path=CANCELLED_PATH, traceback="cancelled: not needed")
        ]

    def test_a_task_cancelled_while_it_ran_has_the_requests_reason(self, tasks: ModuleType) -> None:
        tasks.add.enqueue(1, 2)
        change(1, status=WorkStatus.CANCELLED, cancel_reason="asked")
        assert [e.traceback for e in tasks.add.get_result("1").errors] == ["cancelled: asked"]
        change(1, error="stopped", cancel_reason="asked")
        assert [e.traceback for e in tasks.add.get_result("1").errors] == ["cancelled: stopped"]
        change(1, error="", cancel_reason="asked")
        assert [e.traceback for e in tasks.add.get_result("1").errors] == ["cancelled: "]

    def test_a_retried_task_keeps_its_earlier_errors_while_ready_again(
        self, tasks: ModuleType
    ) -> None:
        result = tasks.add.enqueue(1, 2)
        change(1, attempt=1, failures=(Failure(1, LATER, "TaskRaised: builtins.OSError\nT"),))

        read = tasks.add.get_result(result.id)

        assert read.status == TaskResultStatus.READY
        assert [(e.exception_class_path, e.traceback) for e in read.errors] == [
            ("builtins.OSError", "T")
        ]

    def test_the_result_has_the_items_queue_and_priority(self, tasks: ModuleType) -> None:
        result = tasks.add.using(queue_name="mail").enqueue(1, b=2)
        change(1, priority=-7)

        read = task_backends["default"].get_result(result.id)

        assert (read.task.queue_name, read.task.priority, read.backend) == ("mail", -7, "default")
        assert (read.args, read.kwargs) == ([1], {"b": 2})

    def test_the_result_is_of_the_backend_it_was_read_from(self, tasks: ModuleType) -> None:
        result = tasks.add.enqueue(1, 2)

        read = task_backends["anywhere"].get_result(result.id)

        assert (read.backend, read.task.backend) == ("anywhere", "anywhere")
        assert read.task.queue_name == "default"


class TestNoSuchResult:
    def test_an_id_of_no_item_does_not_exist(self, tasks: ModuleType) -> None:
        tasks.add.enqueue(1, 2)
        for result_id in ("2", "0", "x"):
            with pytest.raises(TaskResultDoesNotExist, match=f"^{result_id}$"):
                tasks.add.get_result(result_id)

    def test_an_item_of_another_kind_is_no_result(self, tasks: ModuleType) -> None:
        tasks.add.enqueue(1, 2)
        change(1, kind="token_cleanup")
        with pytest.raises(TaskResultDoesNotExist):
            tasks.add.get_result("1")

    def test_an_item_of_a_queue_the_backend_does_not_have_is_no_result(
        self, tasks: ModuleType
    ) -> None:
        tasks.add.enqueue(1, 2)
        change(1, kind="django.elsewhere")
        with pytest.raises(TaskResultDoesNotExist):
            tasks.add.get_result("1")

    def test_a_backend_without_queues_serves_every_queues_kind(self) -> None:
        anywhere = task_backends["anywhere"]
        default = task_backends["default"]

        assert anywhere.serves("django.elsewhere")
        assert anywhere.serves("django.mail")
        assert not anywhere.serves("token_cleanup")
        assert default.serves("django.mail")
        assert not default.serves("django.elsewhere")
        assert not default.serves("mail")


class TestTasks:
    def test_a_task_is_loaded_by_its_path(self, tasks: ModuleType) -> None:
        assert load_task("django_unit_tasks.add") is tasks.add

    def test_a_path_that_cannot_be_imported_is_an_invalid_task(self) -> None:
        with pytest.raises(
            InvalidTask, match=r"^cannot import the task 'nowhere\.task': "
        ) as error:
            load_task("nowhere.task")
        assert error.value.__cause__ is None

    def test_a_path_to_something_else_is_an_invalid_task(self, tasks: ModuleType) -> None:
        with pytest.raises(
            InvalidTask, match=r"^'django_unit_tasks\.NOT_A_TASK' is not a task, but a int$"
        ):
            load_task("django_unit_tasks.NOT_A_TASK")


class TestErrors:
    def test_what_a_task_raised_is_stored_as_its_class_path_and_traceback(self) -> None:
        try:
            raise LookupError("no such order")
        except LookupError as error:
            stored = raised(error)

        assert isinstance(stored, TaskRaised)
        path, traceback = str(stored).split("\n", 1)
        assert path == "builtins.LookupError"
        assert traceback.startswith("Traceback (most recent call last):\n")
        assert traceback.endswith("LookupError: no such order\n")

    def test_a_stored_task_error_reads_back_as_the_frameworks(self) -> None:
        text = "TaskRaised: shop.errors.Declined\nTraceback\n  line\nDeclined: card\n"
        assert task_error(text) == TaskError(
            exception_class_path="shop.errors.Declined",
            traceback="Traceback\n  line\nDeclined: card\n",
        )
        assert task_error("TaskRaised: a.B") == TaskError(exception_class_path="a.B", traceback="")

    def test_an_error_of_workqueues_own_reads_as_a_workqueue_error(self) -> None:
        assert task_error("snoozed 101 times") == TaskError(
            exception_class_path="workqueue.domain.errors.WorkQueueError",
            traceback="snoozed 101 times",
        )
        assert task_error("x TaskRaised: a.B\nc").exception_class is WorkQueueError

    def test_a_cancellation_says_its_reason_if_it_has_one(self) -> None:
        assert cancel_error("late") == TaskError(
            exception_class_path="asyncio.exceptions.CancelledError", traceback="cancelled: late"
        )
        assert cancel_error(None).traceback == "cancelled"
        import asyncio

        assert cancel_error(None).exception_class is asyncio.CancelledError


def test_the_memory_backend_is_the_backend_under_test() -> None:
    assert isinstance(task_backends["default"], MemoryBackend)
