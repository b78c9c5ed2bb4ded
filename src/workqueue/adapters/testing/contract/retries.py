"""Contract: a retry or a snooze goes back to queued at its run_at; failures are kept; a
success keeps its result (DESIGN.md part three, "Time"; docs/adr/0031)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import JsonValue

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob
from workqueue.adapters.testing.contract.steps import (
    ALL_KINDS,
    LEASE,
    MAX_STALLS,
    claim,
    expire_the_lease,
)
from workqueue.domain import (
    Failure,
    RecoveryResult,
    RunOutcome,
    WorkItem,
    WorkQueue,
    WorkStatus,
    WorkStore,
    stalled_error,
    superseded_error,
)

__all__ = ["RetryContract"]

LATER = timedelta(seconds=90)


async def read(backdoor: Backdoor, item_id: int) -> WorkItem:
    item = await backdoor.read_item(item_id)
    assert item is not None, f"item {item_id} is gone"
    return item


class RetryContract:
    """The store's side of retries, snoozes and results: what one fenced write leaves."""

    async def test_a_retry_goes_back_to_queued_with_its_error_until_its_run_at(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        running = await claim(store)
        await clock.advance(3)
        run_at = clock.now() + LATER

        retried = await store.finish(
            running.lease, RunOutcome.retried("OSError: down", run_at, {"page": 2})
        )

        assert retried is True
        item = await read(backdoor, running.id)
        assert (item.status, item.error, item.run_at, item.progress) == (
            WorkStatus.QUEUED,
            "OSError: down",
            run_at,
            {"page": 2},
        )
        assert (item.lease_expires_at, item.worker_id, item.finished_at) == (None, None, None)
        assert item.failures == (Failure(1, clock.now(), "OSError: down"),)
        assert item.attempt == 1
        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None

    async def test_a_retried_item_is_claimed_again_once_its_run_at_comes(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        running = await claim(store)
        await store.finish(running.lease, RunOutcome.retried("boom", clock.now() + LATER))

        await clock.advance(LATER.total_seconds() - 0.001)
        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None
        await clock.advance(0.001)
        again = await claim(store, worker_id="worker-2")

        assert (again.id, again.attempt, again.worker_id) == (running.id, 2, "worker-2")
        assert again.failures == (Failure(1, clock.now() - LATER, "boom"),)

    async def test_the_old_lease_of_a_retried_item_writes_nothing(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        running = await claim(store)
        await store.finish(running.lease, RunOutcome.retried("boom", clock.now()))
        again = await claim(store, worker_id="worker-2")
        before = await read(backdoor, again.id)

        assert await store.finish(running.lease, RunOutcome.succeeded({"stale": True})) is False
        assert await store.finish(running.lease, RunOutcome.retried("stale", clock.now())) is False
        assert await read(backdoor, again.id) == before

    async def test_every_failure_is_kept_in_order_with_its_attempt_and_time(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        first = await claim(store)
        await store.finish(first.lease, RunOutcome.retried("OSError: one", clock.now()))
        second = await claim(store)
        await clock.advance(7)
        await store.finish(second.lease, RunOutcome.retried("OSError: two", clock.now()))
        third = await claim(store)
        await clock.advance(5)

        await store.finish(third.lease, RunOutcome.failed("OSError: three"))

        item = await read(backdoor, first.id)
        assert (item.status, item.error) == (WorkStatus.FAILED, "OSError: three")
        assert item.failures == (
            Failure(1, clock.now() - timedelta(seconds=12), "OSError: one"),
            Failure(2, clock.now() - timedelta(seconds=5), "OSError: two"),
            Failure(3, clock.now(), "OSError: three"),
        )

    async def test_a_snooze_goes_back_to_queued_counted_and_without_a_failure(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        running = await claim(store)
        run_at = clock.now() + LATER

        assert await store.finish(running.lease, RunOutcome.snoozed(run_at)) is True

        item = await read(backdoor, running.id)
        assert (item.status, item.error, item.run_at, item.snoozes, item.failures) == (
            WorkStatus.QUEUED,
            None,
            run_at,
            1,
            (),
        )
        assert await store.claim(ALL_KINDS, worker_id="w", lease_duration=LEASE) is None

    async def test_a_snoozed_item_runs_again_and_counts_each_snooze(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        for _ in range(3):
            running = await claim(store)
            await store.finish(running.lease, RunOutcome.snoozed(clock.now()))

        item = await read(backdoor, running.id)
        assert (item.snoozes, item.attempt, item.status) == (3, 3, WorkStatus.QUEUED)

    async def test_a_snooze_after_a_retry_goes_back_without_the_retrys_error(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        first = await claim(store)
        await store.finish(first.lease, RunOutcome.retried("boom", clock.now()))
        second = await claim(store)

        await store.finish(second.lease, RunOutcome.snoozed(clock.now()))

        item = await read(backdoor, first.id)
        assert (item.error, len(item.failures), item.snoozes) == (None, 1, 1)

    async def test_a_retry_or_snooze_after_a_cancel_request_ends_cancelled(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        retried = await claim(store)
        snoozed = await claim(store)
        await store.cancel(retried.id, reason="not needed")
        await store.cancel(snoozed.id, reason="not needed")

        await store.finish(retried.lease, RunOutcome.retried("boom", clock.now() + LATER))
        await store.finish(snoozed.lease, RunOutcome.snoozed(clock.now() + LATER))

        for item_id in (retried.id, snoozed.id):
            item = await read(backdoor, item_id)
            assert (item.status, item.error, item.finished_at) == (
                WorkStatus.CANCELLED,
                "not needed",
                clock.now(),
            )

    async def test_a_retry_beside_a_queued_twin_fails_as_superseded(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="k")
        running = await claim(store)
        twin = await queue.enqueue(AlphaJob(number=2), dedup_key="k")

        await store.finish(running.lease, RunOutcome.retried("boom", clock.now() + LATER))

        item = await read(backdoor, running.id)
        assert (item.status, item.error) == (WorkStatus.FAILED, superseded_error(twin.id))
        assert item.failures == (Failure(1, clock.now(), "boom"),)
        assert (await read(backdoor, twin.id)).status is WorkStatus.QUEUED

    async def test_a_snooze_beside_a_queued_twin_fails_as_superseded(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="k")
        running = await claim(store)
        twin = await queue.enqueue(AlphaJob(number=2), dedup_key="k")

        await store.finish(running.lease, RunOutcome.snoozed(clock.now() + LATER))

        item = await read(backdoor, running.id)
        assert (item.status, item.error, item.failures) == (
            WorkStatus.FAILED,
            superseded_error(twin.id),
            (),
        )

    async def test_a_stall_is_no_failure_but_a_stall_out_is(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        for stall in range(1, MAX_STALLS + 1):
            running = await claim(store)
            await expire_the_lease(clock)
            result = await store.recover_expired(max_stalls=MAX_STALLS)
            item = await read(backdoor, running.id)
            if stall < MAX_STALLS:
                assert result == RecoveryResult(requeued=[running.id])
                assert item.failures == ()

        assert result == RecoveryResult(stalled=[running.id])
        error = stalled_error(MAX_STALLS, MAX_STALLS)
        assert item.failures == (Failure(MAX_STALLS, clock.now(), error),)

    async def test_a_success_keeps_what_the_handler_returned(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        running = await claim(store)

        result: JsonValue = {"pages": 12, "skipped": ["robots.txt"], "ratio": 0.5, "ok": True}
        assert await store.finish(running.lease, RunOutcome.succeeded(None, result)) is True

        item = await read(backdoor, running.id)
        assert (item.status, item.result, item.failures) == (WorkStatus.SUCCEEDED, result, ())

    async def test_a_result_may_be_any_json_value(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        results: list[JsonValue] = ["done", 7, [1, "two"], False]
        for number, result in enumerate(results):
            await queue.enqueue(AlphaJob(number=number))
            running = await claim(store)
            await store.finish(running.lease, RunOutcome.succeeded(None, result))

            assert (await read(backdoor, running.id)).result == result

    async def test_a_success_completed_with_the_next_claim_has_no_result(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        running = await claim(store)

        held, _ = await store.complete_and_claim(
            running.lease, progress=None, kinds=ALL_KINDS, worker_id="w", lease_duration=LEASE
        )

        assert held is True
        assert (await read(backdoor, running.id)).result is None
