"""A claim takes the first claimable item in claim order: queued, of a kind served, due;
the highest priority first, then FIFO by id."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from work_items import queued_item
from workqueue.domain import (
    WorkItem,
    WorkStatus,
    claim_order,
    is_claimable,
    next_claimable,
    next_run_at,
)

T0 = datetime(2026, 12, 3, tzinfo=UTC)
SECOND = timedelta(seconds=1)
QUEUED = queued_item(enqueued_at=T0, run_at=T0)


def item(
    item_id: int,
    kind: str = "alpha",
    status: WorkStatus = WorkStatus.QUEUED,
    *,
    priority: int = 0,
    run_at: datetime = T0,
) -> WorkItem:
    return replace(QUEUED, id=item_id, kind=kind, status=status, priority=priority, run_at=run_at)


def test_only_a_queued_item_of_a_kind_served_is_claimable() -> None:
    assert is_claimable(item(1), {"alpha"}, T0)
    assert not is_claimable(item(1, kind="beta"), {"alpha"}, T0)
    for status in WorkStatus:
        if status is not WorkStatus.QUEUED:
            assert not is_claimable(item(1, status=status), {"alpha"}, T0)


def test_an_item_is_claimable_from_its_run_at_on_and_not_before() -> None:
    waiting = item(1, run_at=T0 + SECOND)

    assert not is_claimable(waiting, {"alpha"}, T0)
    assert is_claimable(waiting, {"alpha"}, T0 + SECOND)
    assert is_claimable(waiting, {"alpha"}, T0 + 2 * SECOND)


def test_claims_take_the_highest_priority_first_then_the_oldest_id() -> None:
    assert claim_order(item(3)) < claim_order(item(7))
    assert claim_order(item(7, priority=1)) < claim_order(item(3))
    assert claim_order(item(3, priority=-1)) > claim_order(item(7))
    assert claim_order(item(7, priority=100)) < claim_order(item(3, priority=99))


def test_the_next_claimable_item_is_the_oldest_queued_one_of_the_kinds() -> None:
    items = [
        item(9),
        item(2, status=WorkStatus.RUNNING),
        item(4, kind="beta"),
        item(5),
        item(1, status=WorkStatus.SUCCEEDED),
    ]

    assert next_claimable(items, {"alpha"}, T0) == item(5)
    assert next_claimable(items, {"alpha", "beta"}, T0) == item(4, kind="beta")


def test_the_next_claimable_item_is_the_due_one_of_the_highest_priority() -> None:
    items = [
        item(1),
        item(2, priority=5),
        item(3, priority=9, run_at=T0 + SECOND),
        item(4, priority=5),
    ]

    assert next_claimable(items, {"alpha"}, T0) == item(2, priority=5)
    assert next_claimable(items, {"alpha"}, T0 + SECOND) == item(3, priority=9, run_at=T0 + SECOND)


def test_nothing_claimable_is_none() -> None:
    assert next_claimable([item(1, status=WorkStatus.RUNNING)], {"alpha"}, T0) is None
    assert next_claimable([item(1, run_at=T0 + SECOND)], {"alpha"}, T0) is None
    assert next_claimable([], {"alpha"}, T0) is None


def test_the_next_run_at_is_the_earliest_one_still_to_come_among_queued_items_of_the_kinds() -> (
    None
):
    items = [
        item(1, run_at=T0 + 5 * SECOND),
        item(2, run_at=T0 + 3 * SECOND),
        item(3, kind="beta", run_at=T0 + SECOND),
        item(4, status=WorkStatus.RUNNING, run_at=T0 + 2 * SECOND),
        item(5, run_at=T0),
    ]

    assert next_run_at(items, {"alpha"}, T0) == T0 + 3 * SECOND
    assert next_run_at(items, {"alpha", "beta"}, T0) == T0 + SECOND
    assert next_run_at(items, {"alpha"}, T0 + 3 * SECOND) == T0 + 5 * SECOND
    assert next_run_at(items, {"alpha"}, T0 + 5 * SECOND) is None
    assert next_run_at(items, {"gamma"}, T0) is None
