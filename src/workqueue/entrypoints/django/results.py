"""An item of a Django task as the framework's ``TaskResult``.

workqueue's statuses map onto the framework's four: ``queued`` (waiting for its
``run_after`` too) is ``READY``, ``running`` is ``RUNNING``, ``succeeded`` is
``SUCCESSFUL``, and ``failed`` and ``cancelled`` are ``FAILED`` (a cancelled
item's last error is a cancellation with its reason). ``errors`` holds one
``TaskError`` per failed attempt, in order; ``attempts`` is the item's attempt
count (the framework counts ``worker_ids``: one per attempt, the item's last
worker); ``last_attempted_at`` is when the last attempt started.
"""

from __future__ import annotations

from typing import Any

from django.utils.module_loading import import_string

from workqueue.domain import WorkItem, WorkStatus
from workqueue.entrypoints.django.failures import cancel_error, task_error
from workqueue.entrypoints.django.kinds import queue_of
from workqueue.entrypoints.django.tasks_api import (
    FAILED,
    READY,
    RUNNING,
    SUCCESSFUL,
    InvalidTask,
    Task,
    TaskError,
    TaskResult,
    TaskResultStatus,
)

__all__ = ["STATUSES", "load_task", "task_result"]

STATUSES: dict[WorkStatus, TaskResultStatus] = {
    WorkStatus.QUEUED: READY,
    WorkStatus.RUNNING: RUNNING,
    WorkStatus.SUCCEEDED: SUCCESSFUL,
    WorkStatus.FAILED: FAILED,
    WorkStatus.CANCELLED: FAILED,
}
"""The framework's status of an item in each workqueue status."""


def load_task(path: str) -> Task[Any, Any]:
    """The task at the dotted ``path`` (a module-level ``@task`` function).

    :raises InvalidTask: if ``path`` cannot be imported or is not a task.
    """
    try:
        found = import_string(path)
    except ImportError as error:
        raise InvalidTask(f"cannot import the task {path!r}: {error}") from None
    if not isinstance(found, Task):
        raise InvalidTask(f"{path!r} is not a task, but a {type(found).__name__}")
    return found


def task_result(item: WorkItem, alias: str) -> TaskResult[Any]:
    """The ``TaskResult`` of ``item``, an item of a task on the backend ``alias``.

    :raises InvalidTask: if the item's task can no longer be imported.
    """
    payload = item.payload
    run_after = item.run_at if item.run_at > item.enqueued_at else None
    task = load_task(payload["task"]).using(
        priority=item.priority, queue_name=queue_of(item.kind), run_after=run_after, backend=alias
    )
    status = STATUSES[item.status]
    errors: list[TaskError] = [task_error(failure.error) for failure in item.failures]
    if item.status is WorkStatus.CANCELLED:
        # A cancel keeps its reason as the item's error; a request on a running item
        # holds it in cancel_reason until the run ends.
        errors.append(cancel_error(item.error if item.error is not None else item.cancel_reason))
    result: TaskResult[Any] = TaskResult(
        task=task,
        id=str(item.id),
        status=status,
        enqueued_at=item.enqueued_at,
        started_at=item.started_at,
        finished_at=item.finished_at,
        last_attempted_at=item.started_at,
        args=payload["args"],
        kwargs=payload["kwargs"],
        backend=alias,
        errors=errors,
        worker_ids=[item.worker_id or ""] * item.attempt,
    )
    if status is SUCCESSFUL:
        # The framework's own backends set the return value so: it is not an init field.
        object.__setattr__(result, "_return_value", item.result)
    return result
