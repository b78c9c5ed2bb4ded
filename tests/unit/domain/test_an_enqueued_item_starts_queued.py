"""An enqueue makes an item queued, in no attempt, never run: what WorkItem.queued builds."""

from __future__ import annotations

from datetime import timedelta

from work_items import T0, queued_item
from workqueue.domain import WorkItem


def test_a_new_item_is_queued_with_no_attempt_and_claimable_from_its_enqueue() -> None:
    assert WorkItem.queued(1, "alpha", {}, enqueued_at=T0) == queued_item()


def test_a_new_item_keeps_what_its_producer_gave() -> None:
    later = T0 + timedelta(hours=1)

    item = WorkItem.queued(
        7,
        "beta",
        {"n": 1},
        enqueued_at=T0,
        dedup_key="daily",
        priority=-3,
        run_at=later,
        trace_context={"traceparent": "00-1-2-01"},
    )

    assert item == queued_item(
        id=7,
        kind="beta",
        payload={"n": 1},
        dedup_key="daily",
        priority=-3,
        run_at=later,
        trace_context={"traceparent": "00-1-2-01"},
    )
