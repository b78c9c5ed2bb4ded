"""Which queued item a claim takes next: the claim order, written once for every store in Python.

A claim takes the first claimable item in claim order. Claimable: ``queued``, of
a kind the claimer serves, and due (its ``run_at`` has come). The order: the
highest ``priority`` first, then FIFO by id. The in-memory store and the
contract kit's model take items by these functions; the PostgreSQL store states
the same in its one SQL definition of the next claimable items (``store.sql``,
fragment ``claimable``), read off partial indexes (docs/adr/0027, 0030).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime

from workqueue.domain.items import WorkItem
from workqueue.domain.status import WorkStatus

__all__ = ["claim_order", "is_claimable", "next_claimable", "next_run_at"]


def is_claimable(item: WorkItem, kinds: Collection[str], now: datetime) -> bool:
    """Whether a claim for ``kinds`` at ``now`` may take ``item``: queued, of one of the
    kinds, and due (``run_at`` at or before ``now``)."""
    return item.status is WorkStatus.QUEUED and item.kind in kinds and item.run_at <= now


def claim_order(item: WorkItem) -> tuple[int, int]:
    """The key claims take items by, smallest first: the highest priority, then the id (FIFO)."""
    return (-item.priority, item.id)


def next_claimable(
    items: Iterable[WorkItem], kinds: Collection[str], now: datetime
) -> WorkItem | None:
    """The item of ``items`` a claim for ``kinds`` at ``now`` takes next, or None when none is
    claimable."""
    return min(
        (item for item in items if is_claimable(item, kinds, now)), key=claim_order, default=None
    )


def next_run_at(
    items: Iterable[WorkItem], kinds: Collection[str], now: datetime
) -> datetime | None:
    """The earliest ``run_at`` after ``now`` among the queued items of ``kinds``: when the next
    of them that is not yet due becomes claimable, or None when none waits."""
    return min(
        (
            item.run_at
            for item in items
            if item.status is WorkStatus.QUEUED and item.kind in kinds and item.run_at > now
        ),
        default=None,
    )
