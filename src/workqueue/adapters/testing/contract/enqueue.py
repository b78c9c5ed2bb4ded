"""Contract: enqueue and enqueue_many insert queued items, absorb queued twins, check first."""

from __future__ import annotations

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import (
    AlphaJob,
    BetaJob,
    ContractKind,
    unvalidated_alpha_job,
)
from workqueue.adapters.testing.contract.steps import LEASE, claim
from workqueue.domain import (
    MAX_DEDUP_KEY_LENGTH,
    EnqueueRequest,
    EnqueueResult,
    InvalidDedupKeyError,
    InvalidPayloadError,
    WorkQueue,
    WorkStatus,
    WorkStore,
)

__all__ = ["EnqueueContract"]

UNUSABLE_DEDUP_KEYS = ["", "   ", "k" * (MAX_DEDUP_KEY_LENGTH + 1), "nul\x00inside"]


class EnqueueContract:
    """Semantics 1: what an enqueue inserts, and when a queued twin absorbs it."""

    async def test_an_enqueue_inserts_a_queued_item_at_attempt_zero(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await clock.advance(7)
        result = await queue.enqueue(AlphaJob(number=5), dedup_key="five")

        assert result.created
        item = await backdoor.read_item(result.id)
        assert item is not None
        assert (item.kind, item.payload, item.dedup_key) == (
            "contract_alpha",
            {"number": 5},
            "five",
        )
        assert (item.status, item.attempt, item.stalls) == (WorkStatus.QUEUED, 0, 0)
        assert item.enqueued_at == clock.now()
        assert (item.started_at, item.heartbeat_at, item.lease_expires_at) == (None, None, None)
        assert (item.finished_at, item.worker_id, item.error, item.progress) == (None,) * 4

    async def test_each_enqueue_without_a_key_inserts_a_new_item(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        first = await queue.enqueue(AlphaJob(number=1))
        second = await queue.enqueue(AlphaJob(number=1))

        assert first.created
        assert second.created
        assert second.id > first.id
        assert [item.id for item in await backdoor.all_items()] == [first.id, second.id]

    async def test_a_queued_item_with_the_same_kind_and_key_absorbs_an_enqueue(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        first = await queue.enqueue(AlphaJob(number=1), dedup_key="daily")
        second = await queue.enqueue(AlphaJob(number=2), dedup_key="daily")

        assert second == EnqueueResult(id=first.id, created=False)
        assert second.absorbed
        items = await backdoor.all_items()
        assert [(item.id, item.payload) for item in items] == [(first.id, {"number": 1})]

    @pytest.mark.parametrize(
        "status", [WorkStatus.RUNNING, WorkStatus.SUCCEEDED, WorkStatus.FAILED]
    )
    async def test_an_item_that_is_not_queued_absorbs_nothing(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock, status: WorkStatus
    ) -> None:
        finished = status.is_finished
        existing = await backdoor.insert_item(
            kind=ContractKind.ALPHA,
            status=status,
            attempt=1,
            dedup_key="daily",
            started_at=clock.now(),
            heartbeat_at=clock.now(),
            worker_id="elsewhere",
            lease_expires_at=None if finished else clock.now() + LEASE,
            finished_at=clock.now() if finished else None,
        )

        result = await queue.enqueue(AlphaJob(), dedup_key="daily")

        assert result.created
        assert result.id != existing
        assert len(await backdoor.all_items()) == 2

    async def test_a_claimed_item_no_longer_absorbs_an_enqueue(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        first = await queue.enqueue(AlphaJob(), dedup_key="daily")
        await claim(store)

        second = await queue.enqueue(AlphaJob(), dedup_key="daily")

        assert second.created
        assert second.id != first.id

    async def test_an_item_of_another_kind_with_the_same_key_absorbs_nothing(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        alpha = await queue.enqueue(AlphaJob(), dedup_key="shared")
        beta = await queue.enqueue(BetaJob(), dedup_key="shared")

        assert alpha.created
        assert beta.created
        assert {item.kind for item in await backdoor.all_items()} == {
            "contract_alpha",
            "contract_beta",
        }

    async def test_an_item_with_another_key_absorbs_nothing(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(), dedup_key="one")
        other = await queue.enqueue(AlphaJob(), dedup_key="two")
        unkeyed = await queue.enqueue(AlphaJob())

        assert other.created
        assert unkeyed.created
        assert len(await backdoor.all_items()) == 3

    @pytest.mark.parametrize("dedup_key", UNUSABLE_DEDUP_KEYS)
    async def test_an_unusable_dedup_key_is_refused_before_anything_is_written(
        self, queue: WorkQueue, backdoor: Backdoor, dedup_key: str
    ) -> None:
        with pytest.raises(InvalidDedupKeyError):
            await queue.enqueue(AlphaJob(), dedup_key=dedup_key)

        assert await backdoor.all_items() == []

    async def test_the_longest_allowed_dedup_key_is_accepted(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        key = "k" * MAX_DEDUP_KEY_LENGTH
        result = await queue.enqueue(AlphaJob(), dedup_key=key)

        item = await backdoor.read_item(result.id)
        assert item is not None
        assert item.dedup_key == key

    async def test_an_unvalidated_bad_payload_is_refused_naming_kind_and_field(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        bad = unvalidated_alpha_job()

        with pytest.raises(InvalidPayloadError) as raised:
            await queue.enqueue(bad, dedup_key="daily")

        assert raised.value.kind == "contract_alpha"
        assert "number" in str(raised.value)
        assert await backdoor.all_items() == []

    async def test_a_batch_enqueues_every_request_in_order(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        results = await queue.enqueue_many(
            [EnqueueRequest(AlphaJob(number=n)) for n in range(3)]
            + [EnqueueRequest(BetaJob(label="b"), dedup_key="b")]
        )

        assert all(result.created for result in results)
        assert [result.id for result in results] == sorted(result.id for result in results)
        items = await backdoor.all_items()
        assert [item.id for item in items] == [result.id for result in results]
        assert [item.payload for item in items] == [
            {"number": 0},
            {"number": 1},
            {"number": 2},
            {"label": "b"},
        ]
        assert all(item.status is WorkStatus.QUEUED and item.attempt == 0 for item in items)
        assert all(item.enqueued_at == clock.now() for item in items)

    async def test_an_empty_batch_writes_nothing(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        assert await queue.enqueue_many([]) == []
        assert await backdoor.all_items() == []

    async def test_requests_of_one_batch_with_the_same_kind_and_key_coalesce(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        results = await queue.enqueue_many(
            [
                EnqueueRequest(AlphaJob(number=1), dedup_key="k"),
                EnqueueRequest(AlphaJob(number=2), dedup_key="k"),
                EnqueueRequest(BetaJob(), dedup_key="k"),
                EnqueueRequest(AlphaJob(number=3)),
            ]
        )

        first, absorbed, other_kind, unkeyed = results
        assert [first.created, other_kind.created, unkeyed.created] == [True, True, True]
        assert absorbed == EnqueueResult(id=first.id, created=False)
        assert len({first.id, other_kind.id, unkeyed.id}) == 3
        assert len(await backdoor.all_items()) == 3

    async def test_a_queued_item_absorbs_a_batch_request(
        self, queue: WorkQueue, backdoor: Backdoor
    ) -> None:
        existing = await queue.enqueue(AlphaJob(), dedup_key="k")

        (result,) = await queue.enqueue_many([EnqueueRequest(AlphaJob(number=9), dedup_key="k")])

        assert result == EnqueueResult(id=existing.id, created=False)
        assert len(await backdoor.all_items()) == 1

    @pytest.mark.parametrize(
        ("bad", "error"),
        [
            (EnqueueRequest(AlphaJob(), dedup_key=""), InvalidDedupKeyError),
            (EnqueueRequest(unvalidated_alpha_job()), InvalidPayloadError),
        ],
        ids=["bad dedup key", "bad payload"],
    )
    async def test_a_batch_with_one_bad_request_writes_nothing(
        self,
        queue: WorkQueue,
        backdoor: Backdoor,
        bad: EnqueueRequest,
        error: type[Exception],
    ) -> None:
        with pytest.raises(error):
            await queue.enqueue_many(
                [EnqueueRequest(AlphaJob(number=1)), EnqueueRequest(BetaJob(), dedup_key="b"), bad]
            )

        assert await backdoor.all_items() == []
