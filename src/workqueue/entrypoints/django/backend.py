"""WorkQueueBackend: Django's Tasks framework on workqueue.

In the settings (``DATABASES["default"]`` on PostgreSQL through psycopg 3, with
workqueue's tables migrated there)::

    TASKS = {
        "default": {
            "BACKEND": "workqueue.django.WorkQueueBackend",
            "QUEUES": ["default", "emails"],
            "OPTIONS": {"POLICIES": {"emails": KindPolicy(max_attempts=3)}},
        }
    }

``task.enqueue(...)`` inserts one item on Django's own connection
(:class:`~workqueue.adapters.psycopg.PsycopgWorkQueue`): inside
``transaction.atomic()`` it commits or rolls back with the rest of the block,
outside it commits at once. The task's ``priority`` and ``run_after`` are the
item's. ``get_result`` reads the item back on the same connection.

``OPTIONS``: ``DATABASE``, the alias of the database the items live in (default
``"default"``); ``POLICIES``, a :class:`~workqueue.domain.KindPolicy` per queue name (the
retries of its tasks; none given is one attempt).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.psycopg import PsycopgWorkQueue, read_item
from workqueue.domain import DEFAULT_POLICY, LARGEST_ITEM_ID, KindPolicy, WorkItem
from workqueue.entrypoints.django.kinds import queue_of, task_payload
from workqueue.entrypoints.django.results import task_result
from workqueue.entrypoints.django.tasks_api import (
    BaseTaskBackend,
    Task,
    TaskResult,
    TaskResultDoesNotExist,
)

__all__ = ["WorkQueueBackend", "item_id_of", "policies_of"]


def item_id_of(result_id: str) -> int | None:
    """The item id a result id names; None for one that names no item."""
    if not result_id.isascii() or not result_id.isdigit():
        return None
    item_id = int(result_id)
    return item_id if 1 <= item_id <= LARGEST_ITEM_ID else None


def policies_of(options: Mapping[str, Any]) -> dict[str, KindPolicy]:
    """The ``POLICIES`` option: a :class:`~workqueue.domain.KindPolicy` per queue name.

    :raises TypeError: if a queue's policy is not a ``KindPolicy``.
    """
    policies: dict[str, KindPolicy] = dict(options.get("POLICIES", {}))
    for queue_name, policy in policies.items():
        if not isinstance(policy, KindPolicy):
            raise TypeError(
                f"TASKS OPTIONS POLICIES[{queue_name!r}] must be a KindPolicy, "
                f"not {type(policy).__name__}"
            )
    return policies


class WorkQueueBackend(BaseTaskBackend):
    """Runs Django's tasks as workqueue items: durable, in the caller's transaction."""

    supports_defer = True
    supports_async_task = True
    supports_get_result = True
    supports_priority = True

    def __init__(self, alias: str, params: dict[str, Any]) -> None:
        super().__init__(alias, params)
        self.database: str = self.options.get("DATABASE", DEFAULT_DB_ALIAS)
        self.policies = policies_of(self.options)

    def policy(self, queue_name: str) -> KindPolicy:
        """The retry policy of the tasks on ``queue_name``."""
        return self.policies.get(queue_name, DEFAULT_POLICY)

    def enqueue(self, task: Task[Any, Any], args: Any, kwargs: Any) -> TaskResult[Any]:
        """Insert an item for ``task`` called with ``args`` and ``kwargs``; its result.

        :raises InvalidTask: if the task cannot run here (an unknown queue, a
            priority out of range, ...); nothing is written.
        :raises TypeError, ValueError: if an argument is not JSON; nothing is written.
        """
        self.validate_task(task)
        payload = task_payload(task.queue_name, task.module_path, args, kwargs)
        enqueued = self._enqueue(payload, task)
        return self.get_result(str(enqueued))

    def get_result(self, result_id: str) -> TaskResult[Any]:
        """The result of the task ``result_id``, in whatever status its item is.

        :raises TaskResultDoesNotExist: if no item of this backend's queues has that id.
        """
        item_id = item_id_of(result_id)
        if item_id is None:
            raise TaskResultDoesNotExist(result_id)
        item = self._read(item_id)
        if item is None or not self.serves(item.kind):
            raise TaskResultDoesNotExist(result_id)
        return task_result(item, self.alias)

    def serves(self, kind: str) -> bool:
        """True for the kind of one of this backend's queues (of any, if it names none)."""
        queue_name = queue_of(kind)
        return queue_name is not None and (not self.queues or queue_name in self.queues)

    def _connection(self) -> Any:  # pragma: no mutate block
        connection = connections[self.database]
        connection.ensure_connection()
        return connection.connection

    def _enqueue(self, payload: Any, task: Task[Any, Any]) -> int:  # pragma: no mutate block
        queue = PsycopgWorkQueue(self._connection(), SystemClock())
        return queue.enqueue(payload, priority=task.priority, run_at=task.run_after).id

    def _read(self, item_id: int) -> WorkItem | None:  # pragma: no mutate block
        return read_item(self._connection(), item_id)
