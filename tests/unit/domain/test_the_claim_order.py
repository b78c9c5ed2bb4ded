"""A claim takes the first claimable item in claim order: queued, of a kind served, FIFO by id."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from workqueue.domain import WorkItem, WorkStatus, claim_order, is_claimable, next_claimable

T0 = datetime(2026, 12, 3, tzinfo=UTC)
QUEUED = WorkItem(
    id=1,
    kind="alpha",
    payload={},
    status=WorkStatus.QUEUED,
    attempt=0,
    stalls=0,
    dedup_key=None,
    enqueued_at=T0,
    started_at=None,
    heartbeat_at=None,
    lease_expires_at=None,
    finished_at=None,
    worker_id=None,
    progress=None,
    error=None,
)


def item(item_id: int, kind: str = "alpha", status: WorkStatus = WorkStatus.QUEUED) -> WorkItem:
    return replace(QUEUED, id=item_id, kind=kind, status=status)


def test_only_a_queued_item_of_a_kind_served_is_claimable() -> None:
    assert is_claimable(item(1), {"alpha"})
    assert not is_claimable(item(1, kind="beta"), {"alpha"})
    for status in WorkStatus:
        if status is not WorkStatus.QUEUED:
            assert not is_claimable(item(1, status=status), {"alpha"})


def test_claims_take_the_oldest_id_first() -> None:
    assert claim_order(item(3)) < claim_order(item(7))


def test_the_next_claimable_item_is_the_oldest_queued_one_of_the_kinds() -> None:
    items = [
        item(9),
        item(2, status=WorkStatus.RUNNING),
        item(4, kind="beta"),
        item(5),
        item(1, status=WorkStatus.SUCCEEDED),
    ]

    assert next_claimable(items, {"alpha"}) == item(5)
    assert next_claimable(items, {"alpha", "beta"}) == item(4, kind="beta")


def test_nothing_claimable_is_none() -> None:
    assert next_claimable([item(1, status=WorkStatus.RUNNING)], {"alpha"}) is None
    assert next_claimable([], {"alpha"}) is None
