"""Django's Tasks framework, wherever it is installed: ``django.tasks`` or its backport.

Django 6 ships the framework as ``django.tasks``; on Django 5.2 (Python 3.11) the
official backport, ``django-tasks`` (import name ``django_tasks``), has the same API.
The rest of workqueue's Django support imports these names from here, and nowhere
else (docs/adr/0037-django-tasks-backend.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

__all__ = [
    "DEFAULT_TASK_QUEUE_NAME",
    "FAILED",
    "READY",
    "RUNNING",
    "SUCCESSFUL",
    "BaseTaskBackend",
    "InvalidTask",
    "Task",
    "TaskContext",
    "TaskError",
    "TaskResult",
    "TaskResultDoesNotExist",
    "TaskResultStatus",
    "get_exception_traceback",
    "get_module_path",
    "normalize_json",
    "task",
    "task_backends",
]

if TYPE_CHECKING:
    from django_tasks import DEFAULT_TASK_QUEUE_NAME, task, task_backends
    from django_tasks.backends.base import BaseTaskBackend
    from django_tasks.base import Task, TaskContext, TaskError, TaskResult, TaskResultStatus
    from django_tasks.exceptions import InvalidTaskError as InvalidTask
    from django_tasks.exceptions import TaskResultDoesNotExist
    from django_tasks.utils import get_exception_traceback, get_module_path, normalize_json
else:  # pragma: no cover - which one is installed decides
    try:
        from django.tasks import DEFAULT_TASK_QUEUE_NAME, task, task_backends
        from django.tasks.backends.base import BaseTaskBackend
        from django.tasks.base import Task, TaskContext, TaskError, TaskResult, TaskResultStatus
        from django.tasks.exceptions import InvalidTask, TaskResultDoesNotExist
        from django.tasks.utils import get_exception_traceback, get_module_path, normalize_json
    except ImportError:
        from django_tasks import DEFAULT_TASK_QUEUE_NAME, task, task_backends
        from django_tasks.backends.base import BaseTaskBackend
        from django_tasks.base import Task, TaskContext, TaskError, TaskResult, TaskResultStatus
        from django_tasks.exceptions import InvalidTaskError as InvalidTask
        from django_tasks.exceptions import TaskResultDoesNotExist
        from django_tasks.utils import get_exception_traceback, get_module_path, normalize_json

# Without Django's type stubs, mypy takes TextChoices members for their (value, label)
# tuples: the four statuses, typed as what they are.
READY = cast("TaskResultStatus", TaskResultStatus.READY)
RUNNING = cast("TaskResultStatus", TaskResultStatus.RUNNING)
SUCCESSFUL = cast("TaskResultStatus", TaskResultStatus.SUCCESSFUL)
FAILED = cast("TaskResultStatus", TaskResultStatus.FAILED)
