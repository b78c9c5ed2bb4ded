"""Contract: a cancel ends a queued item at once and a running one through its holder."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import ClassVar

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.fixtures import StoreFactory
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob
from workqueue.adapters.testing.contract.race import at_once
from workqueue.adapters.testing.contract.steps import (
    ALL_KINDS,
    LEASE,
    MAX_STALLS,
    WORKER,
    claim,
    expire_the_lease,
    running_after_stalls,
)
from workqueue.domain import (
    DEFAULT_CANCEL_REASON,
    LARGEST_ITEM_ID,
    MAX_CANCEL_REASON_LENGTH,
    CancelOutcome,
    HeartbeatAnswer,
    InvalidCancelReasonError,
    RecoveryResult,
    RunOutcome,
    WorkItem,
    WorkQueue,
    WorkSchedule,
    WorkStatus,
    WorkStore,
)

__all__ = ["CancelContract"]

REASON = "not needed any more"


class CancelContract:
    """Cancel (docs/adr/0018): queued items at once; running ones by their holder, fenced.

    ``cancel_rounds`` is how many times the cancel-against-claim race is run.
    """

    cancel_rounds: ClassVar[int] = 30

    async def test_a_queued_item_is_cancelled_at_once_with_the_reason_as_its_error(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        queued = await queue.enqueue(AlphaJob())
        await clock.advance(3)

        assert await store.cancel(queued.id, reason=REASON) is CancelOutcome.CANCELLED

        item = await backdoor.read_item(queued.id)
        assert item is not None
        assert (item.status, item.error, item.finished_at) == (
            WorkStatus.CANCELLED,
            REASON,
            clock.now(),
        )
        assert (item.attempt, item.stalls, item.lease_expires_at) == (0, 0, None)
        assert item.cancel_reason is None

    @pytest.mark.parametrize(
        ("reason", "error"),
        [
            pytest.param("stop\x00now", "a cancel reason cannot hold a NUL character", id="a NUL"),
            pytest.param(
                "stop \ud800", "a cancel reason cannot hold a lone surrogate", id="a surrogate"
            ),
            pytest.param(
                "x" * (MAX_CANCEL_REASON_LENGTH + 1),
                f"a cancel reason is at most 1000 characters, not {MAX_CANCEL_REASON_LENGTH + 1}",
                id="too long",
            ),
        ],
    )
    async def test_a_reason_no_store_can_hold_is_refused_and_changes_nothing(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, reason: str, error: str
    ) -> None:
        queued = await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        running = await claim(store)
        before = await backdoor.all_items()

        for item_id in (queued.id, running.id):
            with pytest.raises(InvalidCancelReasonError) as refused:
                await store.cancel(item_id, reason=reason)
            assert str(refused.value) == error

        assert await backdoor.all_items() == before

    async def test_a_reason_of_the_longest_length_is_stored_whole(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        queued = await queue.enqueue(AlphaJob())
        longest = "y" * MAX_CANCEL_REASON_LENGTH

        assert await store.cancel(queued.id, reason=longest) is CancelOutcome.CANCELLED

        item = await backdoor.read_item(queued.id)
        assert item is not None
        assert item.error == longest

    async def test_an_id_beyond_the_largest_an_item_can_have_is_no_item(
        self, store: WorkStore
    ) -> None:
        for item_id in (LARGEST_ITEM_ID, LARGEST_ITEM_ID + 1, 2**64):
            assert await store.cancel(item_id, reason=REASON) is CancelOutcome.UNKNOWN
            assert await store.get(item_id) is None

    async def test_a_cancelled_item_is_never_claimed(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        cancelled = await queue.enqueue(AlphaJob(number=1))
        kept = await queue.enqueue(AlphaJob(number=2))
        await store.cancel(cancelled.id, reason=REASON)

        assert (await claim(store)).id == kept.id
        assert await store.claim(ALL_KINDS, worker_id=WORKER, lease_duration=LEASE) is None

    async def test_a_cancelled_queued_item_no_longer_absorbs_an_enqueue_of_its_key(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        cancelled = await queue.enqueue(AlphaJob(), dedup_key="k")
        await store.cancel(cancelled.id, reason=REASON)

        again = await queue.enqueue(AlphaJob(), dedup_key="k")

        assert again.created
        assert again.id != cancelled.id

    async def test_a_running_item_keeps_running_with_the_request_recorded(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)

        assert await store.cancel(running.id, reason=REASON) is CancelOutcome.REQUESTED

        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.cancel_reason, item.error, item.finished_at) == (
            WorkStatus.RUNNING,
            REASON,
            None,
            None,
        )
        assert item.lease_expires_at == running.lease_expires_at

    async def test_a_second_cancel_of_a_running_item_finds_it_already_requested(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)
        await store.cancel(running.id, reason=REASON)

        again = await store.cancel(running.id, reason="another reason")

        assert again is CancelOutcome.ALREADY_REQUESTED
        item = await backdoor.read_item(running.id)
        assert item is not None
        assert item.cancel_reason == REASON

    async def test_the_holders_heartbeats_answer_that_a_cancel_was_requested(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)
        held = await store.heartbeat(running.lease, progress={"n": 1}, lease_duration=LEASE)
        await store.cancel(running.id, reason=REASON)
        await clock.advance(5)

        first = await store.heartbeat(running.lease, progress={"n": 2}, lease_duration=LEASE)
        second = await store.heartbeat(running.lease, progress={"n": 3}, lease_duration=LEASE)

        assert (held, first, second) == (
            HeartbeatAnswer.HELD,
            HeartbeatAnswer.CANCEL_REQUESTED,
            HeartbeatAnswer.CANCEL_REQUESTED,
        )
        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.progress) == (WorkStatus.RUNNING, {"n": 3})
        assert item.lease_expires_at == clock.now() + LEASE, "the lease is still extended"

    async def test_a_heartbeat_of_a_lost_lease_answers_lost_even_with_a_cancel_requested(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)
        await store.cancel(running.id, reason=REASON)
        await store.finish(running.lease, RunOutcome.cancelled(None))

        answer = await store.heartbeat(running.lease, progress=None, lease_duration=LEASE)

        assert answer is HeartbeatAnswer.LOST
        assert not answer

    async def test_the_holder_marks_it_cancelled_with_the_reason_fenced_by_its_lease(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)
        await store.cancel(running.id, reason=REASON)
        await clock.advance(2)

        assert await store.finish(running.lease, RunOutcome.cancelled({"done": 4})) is True

        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.error, item.finished_at, item.progress) == (
            WorkStatus.CANCELLED,
            REASON,
            clock.now(),
            {"done": 4},
        )
        assert (item.lease_expires_at, item.worker_id, item.stalls) == (None, WORKER, 0)
        assert await store.finish(running.lease, RunOutcome.cancelled(None)) is False

    async def test_marking_cancelled_without_a_request_stores_the_default_reason(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)

        assert await store.finish(running.lease, RunOutcome.cancelled(None)) is True

        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.error) == (WorkStatus.CANCELLED, DEFAULT_CANCEL_REASON)

    async def test_a_dead_holders_item_ends_cancelled_by_recovery_without_a_stall(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)
        await store.heartbeat(running.lease, progress={"page": 3}, lease_duration=LEASE)
        await store.cancel(running.id, reason=REASON)
        await expire_the_lease(clock)

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(cancelled=[running.id])
        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.error, item.stalls, item.finished_at) == (
            WorkStatus.CANCELLED,
            REASON,
            0,
            clock.now(),
        )
        assert item.lease_expires_at is None
        # What the dead holder last reported stays, as it does for a requeue.
        assert item.progress == {"page": 3}
        assert await store.claim(ALL_KINDS, worker_id=WORKER, lease_duration=LEASE) is None

    async def test_recovery_cancels_rather_than_stalls_an_item_at_the_stall_limit(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await running_after_stalls(store, clock, MAX_STALLS - 1)
        await store.cancel(running.id, reason=REASON)
        await expire_the_lease(clock)

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(cancelled=[running.id])
        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.stalls) == (WorkStatus.CANCELLED, MAX_STALLS - 1)

    async def test_recovery_of_a_cancel_requested_twin_leaves_the_queued_one_alone(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="k")
        running = await claim(store)
        twin = await queue.enqueue(AlphaJob(number=2), dedup_key="k")
        await store.cancel(running.id, reason=REASON)
        await expire_the_lease(clock)

        result = await store.recover_expired(max_stalls=MAX_STALLS)

        assert result == RecoveryResult(cancelled=[running.id])
        queued = await backdoor.read_item(twin.id)
        assert queued is not None
        assert queued.status is WorkStatus.QUEUED

    async def test_a_release_of_a_cancel_requested_item_cancels_it(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)
        await store.cancel(running.id, reason=REASON)

        assert await store.finish(running.lease, RunOutcome.released({"half": True})) is True

        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.error, item.progress, item.stalls) == (
            WorkStatus.CANCELLED,
            REASON,
            {"half": True},
            0,
        )
        assert item.finished_at is not None

    async def test_a_completion_after_the_request_still_succeeds_the_item(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)
        await store.cancel(running.id, reason=REASON)

        assert await store.finish(running.lease, RunOutcome.succeeded(None)) is True

        item = await backdoor.read_item(running.id)
        assert item is not None
        assert (item.status, item.error) == (WorkStatus.SUCCEEDED, None)

    async def test_a_finished_item_is_not_changed(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(BetaJob(label="b"))
        succeeded = await claim(store)
        await store.finish(succeeded.lease, RunOutcome.succeeded({"ok": 1}))
        failed = await claim(store)
        await store.finish(failed.lease, RunOutcome.failed("boom", None))
        before = [await backdoor.read_item(item.id) for item in (succeeded, failed)]

        outcomes = [await store.cancel(item.id, reason=REASON) for item in (succeeded, failed)]

        assert outcomes == [CancelOutcome.FINISHED, CancelOutcome.FINISHED]
        assert [await backdoor.read_item(item.id) for item in (succeeded, failed)] == before

    async def test_a_cancelled_item_is_not_cancelled_again(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        queued = await queue.enqueue(AlphaJob())
        await store.cancel(queued.id, reason=REASON)
        before = await backdoor.read_item(queued.id)

        assert await store.cancel(queued.id, reason="again") is CancelOutcome.FINISHED
        assert await backdoor.read_item(queued.id) == before

    async def test_an_unknown_id_is_said_to_be_unknown(self, store: WorkStore) -> None:
        assert await store.cancel(424242, reason=REASON) is CancelOutcome.UNKNOWN

    async def test_cancelled_items_are_finished_for_due_ness_and_retention(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        queued = await queue.enqueue(AlphaJob())
        await store.cancel(queued.id, reason=REASON)
        schedule = WorkSchedule(payload=AlphaJob(), interval=LEASE)

        assert await queue.enqueue_if_due(schedule) is None
        await clock.advance(LEASE.total_seconds())
        assert await queue.enqueue_if_due(schedule) is not None
        purged = await store.purge_finished(finished_before=clock.now(), limit=10)
        assert purged == 1
        assert await backdoor.read_item(queued.id) is None

    async def test_a_cancel_racing_a_claim_has_exactly_one_outcome(
        self,
        queue: WorkQueue,
        store: WorkStore,
        store_factory: StoreFactory,
        backdoor: Backdoor,
    ) -> None:
        canceller = await store_factory()
        for round_number in range(self.cancel_rounds):
            queued = await queue.enqueue(AlphaJob(number=round_number))

            racers: list[Callable[[], Awaitable[object]]] = [
                partial(canceller.cancel, queued.id, reason=REASON),
                partial(store.claim, ALL_KINDS, worker_id=WORKER, lease_duration=LEASE),
            ]
            # Either may set off first: half the rounds each way round.
            order = 1 if round_number % 2 else -1
            cancelled, claimed = (await at_once(racers[::order]))[::order]

            item = await backdoor.read_item(queued.id)
            assert item is not None
            if cancelled is CancelOutcome.CANCELLED:
                assert claimed is None, f"round {round_number + 1}: claimed a cancelled item"
                assert item.status is WorkStatus.CANCELLED
            else:
                assert cancelled is CancelOutcome.REQUESTED, f"round {round_number + 1}"
                assert isinstance(claimed, WorkItem), f"round {round_number + 1}"
                assert claimed.id == queued.id
                assert (item.status, item.cancel_reason) == (WorkStatus.RUNNING, REASON)
                assert await store.finish(claimed.lease, RunOutcome.cancelled(None))

    async def test_a_cancel_racing_a_completion_has_exactly_one_outcome(
        self,
        queue: WorkQueue,
        store: WorkStore,
        store_factory: StoreFactory,
        backdoor: Backdoor,
    ) -> None:
        canceller = await store_factory()
        for round_number in range(self.cancel_rounds):
            await queue.enqueue(AlphaJob(number=round_number))
            running = await claim(store)

            racers: list[Callable[[], Awaitable[object]]] = [
                partial(canceller.cancel, running.id, reason=REASON),
                partial(store.finish, running.lease, RunOutcome.succeeded()),
            ]
            cancelled, completed = await at_once(racers)

            assert completed is True, f"round {round_number + 1}"
            assert cancelled in (CancelOutcome.REQUESTED, CancelOutcome.FINISHED)
            item = await backdoor.read_item(running.id)
            assert item is not None
            assert item.status is WorkStatus.SUCCEEDED
            assert await store.finish(running.lease, RunOutcome.cancelled(None)) is False
