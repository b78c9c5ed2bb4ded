"""The test project's tasks: sync and async, with and without context, failing, slow."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from django.db import connection
from django_tasks import TaskContext, task


@task
def add(a: int, b: int) -> int:
    return a + b


@task
async def add_later(a: int, b: int) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"sum": a + b, "thread": threading.current_thread().name}


@task
def where_am_i() -> dict[str, Any]:
    """Reads the database through Django's ORM connection, off the worker's loop."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM work_items")
        (items,) = cursor.fetchone()
    return {"thread": threading.current_thread().name, "items": items}


@task(takes_context=True)
def which_attempt(context: TaskContext, label: str) -> dict[str, Any]:
    return {"label": label, "attempt": context.attempt, "id": context.task_result.id}


@task(queue_name="flaky", takes_context=True)
def fails_twice(context: TaskContext) -> str:
    if context.attempt < 3:
        raise ValueError(f"attempt {context.attempt} failed")
    return "third time lucky"


@task
def always_fails() -> None:
    raise KeyError("nothing here")


@task(queue_name="slow")
def sleeps(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


@task
def returns_a_set() -> set[int]:
    """What it returns is not JSON: that fails the item."""
    return {1, 2}
