"""The WorkMonitor port: what the admin view, the metrics and ``workqueue status`` read.

Read-only by design: a monitor never writes, so the web view can run as a role
with nothing but ``SELECT`` on ``work_items`` (docs/adr/0020). Each method is one
bounded read on an index; none of them counts or lists the whole history except
:meth:`WorkMonitor.count_finished`, which callers read sparingly.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from workqueue.domain.bulk import BulkAction, BulkScope
from workqueue.domain.caps import KindCap
from workqueue.domain.items import WorkItem
from workqueue.domain.pauses import KindPause
from workqueue.domain.status import WorkStatus

__all__ = ["LIVE_STATUSES", "UNSUCCESSFUL_STATUSES", "ScheduleTurn", "WorkMonitor"]

LIVE_STATUSES = frozenset(status for status in WorkStatus if not status.is_finished)
"""The statuses an item passes through before it finishes (queued, running)."""

UNSUCCESSFUL_STATUSES = frozenset(
    status for status in WorkStatus if status.is_finished and status is not WorkStatus.SUCCEEDED
)
"""The final statuses that are not success: failed, and any other such status added later."""


@dataclass(frozen=True, slots=True)
class ScheduleTurn:
    """What a periodic kind's schedule has come to so far.

    :param newest: the kind's newest item (queued, running, or the one that
        finished last), or None when it has none.
    :param fired_at: the fire time its calendar last took a turn at, or None (an
        interval schedule, or a calendar that has had no turn yet).
    """

    newest: WorkItem | None
    fired_at: datetime | None


class WorkMonitor(Protocol):
    """Read-only views of ``work_items`` for people and for metrics.

    :raises StoreUnavailableError: from any method, when the store cannot be reached.
    """

    async def count_live(self) -> dict[tuple[str, WorkStatus], int]:
        """How many items each (kind, live status) pair has; pairs with none are left out."""
        ...

    async def count_finished(self) -> dict[tuple[str, WorkStatus], int]:
        """How many items each (kind, final status) pair has; pairs with none are left out.

        This reads the whole history of the table (up to retention): the one
        expensive read of the port.
        """
        ...

    async def oldest_queued(self) -> dict[str, datetime]:
        """For each kind with queued items, the ``enqueued_at`` of the one a claim takes next.

        That is the kind's queued item with the lowest id (claims are FIFO by id).
        """
        ...

    async def running(self) -> list[WorkItem]:
        """Every running item, by id, however many are queued behind them."""
        ...

    async def queued(
        self, *, kind: str | None = None, after_id: int = ..., limit: int
    ) -> list[WorkItem]:
        """Queued items of ``kind`` (or of every kind), oldest first, with ids above ``after_id``.

        Keyset paging: the next page starts after the last id of this one.
        At most ``limit`` items (none when ``limit`` is below 1).
        """
        ...

    async def recent_unsuccessful(self, *, limit: int) -> list[WorkItem]:
        """Items in an :data:`UNSUCCESSFUL_STATUSES` status, the latest finished first.

        Ties on ``finished_at`` are broken by the higher id first. At most ``limit``.
        """
        ...

    async def count_unsuccessful_since(self, since: datetime) -> dict[tuple[str, WorkStatus], int]:
        """How many items of each kind ended in each unsuccessful status at or after ``since``."""
        ...

    async def stalls_since(self, since: datetime) -> dict[str, int]:
        """Per kind, the stalls counted on items last seen at or after ``since``.

        An item is last seen when it finished (``finished_at``) or, while it has
        not finished, at its latest heartbeat (``heartbeat_at``); items without
        stalls are left out, and so are kinds whose sum is 0.
        """
        ...

    async def item(self, item_id: int) -> WorkItem | None:
        """The item with this id, or None."""
        ...

    async def items_by_dedup_key(self, dedup_key: str, *, limit: int) -> list[WorkItem]:
        """Items of any kind and any status whose dedup key is ``dedup_key``, newest first.

        The key is matched exactly: no prefix, no folding of case or spaces. Newest
        is the highest id; at most ``limit`` items (none when ``limit`` is below 1).
        A key no item can hold (a NUL character) finds none.
        """
        ...

    async def bulk_scope(self, kind: str, action: BulkAction) -> BulkScope:
        """What ``action`` on ``kind`` would take now: how many items, and the highest id.

        For :attr:`~workqueue.domain.BulkAction.REQUEUE_FAILED` the kind's failed
        items that no bulk requeue requeued yet; for
        :attr:`~workqueue.domain.BulkAction.CANCEL_QUEUED` its queued items.
        """
        ...

    async def schedule_turns(self, kinds: Collection[str]) -> dict[str, ScheduleTurn]:
        """For each of ``kinds`` (periodic kinds), what its schedule has come to.

        Every kind asked for has an entry, a kind with no item and no turn too.
        """
        ...

    async def paused_kinds(self) -> list[KindPause]:
        """The kinds no worker claims now (:meth:`WorkStore.pause_kind`), by kind name."""
        ...

    async def capped_kinds(self) -> list[KindCap]:
        """The caps in force (:meth:`WorkStore.cap_kind`), by kind name; each one's
        ``running`` is how many items of the kind run now."""
        ...
