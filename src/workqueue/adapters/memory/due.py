"""Due-ness of a periodic kind, computed from the in-memory rows.

The queue decides :meth:`~workqueue.domain.WorkQueue.enqueue_if_due` with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from workqueue.domain import WorkItem

__all__ = ["kind_is_busy", "kind_is_due"]


def kind_is_due(items: Iterable[WorkItem], kind: str, interval: timedelta, now: datetime) -> bool:
    """Whether periodic ``kind`` should be enqueued at ``now`` (DESIGN.md semantics 7).

    Due when no item of the kind is queued or running and its newest finished item
    finished at least ``interval`` before ``now`` (``now - newest >= interval``), or
    none exists. Raises nothing.
    """
    items = list(items)
    if kind_is_busy(items, kind):
        return False
    finished = [
        item.finished_at for item in items if item.kind == kind and item.finished_at is not None
    ]
    return not finished or now - max(finished) >= interval


def kind_is_busy(items: Iterable[WorkItem], kind: str) -> bool:
    """Whether an item of ``kind`` is queued or running."""
    return any(item.kind == kind and not item.status.is_finished for item in items)
