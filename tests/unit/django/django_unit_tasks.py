"""Tasks of the unit tests (module level, as the framework requires)."""

from __future__ import annotations

import threading
from typing import Any

from django_tasks import TaskContext, task


@task
def add(a: int, b: int) -> int:
    return a + b


@task(queue_name="mail", priority=5)
def send(to: str) -> tuple[str, ...]:
    return ("sent", to)


@task
async def add_later(a: int, b: int) -> dict[str, Any]:
    return {"sum": a + b, "thread": threading.current_thread().name}


@task
def thread_name() -> str:
    return threading.current_thread().name


@task(takes_context=True)
def which_attempt(context: TaskContext, label: str, **extra: Any) -> dict[str, Any]:
    result = context.task_result
    return {
        "label": label,
        "task": result.task.module_path,
        "kwargs": result.kwargs,
        "errors": result.errors,
        "attempt": context.attempt,
        "id": result.id,
        "workers": result.worker_ids,
        "args": result.args,
        "backend": result.backend,
        "status": str(result.status),
    }


@task
def fails(message: str) -> None:
    raise LookupError(message)


@task
async def fails_later(message: str) -> None:
    raise LookupError(message)


@task
def returns_a_set() -> set[int]:
    return {1}


MEETING = threading.Barrier(2)


@task
def meet() -> str:
    """Returns once another run of it has started too: only if both run at once."""
    MEETING.wait(timeout=5)
    return "met"


NOT_A_TASK = 42
