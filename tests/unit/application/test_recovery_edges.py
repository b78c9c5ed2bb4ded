"""Lease recovery's log lines: one per group, with every item id as text and as a field."""

from __future__ import annotations

import pytest
from service_bench import Bench

from application import LeaseRecovery

PAST_THE_LEASE = 61
RECOVERY_LOG = "workqueue.recovery"


def recovery_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str, object]]:
    return [
        (r.levelname, r.getMessage(), getattr(r, "item_ids", None))
        for r in caplog.records
        if r.name == RECOVERY_LOG
    ]


async def test_requeued_items_are_listed_together_in_one_warning(
    bench: Bench, caplog: pytest.LogCaptureFixture
) -> None:
    first = await bench.enqueue("a")
    second = await bench.enqueue("b")
    await bench.claim_as_dead_worker()
    await bench.claim_as_dead_worker()
    await bench.clock.advance(PAST_THE_LEASE)

    await LeaseRecovery(bench.store).run_once()

    assert recovery_lines(caplog) == [
        (
            "WARNING",
            f"requeued 2 item(s) whose lease expired: {first}, {second}",
            [first, second],
        )
    ]


async def test_items_failed_as_stalled_are_one_error_naming_the_limit(
    bench: Bench, caplog: pytest.LogCaptureFixture
) -> None:
    first = await bench.enqueue("a")
    second = await bench.enqueue("b")
    await bench.claim_as_dead_worker()
    await bench.claim_as_dead_worker()
    await bench.clock.advance(PAST_THE_LEASE)

    await LeaseRecovery(bench.store, max_stalls=1).run_once()

    assert recovery_lines(caplog) == [
        (
            "ERROR",
            f"failed 2 item(s) that stalled 1 times: {first}, {second}",
            [first, second],
        )
    ]


async def test_items_superseded_by_a_queued_twin_are_one_warning(
    bench: Bench, caplog: pytest.LogCaptureFixture
) -> None:
    stale = await bench.enqueue("a", dedup_key="k")
    await bench.claim_as_dead_worker()
    await bench.enqueue("a", dedup_key="k")
    await bench.clock.advance(PAST_THE_LEASE)

    result = await LeaseRecovery(bench.store).run_once()

    assert result.superseded == [stale]
    assert recovery_lines(caplog) == [
        (
            "WARNING",
            "failed 1 stalled item(s) superseded by a queued item with the same dedup key: "
            f"{stale}",
            [stale],
        )
    ]


def test_a_limit_below_one_is_refused_and_one_is_the_least(bench: Bench) -> None:
    with pytest.raises(ValueError, match="max_stalls must be at least 1, not 0"):
        LeaseRecovery(bench.store, max_stalls=0)
    assert LeaseRecovery(bench.store, max_stalls=1).max_stalls == 1
