"""Which queued item a claim takes next: the claim order, written once for every store in Python.

A claim takes the first claimable item in claim order. Claimable: ``queued``
and of a kind the claimer serves. The order: FIFO by id. The in-memory store
and the contract kit's model take items by these two functions; the PostgreSQL
store states the same in its one SQL definition of the next claimable items
(``store.sql``, fragment ``next_claimable``), read off one partial index.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from workqueue.domain.items import WorkItem
from workqueue.domain.status import WorkStatus

__all__ = ["claim_order", "is_claimable", "next_claimable"]


def is_claimable(item: WorkItem, kinds: Collection[str]) -> bool:
    """Whether a claim for ``kinds`` may take ``item``: queued, and of one of the kinds."""
    return item.status is WorkStatus.QUEUED and item.kind in kinds


def claim_order(item: WorkItem) -> int:
    """The key claims take items by, smallest first: the id (FIFO)."""
    return item.id


def next_claimable(items: Iterable[WorkItem], kinds: Collection[str]) -> WorkItem | None:
    """The item of ``items`` a claim for ``kinds`` takes next, or None when none is claimable."""
    return min((item for item in items if is_claimable(item, kinds)), key=claim_order, default=None)
