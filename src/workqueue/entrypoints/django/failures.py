"""A task's exception as an item's failure, and an item's failure as a :class:`TaskError`.

A failed attempt is kept as its error text (``"<Type>: <message>"``). For a task
that raised, the worker stores a :class:`TaskRaised` whose message is the class
path of what the task raised, a newline, and its traceback; reading the item back
splits them into Django's ``TaskError``. A failure workqueue itself wrote (a result
that is not JSON, a task path that names no task, too many snoozes) has no
exception of the task's: it reads as a :class:`~workqueue.domain.WorkQueueError` with the
text as its traceback.
"""

from __future__ import annotations

from workqueue.domain import WorkQueueError
from workqueue.entrypoints.django.tasks_api import (
    TaskError,
    get_exception_traceback,
    get_module_path,
)

__all__ = ["CANCELLED_PATH", "TaskRaised", "cancel_error", "raised", "task_error"]

_RAISED = "TaskRaised: "
_WORKQUEUE_ERROR_PATH = get_module_path(WorkQueueError)
CANCELLED_PATH = "asyncio.exceptions.CancelledError"
"""The exception class a cancelled item's last error names."""


class TaskRaised(WorkQueueError):
    """A task raised: the message is the exception's class path, a newline, its traceback."""


def raised(error: BaseException) -> TaskRaised:
    """What the worker raises, and so stores, for a task that raised ``error``."""
    return TaskRaised(f"{get_module_path(type(error))}\n{get_exception_traceback(error)}")


def task_error(text: str) -> TaskError:
    """Django's ``TaskError`` of a failure's stored error text."""
    if text.startswith(_RAISED):
        path, _, traceback = text.removeprefix(_RAISED).partition("\n")
        return TaskError(exception_class_path=path, traceback=traceback)
    return TaskError(exception_class_path=_WORKQUEUE_ERROR_PATH, traceback=text)


def cancel_error(reason: str | None) -> TaskError:
    """The ``TaskError`` a cancelled item ends with: a cancellation, and its reason."""
    text = "cancelled" if reason is None else f"cancelled: {reason}"
    return TaskError(exception_class_path=CANCELLED_PATH, traceback=text)
