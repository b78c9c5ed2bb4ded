"""Contract: a requeue runs a failed or cancelled item again, through the WorkQueue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind, GammaJob
from workqueue.adapters.testing.contract.steps import claim
from workqueue.application import requeue
from workqueue.domain import (
    RequeueOutcome,
    RequeueResult,
    RunOutcome,
    UnknownKindError,
    WorkPayload,
    WorkQueue,
    WorkStatus,
    WorkStore,
)

__all__ = ["RequeueContract"]

_MODELS: dict[str, type[WorkPayload]] = {
    ContractKind.ALPHA.value: AlphaJob,
    ContractKind.BETA.value: BetaJob,
    ContractKind.GAMMA.value: GammaJob,
}


def decode(kind: str, payload: Mapping[str, Any]) -> WorkPayload:
    """The kit's kinds' payload models, as a registry's ``decode`` would give them."""
    try:
        return _MODELS[kind].model_validate(payload)
    except KeyError:
        raise UnknownKindError(kind, sorted(_MODELS)) from None


async def requeued(item_id: int, store: WorkStore, queue: WorkQueue) -> RequeueResult:
    return await requeue(item_id, store=store, queue=queue, decode=decode)


class RequeueContract:
    """Requeue (docs/adr/0018): a new queued item with the old kind, payload and key."""

    async def test_a_failed_item_is_queued_again_as_a_new_item_and_left_as_it_was(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(number=7), dedup_key="k")
        failed = await claim(store)
        await store.finish(failed.lease, RunOutcome.failed("boom", {"done": 1}))
        before = await backdoor.read_item(failed.id)

        result = await requeued(failed.id, store, queue)

        assert result.outcome is RequeueOutcome.REQUEUED
        assert result.status is WorkStatus.FAILED
        assert result.queued_id is not None
        assert result.queued_id != failed.id
        again = await backdoor.read_item(result.queued_id)
        assert again is not None
        assert (again.kind, again.payload, again.dedup_key, again.status) == (
            failed.kind,
            {"number": 7},
            "k",
            WorkStatus.QUEUED,
        )
        assert (again.attempt, again.stalls, again.progress, again.error) == (0, 0, None, None)
        assert await backdoor.read_item(failed.id) == before

    async def test_a_cancelled_item_is_queued_again(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        cancelled = await queue.enqueue(BetaJob(label="x"))
        await store.cancel(cancelled.id, reason="oops")

        result = await requeued(cancelled.id, store, queue)

        assert (result.outcome, result.status) == (RequeueOutcome.REQUEUED, WorkStatus.CANCELLED)
        assert result.queued_id is not None
        again = await backdoor.read_item(result.queued_id)
        assert again is not None
        assert (again.status, again.payload) == (WorkStatus.QUEUED, {"label": "x"})
        assert (await claim(store)).id == result.queued_id

    async def test_a_queued_twin_absorbs_the_requeue(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(number=1), dedup_key="k")
        failed = await claim(store)
        await store.finish(failed.lease, RunOutcome.failed("boom", None))
        twin = await queue.enqueue(AlphaJob(number=2), dedup_key="k")
        rows = len(await backdoor.all_items())

        result = await requeued(failed.id, store, queue)

        assert (result.outcome, result.queued_id) == (RequeueOutcome.ABSORBED, twin.id)
        assert len(await backdoor.all_items()) == rows

    async def test_an_item_neither_failed_nor_cancelled_is_refused_and_nothing_written(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob(number=1))
        await queue.enqueue(AlphaJob(number=2))
        await queue.enqueue(AlphaJob(number=3))
        succeeded = await claim(store)
        await store.finish(succeeded.lease, RunOutcome.succeeded(None))
        running = await claim(store)
        rows = await backdoor.all_items()
        queued = rows[-1]

        results = [await requeued(item.id, store, queue) for item in (succeeded, running, queued)]

        assert results == [
            RequeueResult(RequeueOutcome.REFUSED, status=WorkStatus.SUCCEEDED),
            RequeueResult(RequeueOutcome.REFUSED, status=WorkStatus.RUNNING),
            RequeueResult(RequeueOutcome.REFUSED, status=WorkStatus.QUEUED),
        ]
        assert await backdoor.all_items() == rows

    async def test_an_unknown_id_is_not_requeued(self, queue: WorkQueue, store: WorkStore) -> None:
        assert await requeued(424242, store, queue) == RequeueResult(RequeueOutcome.UNKNOWN)
