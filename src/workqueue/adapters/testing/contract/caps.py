"""Contract: at most N items of a capped kind run at once, across every worker (docs/adr/0035).

A capped kind has N slots. A claim of one of its items takes a free slot with
it, and every end of the item's run frees the slot again; a kind with no free
slot is passed over as a paused kind is. What the tests leave open, as the ADR
does: the order of a claim over a capped kind with free slots against other
kinds (a store may claim the capped kinds in a statement of their own), and which
running items hold the slots after a cap is lowered below their count (only that
no claim starts while all N are held).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import ClassVar

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.fixtures import StoreFactory
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
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
    MAX_CAP,
    CancelOutcome,
    CapSource,
    EnqueueRequest,
    InvalidCapError,
    KindCap,
    RecoveryResult,
    RunOutcome,
    WorkItem,
    WorkQueue,
    WorkStatus,
    WorkStore,
)

__all__ = ["CapContract"]

ALPHA = ContractKind.ALPHA.value
BETA = ContractKind.BETA.value
GAMMA = ContractKind.GAMMA.value
ONLY_ALPHA = (ALPHA,)
LATER = timedelta(hours=1)

ENDINGS: dict[str, Callable[[datetime], RunOutcome]] = {
    "succeeded": lambda now: RunOutcome.succeeded({"pages": 3}, {"rows": 1}),
    "failed": lambda now: RunOutcome.failed("boom"),
    "retried": lambda now: RunOutcome.retried("partner down", now + LATER),
    "snoozed": lambda now: RunOutcome.snoozed(now + LATER),
    "released": lambda now: RunOutcome.released(),
    "cancelled": lambda now: RunOutcome.cancelled(),
}
"""Every way a holder ends a run, by name: each must free the run's slot."""


async def _claim_alpha(store: WorkStore, worker_id: str = WORKER) -> WorkItem | None:
    return await store.claim(ONLY_ALPHA, worker_id=worker_id, lease_duration=LEASE)


async def _enqueue_alphas(queue: WorkQueue, count: int) -> list[int]:
    results = await queue.enqueue_many(
        [EnqueueRequest(AlphaJob(number=number)) for number in range(count)]
    )
    return [result.id for result in results]


async def _running_ids(backdoor: Backdoor, kind: str) -> list[int]:
    return [
        item.id
        for item in await backdoor.all_items()
        if item.kind == kind and item.status is WorkStatus.RUNNING
    ]


async def _status(backdoor: Backdoor, item_id: int) -> WorkStatus:
    item = await backdoor.read_item(item_id)
    assert item is not None, f"item {item_id} is gone"
    return item.status


class CapContract:
    """Issue 28 point 2: a fleet-wide cap per kind, its slots, and who sets it.

    ``cap_claimers_per_round`` and ``cap_rounds`` size the race of claimers
    released together over a capped backlog, ``cap_drainers`` and
    ``cap_drain_items`` the race of workers draining a capped kind (see
    :mod:`workqueue.adapters.testing.contract.race`); an adapter may raise them,
    never lower them.
    """

    cap_claimers_per_round: ClassVar[int] = 8
    cap_rounds: ClassVar[int] = 30
    cap_drainers: ClassVar[int] = 8
    cap_drain_items: ClassVar[int] = 60

    # -- claims ------------------------------------------------------------

    async def test_a_kind_at_its_cap_is_passed_over_and_other_kinds_are_claimed_in_order(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        alphas = await _enqueue_alphas(queue, 3)
        first_beta = await queue.enqueue(BetaJob(label="first"))
        urgent_beta = await queue.enqueue(BetaJob(label="urgent"), priority=10)
        await store.cap_kind(ALPHA, 2)

        assert [(await claim(store, kinds=ONLY_ALPHA)).id for _ in range(2)] == alphas[:2]
        assert await _claim_alpha(store) is None
        assert [(await claim(store)).id for _ in range(2)] == [urgent_beta.id, first_beta.id]
        assert await store.claim(ALL_KINDS, worker_id=WORKER, lease_duration=LEASE) is None
        assert await _status(backdoor, alphas[2]) is WorkStatus.QUEUED

    async def test_items_over_the_cap_stay_queued_and_run_later_in_claim_order(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        plain = await queue.enqueue(AlphaJob(number=1))
        urgent = await queue.enqueue(AlphaJob(number=2), priority=5)
        later_plain = await queue.enqueue(AlphaJob(number=3))
        later_urgent = await queue.enqueue(AlphaJob(number=4), priority=5)
        await store.cap_kind(ALPHA, 1)

        order: list[int] = []
        while (item := await _claim_alpha(store)) is not None:
            order.append(item.id)
            assert await _claim_alpha(store) is None, "a second item ran beside the first"
            assert await _running_ids(backdoor, ALPHA) == [item.id]
            assert await store.finish(item.lease, RunOutcome.succeeded())

        assert order == [urgent.id, later_urgent.id, plain.id, later_plain.id]

    async def test_an_item_of_a_capped_kind_that_becomes_due_waits_for_a_free_slot(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        delayed = await queue.enqueue(AlphaJob(number=2), delay=timedelta(seconds=30))
        await store.cap_kind(ALPHA, 1)
        running = await claim(store, kinds=ONLY_ALPHA)
        await clock.advance(31)

        assert await _claim_alpha(store) is None
        assert await store.finish(running.lease, RunOutcome.succeeded())
        assert (await claim(store, kinds=ONLY_ALPHA)).id == delayed.id

    async def test_a_paused_kind_is_claimed_by_no_one_whatever_its_free_slots(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        first, second = await _enqueue_alphas(queue, 2)
        await store.cap_kind(ALPHA, 2)
        running = await claim(store, kinds=ONLY_ALPHA)

        await store.pause_kind(ALPHA)

        assert await _claim_alpha(store) is None
        assert await store.finish(running.lease, RunOutcome.succeeded())
        assert await _claim_alpha(store) is None
        (cap,) = await store.caps()
        assert cap.running == 0
        await store.resume_kind(ALPHA)
        assert (running.id, (await claim(store, kinds=ONLY_ALPHA)).id) == (first, second)

    async def test_a_pause_and_a_resume_leave_the_slots_of_running_items_held(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await _enqueue_alphas(queue, 2)
        await store.cap_kind(ALPHA, 1)
        running = await claim(store, kinds=ONLY_ALPHA)

        await store.pause_kind(ALPHA)
        await store.resume_kind(ALPHA)

        assert await _claim_alpha(store) is None
        assert [cap.running for cap in await store.caps()] == [1]
        assert await store.finish(running.lease, RunOutcome.succeeded())
        assert await _claim_alpha(store) is not None

    # -- every end of a run frees its slot ---------------------------------

    @pytest.mark.parametrize("ending", sorted(ENDINGS))
    async def test_every_end_of_a_run_frees_its_slot(
        self,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
        ending: str,
    ) -> None:
        first, second = await _enqueue_alphas(queue, 2)
        await store.cap_kind(ALPHA, 1)
        running = await claim(store, kinds=ONLY_ALPHA)
        assert await _claim_alpha(store) is None

        assert await store.finish(running.lease, ENDINGS[ending](clock.now()))

        following = await claim(store, kinds=ONLY_ALPHA)
        # A release returns the item at once, first in the claim order; the others
        # leave the second item next.
        assert following.id == (first if ending == "released" else second)
        assert await _running_ids(backdoor, ALPHA) == [following.id]
        assert [cap.running for cap in await store.caps()] == [1]
        assert await _claim_alpha(store) is None

    async def test_a_cancel_request_keeps_the_slot_until_the_holder_ends_the_run(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        _, second = await _enqueue_alphas(queue, 2)
        await store.cap_kind(ALPHA, 1)
        running = await claim(store, kinds=ONLY_ALPHA)

        assert await store.cancel(running.id, reason="wrong input") is CancelOutcome.REQUESTED
        assert await _claim_alpha(store) is None

        assert await store.finish(running.lease, RunOutcome.cancelled())
        assert (await claim(store, kinds=ONLY_ALPHA)).id == second

    async def test_lease_recovery_frees_the_slot_of_a_dead_workers_item(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        first, second = await _enqueue_alphas(queue, 2)
        await store.cap_kind(ALPHA, 1)
        dead = await claim(store, kinds=ONLY_ALPHA, worker_id="died")
        assert await _claim_alpha(store) is None
        await expire_the_lease(clock)

        assert await store.recover_expired(max_stalls=MAX_STALLS) == RecoveryResult(
            requeued=[dead.id]
        )
        assert [cap.running for cap in await store.caps()] == [0]

        again = await claim(store, kinds=ONLY_ALPHA, worker_id="alive")
        assert (again.id, again.attempt, again.stalls) == (first, 2, 1)
        assert await _claim_alpha(store) is None
        assert await store.finish(again.lease, RunOutcome.succeeded())
        assert (await claim(store, kinds=ONLY_ALPHA)).id == second

    async def test_a_recovery_that_fails_an_item_at_the_stall_limit_frees_its_slot(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        first, second = await _enqueue_alphas(queue, 2)
        await store.cap_kind(ALPHA, 1)
        last_try = await running_after_stalls(store, clock, MAX_STALLS - 1)
        assert last_try.id == first
        await expire_the_lease(clock)

        assert (await store.recover_expired(max_stalls=MAX_STALLS)).stalled == [first]

        assert await _status(backdoor, first) is WorkStatus.FAILED
        assert (await claim(store, kinds=ONLY_ALPHA)).id == second

    async def test_a_recovery_that_cancels_a_requested_item_frees_its_slot(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        first, second = await _enqueue_alphas(queue, 2)
        await store.cap_kind(ALPHA, 1)
        running = await claim(store, kinds=ONLY_ALPHA)
        await store.cancel(running.id, reason="stop")
        await expire_the_lease(clock)

        assert (await store.recover_expired(max_stalls=MAX_STALLS)).cancelled == [first]

        assert await _status(backdoor, first) is WorkStatus.CANCELLED
        assert (await claim(store, kinds=ONLY_ALPHA)).id == second

    async def test_a_recovery_that_supersedes_an_item_by_its_queued_twin_frees_its_slot(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="nightly")
        await store.cap_kind(ALPHA, 1)
        running = await claim(store, kinds=ONLY_ALPHA)
        twin = await queue.enqueue(AlphaJob(number=2), dedup_key="nightly")
        assert twin.created
        assert await _claim_alpha(store) is None
        await expire_the_lease(clock)

        assert (await store.recover_expired(max_stalls=MAX_STALLS)).superseded == [running.id]

        assert (await claim(store, kinds=ONLY_ALPHA)).id == twin.id

    # -- completions that claim ----------------------------------------------

    async def test_a_completion_hands_its_slot_to_the_next_item_of_its_kind(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        first, second, third = await _enqueue_alphas(queue, 3)
        await store.cap_kind(ALPHA, 1)
        running = await claim(store, kinds=ONLY_ALPHA)

        completed, following = await store.complete_and_claim(
            running.lease, progress=None, kinds=ONLY_ALPHA, worker_id=WORKER, lease_duration=LEASE
        )

        assert completed
        assert following is not None
        assert (running.id, following.id) == (first, second)
        assert await _running_ids(backdoor, ALPHA) == [second]
        assert await _claim_alpha(store) is None
        assert await _status(backdoor, third) is WorkStatus.QUEUED

    async def test_a_completion_beside_a_kind_at_its_cap_claims_another_kind(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await store.cap_kind(ALPHA, 1)
        await claim(store, kinds=ONLY_ALPHA)
        await queue.enqueue(BetaJob(label="first"))
        beta = await claim(store)
        await queue.enqueue(AlphaJob(number=2))
        next_beta = await queue.enqueue(BetaJob(label="next"))

        completed, following = await store.complete_and_claim(
            beta.lease, progress=None, kinds=ALL_KINDS, worker_id=WORKER, lease_duration=LEASE
        )

        assert completed
        assert following is not None
        assert following.id == next_beta.id

    async def test_completions_of_many_leases_hand_over_their_slots(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        ids = await _enqueue_alphas(queue, 5)
        await store.cap_kind(ALPHA, 2)
        running = [await claim(store, kinds=ONLY_ALPHA) for _ in range(2)]

        answers = await store.complete_and_claim_many(
            [(item.lease, None) for item in running],
            kinds=ONLY_ALPHA,
            worker_id="lanes",
            lease_duration=LEASE,
        )

        assert [completed for completed, _ in answers] == [True, True]
        claimed = sorted(item.id for _, item in answers if item is not None)
        assert claimed == ids[2:4]
        assert await _running_ids(backdoor, ALPHA) == claimed
        assert await _status(backdoor, ids[4]) is WorkStatus.QUEUED

    async def test_completions_of_many_leases_claim_no_more_than_the_free_slots(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(BetaJob())
        await store.cap_kind(ALPHA, 1)
        alpha, beta = await claim(store, kinds=ONLY_ALPHA), await claim(store)
        second, third = await _enqueue_alphas(queue, 2)

        answers = await store.complete_and_claim_many(
            [(alpha.lease, None), (beta.lease, None)],
            kinds=ONLY_ALPHA,
            worker_id="lanes",
            lease_duration=LEASE,
        )

        assert [completed for completed, _ in answers] == [True, True]
        assert [item.id for _, item in answers if item is not None] == [second]
        assert await _running_ids(backdoor, ALPHA) == [second]
        assert await _status(backdoor, third) is WorkStatus.QUEUED

    # -- setting, changing and clearing a cap --------------------------------

    async def test_a_cap_says_its_count_who_set_it_when_and_how_many_slots_are_held(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await _enqueue_alphas(queue, 2)
        set_at = clock.now()

        assert await store.cap_kind(ALPHA, 3) == KindCap(ALPHA, 3, CapSource.OPERATOR, set_at, 0)
        await clock.advance(60)
        await claim(store, kinds=ONLY_ALPHA)
        await claim(store, kinds=ONLY_ALPHA)

        assert await store.caps() == [KindCap(ALPHA, 3, CapSource.OPERATOR, set_at, 2)]

    async def test_the_caps_in_force_are_listed_by_kind(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        assert await store.caps() == []
        gamma_at = clock.now()
        await store.cap_kind(GAMMA, 4, source=CapSource.POLICY)
        await clock.advance(5)
        alpha_at = clock.now()
        await store.cap_kind(ALPHA, 2)
        await store.cap_kind(BETA, 7)
        await store.cap_kind(BETA, None)
        await queue.enqueue(AlphaJob())
        await claim(store)

        assert await store.caps() == [
            KindCap(ALPHA, 2, CapSource.OPERATOR, alpha_at, 1),
            KindCap(GAMMA, 4, CapSource.POLICY, gamma_at, 0),
        ]

    async def test_a_kind_no_item_has_yet_can_be_capped(self, store: WorkStore) -> None:
        cap = await store.cap_kind("contract_not_enqueued_yet", 2)

        assert cap is not None
        assert (cap.kind, cap.max_running, cap.running) == ("contract_not_enqueued_yet", 2, 0)
        assert await store.caps() == [cap]

    async def test_a_cap_counts_the_running_items_of_its_kind_and_no_other(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        _, _, third = await _enqueue_alphas(queue, 3)
        await queue.enqueue(BetaJob())
        running = [await claim(store, kinds=ONLY_ALPHA) for _ in range(2)]
        await claim(store, kinds=(BETA,))

        cap = await store.cap_kind(ALPHA, 2)

        assert cap is not None
        assert cap.running == 2
        assert await _claim_alpha(store) is None
        assert await store.finish(running[1].lease, RunOutcome.succeeded())
        assert (await claim(store, kinds=ONLY_ALPHA)).id == third

    async def test_a_cap_lowered_below_the_running_count_claims_nothing_until_slots_free(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        ids = await _enqueue_alphas(queue, 6)
        await store.cap_kind(ALPHA, 4)
        running = [await claim(store, kinds=ONLY_ALPHA) for _ in range(3)]

        lowered = await store.cap_kind(ALPHA, 2)

        assert lowered is not None
        assert (lowered.max_running, lowered.running) == (2, 2)
        assert await _claim_alpha(store) is None
        heartbeat = await store.heartbeat(running[2].lease, progress=None, lease_duration=LEASE)
        assert heartbeat, "a lowered cap ended a run it let finish"
        for item in running:
            assert await store.finish(item.lease, RunOutcome.succeeded())
        # All three have finished: the two slots are free, and no more.
        assert [(await claim(store, kinds=ONLY_ALPHA)).id for _ in range(2)] == ids[3:5]
        assert await _claim_alpha(store) is None
        assert await _running_ids(backdoor, ALPHA) == ids[3:5]

    async def test_a_raised_cap_lets_more_run_at_once(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        ids = await _enqueue_alphas(queue, 4)
        await store.cap_kind(ALPHA, 1)
        await claim(store, kinds=ONLY_ALPHA)
        assert await _claim_alpha(store) is None

        raised = await store.cap_kind(ALPHA, 3)

        assert raised is not None
        assert (raised.max_running, raised.running) == (3, 1)
        assert [(await claim(store, kinds=ONLY_ALPHA)).id for _ in range(2)] == ids[1:3]
        assert await _claim_alpha(store) is None

    async def test_a_cleared_cap_frees_the_kind_at_once(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        ids = await _enqueue_alphas(queue, 3)
        await store.cap_kind(ALPHA, 1)
        await claim(store, kinds=ONLY_ALPHA)
        assert await _claim_alpha(store) is None

        assert await store.cap_kind(ALPHA, None) is None

        assert await store.caps() == []
        assert [(await claim(store, kinds=ONLY_ALPHA)).id for _ in range(2)] == ids[1:]
        assert await _running_ids(backdoor, ALPHA) == ids

    async def test_clearing_a_kind_without_a_cap_changes_nothing(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await store.cap_kind(BETA, 1)

        assert await store.cap_kind(ALPHA, None) is None
        assert await store.cap_kind(ALPHA, None, source=CapSource.POLICY) is None
        assert [cap.kind for cap in await store.caps()] == [BETA]

    async def test_a_kind_capped_again_after_a_clear_counts_its_running_items_afresh(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        ids = await _enqueue_alphas(queue, 4)
        await store.cap_kind(ALPHA, 1)
        first = await claim(store, kinds=ONLY_ALPHA)
        await store.cap_kind(ALPHA, None)
        second = await claim(store, kinds=ONLY_ALPHA)

        capped = await store.cap_kind(ALPHA, 2)

        assert capped is not None
        assert capped.running == 2
        assert await _claim_alpha(store) is None
        for item in (first, second):
            assert await store.finish(item.lease, RunOutcome.succeeded())
        assert [(await claim(store, kinds=ONLY_ALPHA)).id for _ in range(2)] == ids[2:]

    async def test_the_largest_cap_is_taken(self, queue: WorkQueue, store: WorkStore) -> None:
        ids = await _enqueue_alphas(queue, 3)

        cap = await store.cap_kind(ALPHA, MAX_CAP)

        assert cap is not None
        assert (cap.max_running, cap.running) == (MAX_CAP, 0)
        assert [(await claim(store, kinds=ONLY_ALPHA)).id for _ in ids] == ids

    # -- who sets a cap --------------------------------------------------------

    async def test_setting_the_cap_in_force_again_changes_nothing(
        self, store: WorkStore, clock: FakeClock
    ) -> None:
        operators = await store.cap_kind(ALPHA, 2)
        policys = await store.cap_kind(BETA, 3, source=CapSource.POLICY)
        await clock.advance(60)

        assert await store.cap_kind(ALPHA, 2) == operators
        assert await store.cap_kind(BETA, 3, source=CapSource.POLICY) == policys
        assert await store.caps() == [operators, policys]

    async def test_a_policy_never_changes_an_operators_cap(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        ids = await _enqueue_alphas(queue, 3)
        operators = await store.cap_kind(ALPHA, 2)
        await clock.advance(60)

        assert await store.cap_kind(ALPHA, 5, source=CapSource.POLICY) == operators
        assert await store.cap_kind(ALPHA, 2, source=CapSource.POLICY) == operators
        assert await store.cap_kind(ALPHA, None, source=CapSource.POLICY) == operators

        assert await store.caps() == [operators]
        assert [(await claim(store, kinds=ONLY_ALPHA)).id for _ in range(2)] == ids[:2]
        assert await _claim_alpha(store) is None

    async def test_an_operators_cap_replaces_a_policys(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await _enqueue_alphas(queue, 3)
        await store.cap_kind(ALPHA, 1, source=CapSource.POLICY)
        await claim(store, kinds=ONLY_ALPHA)
        await clock.advance(60)

        operators = await store.cap_kind(ALPHA, 2)

        assert operators == KindCap(ALPHA, 2, CapSource.OPERATOR, clock.now(), 1)
        assert await store.caps() == [operators]
        await claim(store, kinds=ONLY_ALPHA)
        assert await _claim_alpha(store) is None

    async def test_an_operator_setting_a_policys_count_takes_the_cap_over(
        self, store: WorkStore, clock: FakeClock
    ) -> None:
        await store.cap_kind(ALPHA, 2, source=CapSource.POLICY)
        await clock.advance(60)

        operators = await store.cap_kind(ALPHA, 2)

        assert operators == KindCap(ALPHA, 2, CapSource.OPERATOR, clock.now(), 0)
        await clock.advance(60)
        assert await store.cap_kind(ALPHA, 7, source=CapSource.POLICY) == operators

    async def test_a_policys_new_count_replaces_its_old_one(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        ids = await _enqueue_alphas(queue, 4)
        await store.cap_kind(ALPHA, 1, source=CapSource.POLICY)
        await clock.advance(60)

        policys = await store.cap_kind(ALPHA, 3, source=CapSource.POLICY)

        assert policys == KindCap(ALPHA, 3, CapSource.POLICY, clock.now(), 0)
        assert [(await claim(store, kinds=ONLY_ALPHA)).id for _ in range(3)] == ids[:3]
        assert await _claim_alpha(store) is None

    async def test_an_operator_clears_a_policys_cap(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        ids = await _enqueue_alphas(queue, 2)
        await store.cap_kind(ALPHA, 1, source=CapSource.POLICY)
        await claim(store, kinds=ONLY_ALPHA)

        assert await store.cap_kind(ALPHA, None) is None

        assert await store.caps() == []
        assert (await claim(store, kinds=ONLY_ALPHA)).id == ids[1]

    @pytest.mark.parametrize(
        ("kind", "max_running", "error"),
        [
            pytest.param("", 2, "a cap names a kind", id="no kind"),
            pytest.param(" \t", 2, "a cap names a kind", id="a blank kind"),
            pytest.param("a\x00b", 2, "a kind name cannot hold a NUL character", id="NUL kind"),
            pytest.param(
                "a\ud800", 2, "a kind name cannot hold a lone surrogate", id="surrogate kind"
            ),
            pytest.param(ALPHA, 0, f"a cap is from 1 to {MAX_CAP}, not 0", id="zero"),
            pytest.param(ALPHA, -3, f"a cap is from 1 to {MAX_CAP}, not -3", id="negative"),
            pytest.param(
                ALPHA,
                MAX_CAP + 1,
                f"a cap is from 1 to {MAX_CAP}, not {MAX_CAP + 1}",
                id="past the largest",
            ),
            pytest.param(ALPHA, True, "a cap is a whole number, not bool", id="bool"),
            pytest.param(ALPHA, 2.0, "a cap is a whole number, not float", id="float"),
        ],
    )
    @pytest.mark.parametrize("source", list(CapSource), ids=str)
    async def test_a_cap_no_store_can_hold_is_refused_and_writes_nothing(
        self,
        queue: WorkQueue,
        store: WorkStore,
        kind: str,
        max_running: int,
        error: str,
        source: CapSource,
    ) -> None:
        ids = await _enqueue_alphas(queue, 2)
        in_force = await store.cap_kind(ALPHA, 1, source=source)

        with pytest.raises(InvalidCapError) as refused:
            await store.cap_kind(kind, max_running, source=source)

        assert str(refused.value) == error
        assert await store.caps() == [in_force]
        assert (await claim(store, kinds=ONLY_ALPHA)).id == ids[0]
        assert await _claim_alpha(store) is None

    # -- races -------------------------------------------------------------------

    async def test_claimers_released_together_over_a_capped_backlog_claim_at_most_the_cap(
        self, queue: WorkQueue, store: WorkStore, store_factory: StoreFactory, backdoor: Backdoor
    ) -> None:
        cap = 3
        # The store under test races too, beside stores of their own connections.
        stores = [store] + [await store_factory() for _ in range(self.cap_claimers_per_round - 1)]
        await store.cap_kind(ALPHA, cap)
        # Mostly more items than slots; now and then fewer, and as many.
        backlogs = (len(stores) + 2, len(stores), 2, cap, len(stores) + 5)
        for round_number in range(self.cap_rounds):
            backlog = backlogs[round_number % len(backlogs)]
            queued = await _enqueue_alphas(queue, backlog)

            claimed = await at_once(
                [partial(_claim_alpha, racer, f"claimer-{n}") for n, racer in enumerate(stores)]
            )

            items = [item for item in claimed if item is not None]
            ids = sorted(item.id for item in items)
            running = await _running_ids(backdoor, ALPHA)
            assert running == ids, (
                f"round {round_number + 1}: the claims returned {ids}, but {running} run"
            )
            assert len(ids) == len(set(ids)) == min(cap, backlog), (
                f"round {round_number + 1}: {len(stores)} claimers released together over "
                f"{backlog} queued items of a kind capped at {cap} got {ids}"
            )
            assert [held.running for held in await store.caps()] == [min(cap, backlog)]
            # A fresh start for the next round: every slot free, nothing queued.
            for item in items:
                assert await store.finish(item.lease, RunOutcome.succeeded())
            for item_id in sorted(set(queued) - set(ids)):
                assert await store.cancel(item_id, reason="next round") is CancelOutcome.CANCELLED

    async def test_workers_draining_a_capped_kind_never_run_more_than_the_cap_at_once(
        self, queue: WorkQueue, store_factory: StoreFactory, backdoor: Backdoor
    ) -> None:
        cap = 3
        ids = await _enqueue_alphas(queue, self.cap_drain_items)
        workers = [await store_factory() for _ in range(self.cap_drainers)]
        await workers[0].cap_kind(ALPHA, cap)
        running: set[int] = set()
        most_at_once = 0
        ran: list[int] = []

        async def drain(worker: WorkStore, worker_id: str) -> None:
            nonlocal most_at_once
            item = await _claim_alpha(worker, worker_id)
            while item is not None:
                running.add(item.id)
                most_at_once = max(most_at_once, len(running))
                ran.append(item.id)
                # Let the other workers in while this item runs.
                await asyncio.sleep(0)
                # Counted out before its completion is sent: an item is never counted
                # after its slot may have been handed on.
                running.discard(item.id)
                completed, item = await worker.complete_and_claim(
                    item.lease,
                    progress=None,
                    kinds=ONLY_ALPHA,
                    worker_id=worker_id,
                    lease_duration=LEASE,
                )
                assert completed

        await at_once([partial(drain, worker, f"drainer-{n}") for n, worker in enumerate(workers)])

        assert most_at_once <= cap, f"{most_at_once} items of a kind capped at {cap} ran at once"
        assert sorted(ran) == ids, "the drain left items of the capped kind behind"
        items = await backdoor.all_items()
        assert all(item.status is WorkStatus.SUCCEEDED and item.attempt == 1 for item in items)
        assert [held.running for held in await workers[0].caps()] == [0]
