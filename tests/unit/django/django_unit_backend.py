"""WorkQueueBackend with its items in memory: its PostgreSQL glue replaced, nothing else."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any, ClassVar

from work_items import queued_item
from workqueue.adapters.testing.clock import FakeClock
from workqueue.domain import Backoff, KindPolicy, WorkItem, WorkPayload
from workqueue.entrypoints.django.backend import WorkQueueBackend
from workqueue.entrypoints.django.tasks_api import Task

CLOCK = FakeClock()
RETRIED = KindPolicy(max_attempts=3, backoff=Backoff(initial=timedelta(seconds=1)))

UNIT_TASKS = {
    "default": {
        "BACKEND": "django_unit_backend.MemoryBackend",
        "QUEUES": ["default", "mail"],
        "OPTIONS": {"POLICIES": {"mail": RETRIED}},
    },
    "anywhere": {"BACKEND": "django_unit_backend.MemoryBackend", "QUEUES": []},
    "other": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"},
}


class MemoryBackend(WorkQueueBackend):
    items: ClassVar[dict[int, WorkItem]] = {}

    def _enqueue(self, payload: WorkPayload, task: Task[Any, Any]) -> int:
        item_id = len(self.items) + 1
        now = CLOCK.now()
        self.items[item_id] = queued_item(
            id=item_id,
            kind=payload.kind_name(),
            payload=payload.to_json(),
            enqueued_at=now,
            priority=task.priority,
            run_at=task.run_after or now,
        )
        return item_id

    def _read(self, item_id: int) -> WorkItem | None:
        assert type(item_id) is int, f"read with {item_id!r}, not an item id"
        return self.items.get(item_id)


def change(item_id: int, **changes: Any) -> None:
    """Put the item in another state, as a worker or a cancel would."""
    MemoryBackend.items[item_id] = replace(MemoryBackend.items[item_id], **changes)
