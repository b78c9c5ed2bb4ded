"""Django task queues as workqueue kinds: one kind per queue, ``django.<queue_name>``.

A task enqueued on queue ``emails`` is an item of kind ``django.emails`` whose
payload names the task and carries its arguments::

    {"task": "shop.tasks.send_receipt", "args": [7], "kwargs": {"copy": true}}

So a worker serves some queues only with ``--kinds django.emails`` (or
``WORKQUEUE_KINDS``), each queue has its kind's retry policy, and the CLI and the
admin view count, pause and cancel a queue's tasks as a kind's items. Each queue's
kind is an enum of its own with one member, and its payload model is made once.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import JsonValue

from workqueue.domain import WorkPayload
from workqueue.entrypoints.django.tasks_api import normalize_json

__all__ = ["KIND_PREFIX", "TaskPayload", "kind_of", "payload_model", "queue_of", "task_payload"]

KIND_PREFIX = "django."
"""What a queue's kind is named with, before the queue's name."""


class _NoQueue(StrEnum):
    """The base model's kind, which no worker serves: each queue's model has its own."""

    NONE = KIND_PREFIX


class TaskPayload(WorkPayload):
    """The payload of a Django task's item: the task's dotted path and its JSON arguments.

    A base: each queue's model (:func:`payload_model`) is a subclass of it with the
    queue's kind.
    """

    kind = _NoQueue.NONE

    task: str
    args: list[JsonValue]
    kwargs: dict[str, JsonValue]


def kind_of(queue_name: str) -> str:
    """The workqueue kind of the Django task queue ``queue_name``."""
    return KIND_PREFIX + queue_name


def queue_of(kind: str) -> str | None:
    """The Django task queue whose kind is ``kind``; None for a kind of no queue."""
    if kind.startswith(KIND_PREFIX):
        return kind[len(KIND_PREFIX) :]
    return None


_MODELS: dict[str, type[TaskPayload]] = {}
# JSON as PostgreSQL's jsonb holds it: no NaN, no infinities.
_STRICT_JSON = json.JSONEncoder(allow_nan=False)


def payload_model(queue_name: str) -> type[TaskPayload]:
    """The payload model of ``queue_name``'s kind (the same class at every call)."""
    model = _MODELS.get(queue_name)
    if model is None:
        model = _MODELS[queue_name] = _new_model(queue_name)
    return model


def _new_model(queue_name: str) -> type[TaskPayload]:
    kinds = StrEnum(f"TaskQueue[{queue_name}]", {"QUEUE": kind_of(queue_name)})  # type: ignore[misc]
    return type(
        f"TaskPayload[{queue_name}]",
        (TaskPayload,),
        {"kind": kinds["QUEUE"], "__module__": __name__},
    )


def task_payload(queue_name: str, task_path: str, args: Any, kwargs: Any) -> TaskPayload:
    """The payload of a task on ``queue_name`` called with ``args`` and ``kwargs``.

    :raises TypeError: (the framework's own) if an argument is of a type JSON has
        not (a ``datetime``, a model instance); nothing is written.
    :raises ValueError: if an argument is a float JSON cannot hold (NaN, infinity),
        or bytes that are not UTF-8; nothing is written.
    """
    arguments = normalize_json({"args": args, "kwargs": kwargs})
    try:
        _STRICT_JSON.encode(arguments)
    except ValueError as error:
        raise ValueError(f"task arguments must be JSON: {error}") from None
    return payload_model(queue_name)(task=task_path, **arguments)
