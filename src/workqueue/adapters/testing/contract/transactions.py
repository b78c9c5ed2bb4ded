"""Contracts: an item exists if and only if the caller's transaction that enqueued it commits.

For producers that enqueue on the caller's connection (DESIGN.md part two,
"Producing inside the caller's transaction"); fixtures in
:mod:`workqueue.adapters.testing.contract.caller_transaction`. Every test runs real
transactions on connections of their own, several at once where it says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.caller_transaction import (
    CallerTransaction,
    CallerTransactionFactory,
    Isolation,
    LockWaits,
)
from workqueue.adapters.testing.contract.kinds import (
    AlphaJob,
    BetaJob,
    ContractKind,
    unvalidated_alpha_job,
)
from workqueue.adapters.testing.contract.steps import LEASE, WORKER
from workqueue.domain import (
    EnqueueFailedError,
    EnqueueRequest,
    EnqueueResult,
    InvalidDedupKeyError,
    InvalidPayloadError,
    WorkNotifications,
    WorkQueue,
    WorkStatus,
    WorkStore,
)

__all__ = ["PATIENCE", "CallerTransactionContract", "DedupAcrossTransactionsContract"]

T = TypeVar("T")

PATIENCE = 10.0
"""Seconds a test waits for what must happen (a wake-up, a waiting enqueue's answer)."""

# A registered waiter is in place once its task has run up to its first real wait.
_YIELDS_TO_START = 3


async def started(awaitable: Awaitable[T]) -> asyncio.Future[T]:
    """``awaitable`` running in the background, past its first steps."""
    future = asyncio.ensure_future(awaitable)
    for _ in range(_YIELDS_TO_START):
        await asyncio.sleep(0)
    return future


async def within_patience(future: Awaitable[T]) -> T:
    return await asyncio.wait_for(future, PATIENCE)


async def queued_payloads(backdoor: Backdoor) -> list[tuple[str, object, str | None]]:
    return [
        (item.kind, item.payload, item.dedup_key)
        for item in await backdoor.all_items()
        if item.status is WorkStatus.QUEUED
    ]


class CallerTransactionContract:
    """The item commits, rolls back and fails with the caller's transaction, and its
    notification with it."""

    async def test_a_rolled_back_enqueue_leaves_no_row_and_wakes_nobody(
        self,
        caller_transactions: CallerTransactionFactory,
        notifications: WorkNotifications,
        backdoor: Backdoor,
    ) -> None:
        alpha_woken = await started(notifications.wait_for_work({ContractKind.ALPHA}))
        beta_woken = await started(notifications.wait_for_work({ContractKind.BETA}))

        rolled_back = await caller_transactions()
        await rolled_back.queue.enqueue(AlphaJob(number=1), dedup_key="k")
        await rolled_back.queue.enqueue_many(
            [EnqueueRequest(AlphaJob(number=2)), EnqueueRequest(AlphaJob(number=3), "j")]
        )
        await rolled_back.rollback()
        # Notifications arrive in commit order: once a later commit's has arrived, a
        # notification of the rolled-back enqueue would have arrived before it.
        committed = await caller_transactions()
        await committed.queue.enqueue(BetaJob(label="later"))
        await committed.commit()
        await within_patience(beta_woken)

        assert not alpha_woken.done()
        alpha_woken.cancel()
        assert await queued_payloads(backdoor) == [("contract_beta", {"label": "later"}, None)]

    async def test_a_committed_enqueue_is_claimable_and_wakes_a_listening_worker_only_then(
        self,
        caller_transactions: CallerTransactionFactory,
        notifications: WorkNotifications,
        backdoor: Backdoor,
        store: WorkStore,
    ) -> None:
        alpha_woken = await started(notifications.wait_for_work({ContractKind.ALPHA}))
        beta_woken = await started(notifications.wait_for_work({ContractKind.BETA}))
        transaction = await caller_transactions()

        result = await transaction.queue.enqueue(AlphaJob(number=7), dedup_key="k")
        # Before the commit: nobody else sees it, nobody can claim it, nobody is woken
        # (a later commit's notification arrives first).
        probe = await caller_transactions()
        await probe.queue.enqueue(BetaJob())
        await probe.commit()
        await within_patience(beta_woken)
        assert not alpha_woken.done()
        assert [item.kind for item in await backdoor.all_items()] == ["contract_beta"]
        assert (
            await store.claim([ContractKind.ALPHA], worker_id=WORKER, lease_duration=LEASE)
        ) is None

        await transaction.commit()

        await within_patience(alpha_woken)
        claimed = await store.claim([ContractKind.ALPHA], worker_id=WORKER, lease_duration=LEASE)
        assert claimed is not None
        assert (claimed.id, claimed.payload, claimed.dedup_key) == (result.id, {"number": 7}, "k")

    async def test_enqueues_of_one_transaction_see_its_own_queued_items(
        self, caller_transactions: CallerTransactionFactory, backdoor: Backdoor
    ) -> None:
        transaction = await caller_transactions()

        first = await transaction.queue.enqueue(AlphaJob(number=1), dedup_key="k")
        again = await transaction.queue.enqueue(AlphaJob(number=2), dedup_key="k")
        batch = await transaction.queue.enqueue_many(
            [EnqueueRequest(AlphaJob(number=3), "k"), EnqueueRequest(BetaJob(), "k")]
        )
        await transaction.commit()

        assert first.created
        assert again == EnqueueResult(id=first.id, created=False)
        assert batch[0] == EnqueueResult(id=first.id, created=False)
        assert batch[1].created
        assert await queued_payloads(backdoor) == [
            ("contract_alpha", {"number": 1}, "k"),
            ("contract_beta", {"label": ""}, "k"),
        ]

    @pytest.mark.parametrize(
        ("bad", "error"),
        [
            (lambda queue: queue.enqueue(AlphaJob(), dedup_key=" "), InvalidDedupKeyError),
            (lambda queue: queue.enqueue(unvalidated_alpha_job()), InvalidPayloadError),
            (
                lambda queue: queue.enqueue_many(
                    [EnqueueRequest(AlphaJob(number=4)), EnqueueRequest(AlphaJob(), "")]
                ),
                InvalidDedupKeyError,
            ),
            (
                lambda queue: queue.enqueue_many(
                    [
                        EnqueueRequest(AlphaJob(number=5), "k"),
                        EnqueueRequest(unvalidated_alpha_job()),
                    ]
                ),
                InvalidPayloadError,
            ),
        ],
        ids=["bad key", "bad payload", "batch with a bad key", "batch with a bad payload"],
    )
    async def test_a_bad_request_sends_nothing_and_leaves_the_transaction_to_the_caller(
        self,
        caller_transactions: CallerTransactionFactory,
        backdoor: Backdoor,
        bad: Callable[[WorkQueue], Awaitable[object]],
        error: type[Exception],
    ) -> None:
        transaction = await caller_transactions()
        await transaction.queue.enqueue(AlphaJob(number=1))

        with pytest.raises(error):
            await bad(transaction.queue)

        # Had anything been sent and refused, the transaction would be aborted; had
        # anything been written, the commit would keep it.
        assert await transaction.caller_statement_runs()
        await transaction.commit()
        assert await queued_payloads(backdoor) == [("contract_alpha", {"number": 1}, None)]

    async def test_an_enqueue_in_an_aborted_transaction_raises_and_leaves_it_aborted(
        self, caller_transactions: CallerTransactionFactory, backdoor: Backdoor
    ) -> None:
        transaction = await caller_transactions()
        await transaction.queue.enqueue(AlphaJob(number=1))
        await transaction.fail_a_statement()

        with pytest.raises(EnqueueFailedError) as raised:
            await transaction.queue.enqueue(AlphaJob(number=2))

        assert raised.value.sqlstate == "25P02"
        assert await transaction.caller_statement_runs() is False
        await transaction.rollback()
        assert await backdoor.all_items() == []

    async def test_after_a_failed_enqueue_the_caller_may_roll_back_to_a_savepoint_and_commit(
        self, caller_transactions: CallerTransactionFactory, backdoor: Backdoor
    ) -> None:
        holder = await caller_transactions()
        await holder.queue.enqueue(AlphaJob(number=1), dedup_key="held")
        transaction = await caller_transactions()
        kept = await transaction.queue.enqueue(BetaJob(label="kept"))
        await transaction.savepoint()
        await transaction.limit_lock_waits(0.05)

        # The twin is uncommitted in holder: the enqueue waits for it, past the limit.
        with pytest.raises(EnqueueFailedError) as raised:
            await transaction.queue.enqueue(AlphaJob(number=2), dedup_key="held")

        assert raised.value.sqlstate == "55P03"
        assert await transaction.caller_statement_runs() is False
        await transaction.rollback_to_savepoint()
        assert await transaction.caller_statement_runs()
        await transaction.commit()
        await holder.rollback()
        items = await backdoor.all_items()
        assert [(item.id, item.payload) for item in items] == [(kept.id, {"label": "kept"})]


class DedupAcrossTransactionsContract:
    """An enqueue whose queued twin is uncommitted in another transaction waits for it:
    absorbed if that one commits, created if it rolls back; never two queued twins,
    never a deadlock of the queue's making."""

    async def test_an_enqueue_waits_for_an_uncommitted_twin_and_is_absorbed_when_it_commits(
        self,
        caller_transactions: CallerTransactionFactory,
        lock_waits: LockWaits,
        backdoor: Backdoor,
    ) -> None:
        first = await caller_transactions()
        second = await caller_transactions()
        created = await first.queue.enqueue(AlphaJob(number=1), dedup_key="k")

        waiting = await started(second.queue.enqueue(AlphaJob(number=2), dedup_key="k"))
        await lock_waits(1)
        assert not waiting.done()
        await first.commit()

        assert await within_patience(waiting) == EnqueueResult(id=created.id, created=False)
        await second.commit()
        assert await queued_payloads(backdoor) == [("contract_alpha", {"number": 1}, "k")]

    async def test_an_enqueue_waits_for_an_uncommitted_twin_and_creates_when_it_rolls_back(
        self,
        caller_transactions: CallerTransactionFactory,
        lock_waits: LockWaits,
        backdoor: Backdoor,
    ) -> None:
        first = await caller_transactions()
        second = await caller_transactions()
        rolled_back = await first.queue.enqueue(AlphaJob(number=1), dedup_key="k")

        waiting = await started(second.queue.enqueue(AlphaJob(number=2), dedup_key="k"))
        await lock_waits(1)
        await first.rollback()

        result = await within_patience(waiting)
        assert result.created
        assert result.id != rolled_back.id
        await second.commit()
        assert await queued_payloads(backdoor) == [("contract_alpha", {"number": 2}, "k")]

    async def test_a_batch_waits_for_an_uncommitted_twin_and_is_absorbed_when_it_commits(
        self,
        caller_transactions: CallerTransactionFactory,
        lock_waits: LockWaits,
        backdoor: Backdoor,
    ) -> None:
        first = await caller_transactions()
        second = await caller_transactions()
        held = await first.queue.enqueue(AlphaJob(number=1), dedup_key="k")

        waiting = await started(
            second.queue.enqueue_many(
                [EnqueueRequest(BetaJob(), "k"), EnqueueRequest(AlphaJob(number=2), "k")]
            )
        )
        await lock_waits(1)
        await first.commit()

        beta, alpha = await within_patience(waiting)
        assert beta.created
        assert alpha == EnqueueResult(id=held.id, created=False)
        await second.commit()
        assert len(await queued_payloads(backdoor)) == 2

    async def test_batches_taking_keys_in_opposite_orders_do_not_deadlock(
        self,
        caller_transactions: CallerTransactionFactory,
        lock_waits: LockWaits,
        backdoor: Backdoor,
    ) -> None:
        # holder keeps "b" uncommitted, so the first batch stops at it holding what it
        # inserted before; the second batch, in the opposite order, then starts. Were
        # keys taken in request order, the second would hold "c" and wait for "a",
        # the first would go on to "c" once "b" is free: a deadlock.
        holder = await caller_transactions()
        first = await caller_transactions()
        second = await caller_transactions()
        held = await holder.queue.enqueue(AlphaJob(number=0), dedup_key="b")

        first_batch = await started(
            first.queue.enqueue_many(
                [
                    EnqueueRequest(AlphaJob(number=1), "a"),
                    EnqueueRequest(AlphaJob(number=2), "b"),
                    EnqueueRequest(AlphaJob(number=3), "c"),
                ]
            )
        )
        await lock_waits(1)
        second_batch = await started(
            second.queue.enqueue_many(
                [EnqueueRequest(AlphaJob(number=4), "c"), EnqueueRequest(AlphaJob(number=5), "a")]
            )
        )
        await lock_waits(2)
        await holder.commit()
        a, b, c = await within_patience(first_batch)
        await first.commit()
        second_c, second_a = await within_patience(second_batch)
        await second.commit()

        assert a.created
        assert b == EnqueueResult(id=held.id, created=False)
        assert c.created
        assert second_c == EnqueueResult(id=c.id, created=False)
        assert second_a == EnqueueResult(id=a.id, created=False)
        assert sorted(str(key) for _, _, key in await queued_payloads(backdoor)) == ["a", "b", "c"]

    async def test_many_transactions_enqueueing_one_key_leave_one_queued_item(
        self,
        caller_transactions: CallerTransactionFactory,
        lock_waits: LockWaits,
        backdoor: Backdoor,
    ) -> None:
        # Five enqueues wait for a sixth transaction's twin. Each time the holder of
        # the uncommitted twin rolls back, exactly one of the waiting enqueues creates
        # and the rest wait for it; once one commits, the rest are absorbed by it.
        holder, *others = [await caller_transactions() for _ in range(6)]
        await holder.queue.enqueue(AlphaJob(number=0), dedup_key="k")
        waiting: dict[asyncio.Future[EnqueueResult], CallerTransaction] = {}
        for number, transaction in enumerate(others, start=1):
            enqueue = transaction.queue.enqueue(AlphaJob(number=number), dedup_key="k")
            waiting[await started(enqueue)] = transaction
            await lock_waits(number)

        await holder.rollback()
        for ending in ("rollback", "rollback", "commit"):
            done, _ = await asyncio.wait(
                waiting, timeout=PATIENCE, return_when=asyncio.FIRST_COMPLETED
            )
            assert len(done) == 1, "one waiting enqueue at a time may create"
            (winner,) = done
            created = winner.result()
            assert created.created
            transaction = waiting.pop(winner)
            await (transaction.rollback() if ending == "rollback" else transaction.commit())

        absorbed = [await within_patience(enqueue) for enqueue in waiting]
        for transaction in waiting.values():
            await transaction.commit()
        assert absorbed == [EnqueueResult(id=created.id, created=False)] * 2
        queued = [item for item in await backdoor.all_items() if item.status is WorkStatus.QUEUED]
        assert [item.id for item in queued] == [created.id]

    @pytest.mark.parametrize("isolation", [Isolation.REPEATABLE_READ, Isolation.SERIALIZABLE])
    async def test_under_a_snapshot_isolation_a_twin_committed_while_waiting_is_a_conflict(
        self,
        caller_transactions: CallerTransactionFactory,
        lock_waits: LockWaits,
        backdoor: Backdoor,
        isolation: Isolation,
    ) -> None:
        # The waiting transaction's snapshot cannot see the twin it would be absorbed
        # by: PostgreSQL refuses it as a serialization failure, and the enqueue
        # reports that at once (no pass can see the twin either). A retry, in a new
        # transaction, is absorbed.
        first = await caller_transactions()
        second = await caller_transactions(isolation=isolation)
        created = await first.queue.enqueue(AlphaJob(number=1), dedup_key="k")

        waiting = await started(second.queue.enqueue(AlphaJob(number=2), dedup_key="k"))
        await lock_waits(1)
        await first.commit()

        with pytest.raises(EnqueueFailedError) as raised:
            await within_patience(waiting)
        assert raised.value.sqlstate == "40001"
        await second.rollback()
        retry = await caller_transactions(isolation=isolation)
        assert await retry.queue.enqueue(AlphaJob(number=2), dedup_key="k") == EnqueueResult(
            id=created.id, created=False
        )
        await retry.commit()
        assert await queued_payloads(backdoor) == [("contract_alpha", {"number": 1}, "k")]
