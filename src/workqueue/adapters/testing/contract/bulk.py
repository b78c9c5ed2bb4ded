"""Contract: bulk requeue of a kind's failed items, bulk cancel of its queued ones (docs/adr/0041).

:class:`BulkContract` holds a store's :meth:`~workqueue.domain.WorkStore.requeue_failed`
and :meth:`~workqueue.domain.WorkStore.cancel_queued` (and the application's loops over
them) to their meaning; it is part of :class:`WorkQueueContractSuite`.
:class:`BulkScopeContract` holds a monitor's
:meth:`~workqueue.domain.WorkMonitor.bulk_scope`, what an operator is shown before
confirming; like the monitoring contract it runs on the monitor's fixtures::

    class TestMyBulkScope(BulkScopeContract, MyMonitorFixtures):
        pass
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind, GammaJob
from workqueue.adapters.testing.contract.steps import claim
from workqueue.application import cancel_queued, requeue_failed
from workqueue.domain import (
    LARGEST_ITEM_ID,
    BulkAction,
    BulkBatch,
    BulkResult,
    BulkScope,
    InvalidCancelReasonError,
    InvalidPayloadError,
    UnknownKindError,
    WorkItem,
    WorkMonitor,
    WorkPayload,
    WorkQueue,
    WorkStatus,
    WorkStore,
)

__all__ = ["BulkContract", "BulkScopeContract", "decode"]

ALPHA = ContractKind.ALPHA.value
BETA = ContractKind.BETA.value
REASON = "no longer wanted"
HOUR = timedelta(hours=1)

_MODELS: dict[str, type[WorkPayload]] = {
    ContractKind.ALPHA.value: AlphaJob,
    ContractKind.BETA.value: BetaJob,
    ContractKind.GAMMA.value: GammaJob,
}


def decode(kind: str, payload: Mapping[str, Any]) -> WorkPayload:
    """The kit's kinds' payload models, as a registry's ``decode`` gives them."""
    try:
        model = _MODELS[kind]
    except KeyError:
        raise UnknownKindError(kind, sorted(_MODELS)) from None
    try:
        return model.model_validate(payload)
    except ValidationError as error:
        raise InvalidPayloadError(kind, str(error.errors()[0]["msg"])) from error


async def _failed(
    backdoor: Backdoor,
    clock: FakeClock,
    kind: str = ALPHA,
    payload: dict[str, Any] | None = None,
    dedup_key: str | None = None,
    status: WorkStatus = WorkStatus.FAILED,
) -> int:
    """A finished row of ``kind`` (failed unless ``status`` says otherwise)."""
    now = clock.now()
    return await backdoor.insert_item(
        kind=kind,
        payload={"number": 1} if payload is None else payload,
        status=status,
        attempt=1,
        dedup_key=dedup_key,
        started_at=now,
        heartbeat_at=now,
        finished_at=now,
        worker_id="w",
        error=None if status is WorkStatus.SUCCEEDED else f"{status.value}: why",
    )


async def _queued(
    backdoor: Backdoor, clock: FakeClock, kind: str = ALPHA, dedup_key: str | None = None
) -> int:
    return await backdoor.insert_item(
        kind=kind, payload={"number": 1} if kind == ALPHA else {}, dedup_key=dedup_key
    )


async def _read(backdoor: Backdoor, item_id: int) -> WorkItem:
    item = await backdoor.read_item(item_id)
    assert item is not None, f"item {item_id} is gone"
    return item


async def _new_items(backdoor: Backdoor, before: list[WorkItem]) -> list[WorkItem]:
    """The items a call created: rows whose ids no row had before it."""
    known = {item.id for item in before}
    return [item for item in await backdoor.all_items() if item.id not in known]


async def _requeued(store: WorkStore, up_to_id: int, batch: int = 500) -> BulkResult:
    return await requeue_failed(ALPHA, up_to_id=up_to_id, store=store, decode=decode, batch=batch)


class BulkContract:
    """A bulk requeue takes each failed item once; a bulk cancel ends the queued ones."""

    async def test_a_bulk_requeue_enqueues_each_failed_item_of_the_kind_again_and_marks_it(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        keyed = await _failed(backdoor, clock, payload={"number": 7}, dedup_key="invoice-7")
        plain = await _failed(backdoor, clock, payload={"number": 8})
        others = [
            await _failed(backdoor, clock, kind=BETA, payload={"label": "b"}),
            await _failed(backdoor, clock, status=WorkStatus.CANCELLED),
            await _failed(backdoor, clock, status=WorkStatus.SUCCEEDED),
            await _queued(backdoor, clock),
        ]
        before = await backdoor.all_items()

        result = await _requeued(store, up_to_id=LARGEST_ITEM_ID)

        assert result == BulkResult(done=2)
        new = await _new_items(backdoor, before)
        assert [(item.kind, item.payload, item.dedup_key, item.status) for item in new] == [
            (ALPHA, {"number": 7}, "invoice-7", WorkStatus.QUEUED),
            (ALPHA, {"number": 8}, None, WorkStatus.QUEUED),
        ]
        for old_id, new_item in zip((keyed, plain), new, strict=True):
            old = await _read(backdoor, old_id)
            was = next(item for item in before if item.id == old_id)
            assert old == replace(was, requeued_as=new_item.id)
        for other in others:
            assert await _read(backdoor, other) == next(i for i in before if i.id == other)

    async def test_pressed_twice_a_bulk_requeue_requeues_each_failed_item_once(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        for number in range(3):
            await _failed(backdoor, clock, payload={"number": number})
        await _requeued(store, up_to_id=LARGEST_ITEM_ID)
        before = await backdoor.all_items()

        again = await _requeued(store, up_to_id=LARGEST_ITEM_ID)

        assert again == BulkResult()
        assert await backdoor.all_items() == before

    async def test_items_that_failed_after_the_count_was_read_are_left_for_the_next_requeue(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        shown = [await _failed(backdoor, clock) for _ in range(2)]
        later = await _failed(backdoor, clock)

        result = await _requeued(store, up_to_id=shown[-1])

        assert result == BulkResult(done=2)
        assert all([(await _read(backdoor, item_id)).requeued_as for item_id in shown])
        assert (await _read(backdoor, later)).requeued_as is None

    async def test_a_queued_twin_with_the_kind_and_dedup_key_absorbs_the_requeue(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        failed = await _failed(backdoor, clock, dedup_key="invoice-7")
        twin = await _queued(backdoor, clock, dedup_key="invoice-7")
        before = await backdoor.all_items()

        result = await _requeued(store, up_to_id=failed)

        assert result == BulkResult(absorbed=1)
        assert await _new_items(backdoor, before) == []
        assert (await _read(backdoor, failed)).requeued_as == twin

    async def test_two_failed_items_with_one_dedup_key_are_requeued_as_one_item(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        first = await _failed(backdoor, clock, dedup_key="invoice-7")
        second = await _failed(backdoor, clock, dedup_key="invoice-7")
        before = await backdoor.all_items()

        result = await _requeued(store, up_to_id=second)

        assert result == BulkResult(done=1, absorbed=1)
        [new] = await _new_items(backdoor, before)
        assert (await _read(backdoor, first)).requeued_as == new.id
        assert (await _read(backdoor, second)).requeued_as == new.id

    async def test_an_item_whose_stored_payload_no_longer_validates_stays_failed_and_is_named(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        broken = await _failed(backdoor, clock, payload={"number": "seven"})
        fine = await _failed(backdoor, clock)
        was = await _read(backdoor, broken)

        result = await _requeued(store, up_to_id=fine)

        assert result == BulkResult(done=1, invalid=(broken,))
        assert await _read(backdoor, broken) == was
        assert (await _read(backdoor, fine)).requeued_as is not None

    async def test_a_kind_without_a_payload_model_is_refused_before_anything_is_written(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await _failed(backdoor, clock, kind="unknown_kind")
        before = await backdoor.all_items()

        with pytest.raises(UnknownKindError):
            await requeue_failed(
                "unknown_kind", up_to_id=LARGEST_ITEM_ID, store=store, decode=decode
            )

        assert await backdoor.all_items() == before

    async def test_a_requeue_batch_takes_at_most_its_limit_after_the_id_it_is_given_in_id_order(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        ids = [await _failed(backdoor, clock, payload={"number": n}) for n in range(5)]

        batch = await store.requeue_failed(
            ALPHA, after_id=ids[0], up_to_id=ids[3], limit=2, decode=decode
        )

        assert batch == BulkBatch(taken=2, done=2, last_id=ids[2])
        last = await store.requeue_failed(
            ALPHA, after_id=ids[2], up_to_id=ids[3], limit=2, decode=decode
        )
        assert last == BulkBatch(taken=1, done=1, last_id=ids[3])
        marked = [(await _read(backdoor, item_id)).requeued_as is not None for item_id in ids]
        assert marked == [False, True, True, True, False]

    async def test_a_requeue_runs_in_batches_until_every_item_up_to_the_id_is_requeued(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        ids = [
            await _failed(backdoor, clock, payload={"number": "two" if n == 2 else n})
            for n in range(6)
        ]

        result = await _requeued(store, up_to_id=ids[-1], batch=2)

        assert result == BulkResult(done=5, invalid=(ids[2],))

    async def test_two_bulk_requeues_at_once_requeue_each_failed_item_exactly_once(
        self, store: WorkStore, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        ids = [await _failed(backdoor, clock, payload={"number": n}) for n in range(30)]
        before = await backdoor.all_items()

        results = await asyncio.gather(
            _requeued(store, up_to_id=ids[-1], batch=4),
            _requeued(store, up_to_id=ids[-1], batch=4),
        )

        assert sum(result.done for result in results) == len(ids)
        new = await _new_items(backdoor, before)
        assert sorted(item.payload["number"] for item in new) == list(range(30))
        replaced = [(await _read(backdoor, item_id)).requeued_as for item_id in ids]
        assert sorted(r for r in replaced if r is not None) == [item.id for item in new]

    async def test_a_bulk_cancel_ends_the_kinds_queued_items_cancelled_with_the_reason(
        self, store: WorkStore, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        running = await _queued(backdoor, clock)
        await claim(store, kinds=(ALPHA,))
        now = await _queued(backdoor, clock)
        later = (await queue.enqueue(AlphaJob(number=2), delay=HOUR)).id
        others = [await _queued(backdoor, clock, kind=BETA), await _failed(backdoor, clock)]
        before = await backdoor.all_items()
        await clock.advance(5)

        result = await cancel_queued(ALPHA, up_to_id=LARGEST_ITEM_ID, store=store, reason=REASON)

        assert result == BulkResult(done=2)
        for item_id in (now, later):
            item = await _read(backdoor, item_id)
            assert (item.status, item.error, item.finished_at) == (
                WorkStatus.CANCELLED,
                REASON,
                clock.now(),
            )
        assert (await _read(backdoor, running)).status is WorkStatus.RUNNING
        assert (await _read(backdoor, running)).cancel_reason is None
        for other in others:
            assert await _read(backdoor, other) == next(i for i in before if i.id == other)
        assert await store.claim([ALPHA], worker_id="w", lease_duration=HOUR) is None

    async def test_items_enqueued_after_the_count_was_read_are_not_cancelled(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        shown = [await _queued(backdoor, clock) for _ in range(3)]
        later = await _queued(backdoor, clock)

        result = await cancel_queued(ALPHA, up_to_id=shown[-1], store=store, reason=REASON, batch=2)

        assert result == BulkResult(done=3)
        assert (await _read(backdoor, later)).status is WorkStatus.QUEUED

    async def test_a_cancel_batch_takes_at_most_its_limit_after_the_id_it_is_given_in_id_order(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        ids = [await _queued(backdoor, clock) for _ in range(5)]

        batch = await store.cancel_queued(
            ALPHA, after_id=ids[0], up_to_id=ids[3], limit=2, reason=REASON
        )

        assert batch == BulkBatch(taken=2, done=2, last_id=ids[2])
        last = await store.cancel_queued(
            ALPHA, after_id=ids[2], up_to_id=ids[3], limit=2, reason=REASON
        )
        assert last == BulkBatch(taken=1, done=1, last_id=ids[3])
        statuses = [(await _read(backdoor, item_id)).status for item_id in ids]
        queued, cancelled = WorkStatus.QUEUED, WorkStatus.CANCELLED
        assert statuses == [queued, cancelled, cancelled, cancelled, queued]

    async def test_a_batch_with_a_limit_below_one_takes_nothing(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await _failed(backdoor, clock)
        await _queued(backdoor, clock)
        before = await backdoor.all_items()
        empty = BulkBatch(taken=0, done=0, last_id=None)

        for limit in (0, -1):
            assert (
                await store.requeue_failed(
                    ALPHA, after_id=0, up_to_id=LARGEST_ITEM_ID, limit=limit, decode=decode
                )
                == empty
            )
            assert (
                await store.cancel_queued(
                    ALPHA, after_id=0, up_to_id=LARGEST_ITEM_ID, limit=limit, reason=REASON
                )
                == empty
            )
        assert await backdoor.all_items() == before

    async def test_a_batch_that_finds_nothing_says_so(self, store: WorkStore) -> None:
        empty = BulkBatch(taken=0, done=0, last_id=None)
        assert (
            await store.cancel_queued(
                ALPHA, after_id=0, up_to_id=LARGEST_ITEM_ID, limit=5, reason=REASON
            )
            == empty
        )
        assert (
            await store.requeue_failed(
                ALPHA, after_id=0, up_to_id=LARGEST_ITEM_ID, limit=5, decode=decode
            )
            == empty
        )

    async def test_a_cancel_reason_no_store_can_hold_is_refused_before_anything_is_cancelled(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await _queued(backdoor, clock)
        before = await backdoor.all_items()

        with pytest.raises(InvalidCancelReasonError):
            await cancel_queued(ALPHA, up_to_id=LARGEST_ITEM_ID, store=store, reason="a\x00b")

        assert await backdoor.all_items() == before


class BulkScopeContract:
    """What a bulk action would take, shown before an operator confirms it."""

    async def test_a_bulk_requeue_would_take_the_kinds_failed_items_not_requeued_yet(
        self, monitor: WorkMonitor, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        requeued = await _failed(backdoor, clock)
        await _requeued(store, up_to_id=requeued)
        left = [await _failed(backdoor, clock) for _ in range(2)]
        await _failed(backdoor, clock, kind=BETA, payload={"label": "b"})
        await _failed(backdoor, clock, status=WorkStatus.CANCELLED)

        scope = await monitor.bulk_scope(ALPHA, BulkAction.REQUEUE_FAILED)

        assert scope == BulkScope(count=2, up_to_id=left[-1])

    async def test_a_bulk_cancel_would_take_the_kinds_queued_items(
        self, monitor: WorkMonitor, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await _queued(backdoor, clock)
        await claim(store, kinds=(ALPHA,))
        queued = [await _queued(backdoor, clock) for _ in range(2)]
        await _queued(backdoor, clock, kind=BETA)
        await _failed(backdoor, clock)

        scope = await monitor.bulk_scope(ALPHA, BulkAction.CANCEL_QUEUED)

        assert scope == BulkScope(count=2, up_to_id=queued[-1])

    async def test_a_kind_with_nothing_to_take_has_an_empty_scope(
        self, monitor: WorkMonitor
    ) -> None:
        for action in BulkAction:
            assert await monitor.bulk_scope(ALPHA, action) == BulkScope(0, None)
