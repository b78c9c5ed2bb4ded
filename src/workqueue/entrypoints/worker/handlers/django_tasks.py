"""Running Django's tasks: the handler of each task queue's kind.

The item's payload names the task and carries its arguments (see
:mod:`workqueue.entrypoints.django.kinds`). An ``async def`` task runs on the
worker's loop; a plain one runs in a thread of the loop's executor
(``asyncio.to_thread``), side by side with others, so the loop goes on
heartbeating (and renewing the lease) while it runs, with Django's connection
handling around it as a request has it: connections too old or broken are
closed before and after the task (``close_old_connections``). A task declared
with ``takes_context=True`` is given a ``TaskContext`` whose result carries the
item's id, arguments and attempt.

What the task returns (JSON, normalised as the framework does) is the item's
result. What it raises fails the attempt as a
:class:`~workqueue.entrypoints.django.failures.TaskRaised` carrying its class path
and traceback; the queue's policy decides whether it runs again. A thread
running a sync task cannot be stopped: if its lease is lost, its item is
recovered while the thread finishes, and its result is dropped (fencing).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from inspect import iscoroutinefunction
from typing import Any

from django.db import close_old_connections
from pydantic import JsonValue

from workqueue.domain import KindPolicy, WorkContext, WorkHandler
from workqueue.entrypoints.django.failures import raised
from workqueue.entrypoints.django.kinds import TaskPayload, payload_model
from workqueue.entrypoints.django.results import load_task
from workqueue.entrypoints.django.tasks_api import (
    RUNNING,
    Task,
    TaskContext,
    TaskResult,
    normalize_json,
)

__all__ = ["TaskHandler", "run_sync", "task_handler"]


def run_sync(
    function: Callable[..., Any],
    args: list[Any],
    kwargs: dict[str, Any],
    tidy: Callable[[], object] = close_old_connections,
) -> Any:
    """Call a sync task function as Django runs a request: ``tidy`` before and after it.

    :param tidy: Django's ``close_old_connections``: closes the thread's connections
        that are broken or older than ``CONN_MAX_AGE``, so a task never starts on one.
    """
    tidy()
    try:
        return function(*args, **kwargs)
    finally:
        tidy()


class TaskHandler(WorkHandler[TaskPayload]):
    """Runs the task an item names. Each queue's handler is a subclass (:func:`task_handler`)."""

    def __init__(self, alias: str, worker_id: str) -> None:
        self._alias = alias
        self._worker_id = worker_id

    async def handle(self, payload: TaskPayload, ctx: WorkContext) -> JsonValue:
        task = load_task(payload.task)
        args: list[Any] = list(payload.args)
        if task.takes_context:
            args.insert(0, TaskContext(task_result=self._running(task, payload, ctx)))
        try:
            if iscoroutinefunction(task.func):
                value = await task.func(*args, **payload.kwargs)
            else:
                # A thread of the loop's executor each: sync tasks run side by side.
                value = await asyncio.to_thread(run_sync, task.func, args, payload.kwargs)
        except Exception as error:
            raise raised(error) from error
        returned: JsonValue = normalize_json(value)
        return returned

    def _running(
        self, task: Task[Any, Any], payload: TaskPayload, ctx: WorkContext
    ) -> TaskResult[Any]:
        """The result a ``takes_context`` task is given: running, at the item's attempt."""
        return TaskResult(
            task=task,
            id=str(ctx.item_id),
            status=RUNNING,
            enqueued_at=None,
            started_at=None,
            finished_at=None,
            last_attempted_at=None,
            args=payload.args,
            kwargs=payload.kwargs,
            backend=self._alias,
            errors=[],
            worker_ids=[self._worker_id] * ctx.attempt,
        )


def task_handler(queue_name: str, policy: KindPolicy, alias: str, worker_id: str) -> TaskHandler:
    """The handler of ``queue_name``'s kind on the backend ``alias``, retrying as ``policy`` says.

    :param worker_id: the worker's id, which a ``takes_context`` task's result lists.
    """
    handler_class = type(
        f"TaskHandler[{queue_name}]",
        (TaskHandler,),
        {"payload_type": payload_model(queue_name), "policy": policy},
    )
    handler: TaskHandler = handler_class(alias, worker_id)
    return handler
