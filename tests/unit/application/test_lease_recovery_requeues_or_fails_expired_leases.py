"""Lease recovery puts an item whose lease expired back in queued with one more stall,
fails it once the stalls reach the limit, and says so in one line per group."""

from __future__ import annotations

import pytest
from service_bench import (
    Bench,
)

from workqueue.application import LeaseRecovery
from workqueue.domain import WorkStatus

PAST_THE_LEASE = 61


RECOVERY_LOG = "workqueue.recovery"


def recovery_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str, object]]:
    return [
        (r.levelname, r.getMessage(), getattr(r, "item_ids", None))
        for r in caplog.records
        if r.name == RECOVERY_LOG
    ]


class TestExpiredLeases:
    async def test_an_expired_lease_goes_back_to_queued_with_one_stall(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        item_id = await bench.enqueue("a")
        await bench.claim_as_dead_worker()
        await bench.clock.advance(PAST_THE_LEASE)

        result = await LeaseRecovery(bench.store).run_once()

        assert (result.requeued, result.stalled, result.superseded) == ([item_id], [], [])
        item = await bench.item(item_id)
        assert (item.status, item.stalls, item.worker_id) == (WorkStatus.QUEUED, 1, None)
        assert f"requeued 1 item(s) whose lease expired: {item_id}" in caplog.text

    async def test_a_lease_that_has_not_expired_is_left_alone_and_nothing_is_logged(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        item_id = await bench.enqueue("a")
        await bench.claim_as_dead_worker()
        await bench.clock.advance(59)

        result = await LeaseRecovery(bench.store).run_once()

        assert result.total == 0
        assert (await bench.item(item_id)).status is WorkStatus.RUNNING
        assert caplog.records == []

    async def test_the_third_stall_fails_the_item_as_stalled(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        item_id = await bench.enqueue("a")
        recovery = LeaseRecovery(bench.store)
        results = []
        for _ in range(3):
            await bench.claim_as_dead_worker()
            await bench.clock.advance(PAST_THE_LEASE)
            results.append(await recovery.run_once())

        assert [result.requeued for result in results] == [[item_id], [item_id], []]
        assert results[2].stalled == [item_id]
        item = await bench.item(item_id)
        assert (item.status, item.stalls, item.attempt) == (WorkStatus.FAILED, 3, 3)
        assert item.error is not None
        assert "stalled" in item.error
        assert f"failed 1 item(s) that stalled 3 times: {item_id}" in caplog.text

    async def test_the_stall_limit_is_the_recovery_s_own(self, bench: Bench) -> None:
        item_id = await bench.enqueue("a")
        await bench.claim_as_dead_worker()
        await bench.clock.advance(PAST_THE_LEASE)

        result = await LeaseRecovery(bench.store, max_stalls=1).run_once()

        assert result.stalled == [item_id]
        assert (await bench.item(item_id)).status is WorkStatus.FAILED

    async def test_a_recovered_item_that_has_a_queued_twin_is_superseded(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        old = await bench.enqueue("a", dedup_key="nightly")
        await bench.claim_as_dead_worker()
        twin = await bench.enqueue("a", dedup_key="nightly")
        await bench.clock.advance(PAST_THE_LEASE)

        result = await LeaseRecovery(bench.store).run_once()

        assert result.superseded == [old]
        assert (await bench.item(twin)).status is WorkStatus.QUEUED
        assert f"superseded by a queued item with the same dedup key: {old}" in caplog.text


class TestTheStallLimit:
    def test_a_stall_limit_below_one_is_refused(self, bench: Bench) -> None:
        with pytest.raises(ValueError, match="max_stalls"):
            LeaseRecovery(bench.store, max_stalls=0)

    def test_a_limit_below_one_is_refused_and_one_is_the_least(self, bench: Bench) -> None:
        with pytest.raises(ValueError, match="max_stalls must be at least 1, not 0"):
            LeaseRecovery(bench.store, max_stalls=0)
        assert LeaseRecovery(bench.store, max_stalls=1).max_stalls == 1


class TestLogLines:
    async def test_requeued_items_are_listed_together_in_one_warning(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
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
        self, bench: Bench, caplog: pytest.LogCaptureFixture
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

    async def test_items_whose_cancel_was_requested_are_cancelled_in_one_warning(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        first = await bench.enqueue("a")
        second = await bench.enqueue("b")
        await bench.claim_as_dead_worker()
        await bench.claim_as_dead_worker()
        for item_id in (first, second):
            await bench.store.cancel(item_id, reason="stop")
        await bench.clock.advance(PAST_THE_LEASE)

        result = await LeaseRecovery(bench.store).run_once()

        assert result.cancelled == [first, second]
        assert recovery_lines(caplog) == [
            (
                "WARNING",
                "cancelled 2 item(s) whose cancel was requested and whose lease expired: "
                f"{first}, {second}",
                [first, second],
            )
        ]
        assert (await bench.item(first)).status is WorkStatus.CANCELLED

    async def test_items_superseded_by_a_queued_twin_are_one_warning(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
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
