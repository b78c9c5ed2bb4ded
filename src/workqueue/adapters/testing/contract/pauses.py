"""Contract: a paused kind is claimed by no one until it is resumed (docs/adr/0034)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.adapters.testing.contract.steps import ALL_KINDS, LEASE, WORKER, claim
from workqueue.domain import (
    MAX_PAUSE_REASON_LENGTH,
    HeartbeatAnswer,
    InvalidPauseError,
    KindPause,
    RunOutcome,
    WorkQueue,
    WorkStatus,
    WorkStore,
)

__all__ = ["PauseContract"]

ALPHA = ContractKind.ALPHA.value
BETA = ContractKind.BETA.value
REASON = "the partner's API is down"


async def _nothing_claimable(store: WorkStore) -> bool:
    return await store.claim(ALL_KINDS, worker_id=WORKER, lease_duration=LEASE) is None


class PauseContract:
    """DESIGN.md part three, "Operating a fleet": pause and resume a kind."""

    async def test_a_paused_kind_is_passed_over_and_other_kinds_are_claimed(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        older = await queue.enqueue(AlphaJob(number=1), priority=50)
        other = await queue.enqueue(BetaJob(label="still runs"))

        await store.pause_kind(ALPHA, reason=REASON)

        assert (await claim(store)).id == other.id
        assert await _nothing_claimable(store)
        assert older.id != other.id

    async def test_items_enqueued_before_and_during_the_pause_wait_then_run_in_claim_order(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        before = await queue.enqueue(AlphaJob(number=1))
        await store.pause_kind(ALPHA)
        during = await queue.enqueue(AlphaJob(number=2), priority=10)
        await clock.advance(3600)

        assert await _nothing_claimable(store)
        waiting = await backdoor.read_item(before.id)
        assert waiting is not None
        assert waiting.status is WorkStatus.QUEUED

        assert await store.resume_kind(ALPHA) is True
        assert [(await claim(store)).id, (await claim(store)).id] == [during.id, before.id]

    async def test_an_item_that_becomes_due_during_the_pause_waits_for_the_resume(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        delayed = await queue.enqueue(AlphaJob(), delay=timedelta(seconds=30))
        await store.pause_kind(ALPHA)
        await clock.advance(31)

        assert await _nothing_claimable(store)
        await store.resume_kind(ALPHA)
        assert (await claim(store)).id == delayed.id

    async def test_a_paused_kind_s_waiting_items_do_not_set_when_a_worker_wakes(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(), delay=timedelta(seconds=30))
        await queue.enqueue(BetaJob(), delay=timedelta(seconds=90))
        await store.pause_kind(ALPHA)

        assert await store.next_run_at(ALL_KINDS) == clock.now() + timedelta(seconds=90)
        await store.resume_kind(ALPHA)
        assert await store.next_run_at(ALL_KINDS) == clock.now() + timedelta(seconds=30)

    async def test_a_running_item_of_a_paused_kind_runs_on_and_finishes(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        running = await claim(store)

        await store.pause_kind(ALPHA)

        answer = await store.heartbeat(running.lease, progress={"done": 1}, lease_duration=LEASE)
        assert answer is HeartbeatAnswer.HELD
        assert await store.finish(running.lease, RunOutcome.succeeded({"done": 2})) is True
        finished = await backdoor.read_item(running.id)
        assert finished is not None
        assert finished.status is WorkStatus.SUCCEEDED

    async def test_a_completion_still_ends_its_run_but_claims_nothing_paused(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(BetaJob())
        running = await claim(store)
        await queue.enqueue(AlphaJob())
        await store.pause_kind(ALPHA)

        completed, following = await store.complete_and_claim(
            running.lease, progress=None, kinds=ALL_KINDS, worker_id=WORKER, lease_duration=LEASE
        )

        assert (completed, following) == (True, None)

    async def test_completions_of_many_leases_claim_nothing_paused(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(BetaJob())
        running = await claim(store)
        await queue.enqueue(AlphaJob())
        beta = await queue.enqueue(BetaJob(label="next"))
        await store.pause_kind(ALPHA)

        answers = await store.complete_and_claim_many(
            [(running.lease, None), (running.lease, None)],
            kinds=ALL_KINDS,
            worker_id=WORKER,
            lease_duration=LEASE,
        )

        assert [following.id if following else None for _, following in answers] == [
            beta.id,
            None,
        ]

    async def test_a_pause_says_since_when_and_why(
        self, store: WorkStore, clock: FakeClock
    ) -> None:
        pause = await store.pause_kind(ALPHA, reason=f"  {REASON}\n")

        assert pause == KindPause(kind=ALPHA, paused_at=clock.now(), reason=REASON)

    @pytest.mark.parametrize("reason", [None, "", "  \t"], ids=["none", "empty", "blank"])
    async def test_a_pause_without_a_reason_has_none(
        self, store: WorkStore, reason: str | None
    ) -> None:
        assert (await store.pause_kind(ALPHA, reason=reason)).reason is None

    async def test_pausing_a_paused_kind_keeps_the_pause_in_force(
        self, store: WorkStore, clock: FakeClock
    ) -> None:
        first = await store.pause_kind(ALPHA, reason=REASON)
        await clock.advance(60)

        assert await store.pause_kind(ALPHA, reason="another reason") == first
        assert await store.pause_kind(BETA) == KindPause(BETA, clock.now(), None)

    async def test_a_resume_says_whether_the_kind_was_paused(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob())
        await store.pause_kind(ALPHA)

        assert await store.resume_kind(BETA) is False
        assert await _nothing_claimable(store)
        assert await store.resume_kind(ALPHA) is True
        assert await store.resume_kind(ALPHA) is False
        assert (await claim(store)).id == enqueued.id

    async def test_a_kind_paused_again_after_a_resume_is_a_new_pause(
        self, store: WorkStore, clock: FakeClock
    ) -> None:
        await store.pause_kind(ALPHA, reason=REASON)
        await store.resume_kind(ALPHA)
        await clock.advance(5)

        assert await store.pause_kind(ALPHA) == KindPause(ALPHA, clock.now(), None)

    @pytest.mark.parametrize(
        ("kind", "reason", "error"),
        [
            pytest.param("", None, "a pause names a kind", id="no kind"),
            pytest.param("  ", None, "a pause names a kind", id="a blank kind"),
            pytest.param("a\x00b", None, "a kind name cannot hold a NUL character", id="NUL kind"),
            pytest.param(
                ALPHA, "stop\x00now", "a pause reason cannot hold a NUL character", id="NUL reason"
            ),
            pytest.param(
                ALPHA, "stop \ud800", "a pause reason cannot hold a lone surrogate", id="surrogate"
            ),
            pytest.param(
                ALPHA,
                "x" * (MAX_PAUSE_REASON_LENGTH + 1),
                f"a pause reason is at most {MAX_PAUSE_REASON_LENGTH} characters, "
                f"not {MAX_PAUSE_REASON_LENGTH + 1}",
                id="too long",
            ),
        ],
    )
    async def test_a_pause_no_store_can_hold_is_refused_and_pauses_nothing(
        self, queue: WorkQueue, store: WorkStore, kind: str, reason: str | None, error: str
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob())

        with pytest.raises(InvalidPauseError) as refused:
            await store.pause_kind(kind, reason=reason)

        assert str(refused.value) == error
        assert (await claim(store)).id == enqueued.id

    async def test_the_longest_reason_is_kept_whole(self, store: WorkStore) -> None:
        longest = "y" * MAX_PAUSE_REASON_LENGTH

        assert (await store.pause_kind(ALPHA, reason=longest)).reason == longest
