"""InMemoryWorkMonitor: the read-only views of the admin page on an InMemoryState.

It answers exactly what the PostgreSQL monitor answers (the contract kit's
``MonitoringContract`` holds both to it), reading the shared rows and never
writing them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from datetime import datetime

from workqueue.adapters.memory.state import InMemoryState
from workqueue.domain import (
    LIVE_STATUSES,
    UNSUCCESSFUL_STATUSES,
    BulkAction,
    BulkScope,
    KindCap,
    KindPause,
    ScheduleTurn,
    WorkItem,
    WorkMonitor,
    WorkStatus,
    kind_name,
)

__all__ = ["InMemoryWorkMonitor"]


def _counts(items: Iterable[WorkItem]) -> dict[tuple[str, WorkStatus], int]:
    return dict(Counter((item.kind, item.status) for item in items))


def _last_seen(item: WorkItem) -> datetime | None:
    return item.finished_at if item.finished_at is not None else item.heartbeat_at


class InMemoryWorkMonitor(WorkMonitor):
    """A :class:`~workqueue.domain.WorkMonitor` over an :class:`InMemoryState`.

    Every method raises :class:`~workqueue.domain.StoreUnavailableError` while the state is
    marked unavailable, and returns detached copies of the rows.
    """

    def __init__(self, state: InMemoryState) -> None:
        self._state = state

    def _items(self) -> list[WorkItem]:
        self._state.check_available()
        return self._state.snapshot()

    async def count_live(self) -> dict[tuple[str, WorkStatus], int]:
        """See :meth:`~workqueue.domain.WorkMonitor.count_live`."""
        return _counts(item for item in self._items() if item.status in LIVE_STATUSES)

    async def count_finished(self) -> dict[tuple[str, WorkStatus], int]:
        """See :meth:`~workqueue.domain.WorkMonitor.count_finished`."""
        return _counts(item for item in self._items() if item.status.is_finished)

    async def oldest_queued(self) -> dict[str, datetime]:
        """See :meth:`~workqueue.domain.WorkMonitor.oldest_queued`."""
        oldest: dict[str, datetime] = {}
        for item in self._items():
            if item.status is WorkStatus.QUEUED:
                oldest.setdefault(item.kind, item.enqueued_at)
        return oldest

    async def running(self) -> list[WorkItem]:
        """See :meth:`~workqueue.domain.WorkMonitor.running`."""
        return [item for item in self._items() if item.status is WorkStatus.RUNNING]

    async def queued(
        self, *, kind: str | None = None, after_id: int = 0, limit: int
    ) -> list[WorkItem]:
        """See :meth:`~workqueue.domain.WorkMonitor.queued`."""
        # A kind enum member is a str subclass equal to its stored value.
        items = [
            item
            for item in self._items()
            if item.status is WorkStatus.QUEUED
            and item.id > after_id
            and (kind is None or item.kind == kind)
        ]
        return items[: max(limit, 0)]

    async def recent_unsuccessful(self, *, limit: int) -> list[WorkItem]:
        """See :meth:`~workqueue.domain.WorkMonitor.recent_unsuccessful`."""
        items = [item for item in self._items() if item.status in UNSUCCESSFUL_STATUSES]
        items.sort(key=lambda item: (item.finished_at, item.id), reverse=True)
        return items[: max(limit, 0)]

    async def count_unsuccessful_since(self, since: datetime) -> dict[tuple[str, WorkStatus], int]:
        """See :meth:`~workqueue.domain.WorkMonitor.count_unsuccessful_since`."""
        return _counts(
            item
            for item in self._items()
            if item.status in UNSUCCESSFUL_STATUSES
            and item.finished_at is not None
            and item.finished_at >= since
        )

    async def stalls_since(self, since: datetime) -> dict[str, int]:
        """See :meth:`~workqueue.domain.WorkMonitor.stalls_since`."""
        stalls: Counter[str] = Counter()
        for item in self._items():
            seen = _last_seen(item)
            if item.stalls > 0 and seen is not None and seen >= since:
                stalls[item.kind] += item.stalls
        return dict(stalls)

    async def item(self, item_id: int) -> WorkItem | None:
        """See :meth:`~workqueue.domain.WorkMonitor.item`."""
        self._state.check_available()
        return self._state.read(item_id)

    async def items_by_dedup_key(self, dedup_key: str, *, limit: int) -> list[WorkItem]:
        """See :meth:`~workqueue.domain.WorkMonitor.items_by_dedup_key`."""
        items = [item for item in self._items() if item.dedup_key == dedup_key]
        items.sort(key=_id, reverse=True)
        return items[: max(limit, 0)]

    async def bulk_scope(self, kind: str, action: BulkAction) -> BulkScope:
        """See :meth:`~workqueue.domain.WorkMonitor.bulk_scope`."""
        ids = [item.id for item in self._items() if action.takes(item, kind)]
        return BulkScope(len(ids), max(ids, default=None))

    async def schedule_turns(self, kinds: Collection[str]) -> dict[str, ScheduleTurn]:
        """See :meth:`~workqueue.domain.WorkMonitor.schedule_turns`."""
        self._state.check_available()
        turns: dict[str, ScheduleTurn] = {}
        for kind in map(kind_name, kinds):
            items = [item for item in self._items() if item.kind == kind]
            finished = [item for item in items if item.finished_at is not None]
            candidates = [
                max((item for item in items if item.status is status), key=_id, default=None)
                for status in LIVE_STATUSES
            ]
            candidates.append(max(finished, key=_last_finish, default=None))
            newest = max((item for item in candidates if item is not None), key=_id, default=None)
            turns[kind] = ScheduleTurn(newest=newest, fired_at=self._state.fires.get(kind))
        return turns

    async def paused_kinds(self) -> list[KindPause]:
        """The paused kinds, by kind name."""
        self._state.check_available()
        return [self._state.pauses[kind] for kind in sorted(self._state.pauses)]

    async def capped_kinds(self) -> list[KindCap]:
        """The caps in force, by kind name, each with the kind's running items."""
        self._state.check_available()
        running = Counter(item.kind for item in self._items() if item.status is WorkStatus.RUNNING)
        return [
            KindCap(kind, cap.max_running, cap.source, cap.set_at, running[kind])
            for kind, cap in sorted(self._state.caps.items())
        ]


def _id(item: WorkItem) -> int:
    return item.id


def _last_finish(item: WorkItem) -> tuple[datetime, int]:
    """The order of finished items, the last finish last (the higher id on a tie)."""
    assert item.finished_at is not None
    return item.finished_at, item.id
