"""Contract: an absorbed enqueue leaves its queued twin as it was; batch rows start fresh."""

from __future__ import annotations

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob
from workqueue.adapters.testing.contract.steps import claim
from workqueue.domain import (
    EnqueueRequest,
    EnqueueResult,
    RunOutcome,
    WorkItem,
    WorkQueue,
    WorkStore,
)

__all__ = ["AbsorbContract"]


class AbsorbContract:
    """Semantics 1: absorbing changes nothing (no newer payload, no new stamp); rows start fresh."""

    async def test_an_absorbed_enqueue_leaves_its_queued_twin_untouched(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        # A twin that has already run once (released back to queued) has more to lose.
        twin = await queue.enqueue(AlphaJob(number=1), dedup_key="daily")
        running = await claim(store)
        assert await store.finish(running.lease, RunOutcome.released({"half": True}))
        before = await backdoor.all_items()
        await clock.advance(30)

        single = await queue.enqueue(AlphaJob(number=2), dedup_key="daily")
        batch = await queue.enqueue_many([EnqueueRequest(AlphaJob(number=3), dedup_key="daily")])

        assert single == EnqueueResult(id=twin.id, created=False)
        assert batch == [EnqueueResult(id=twin.id, created=False)]
        assert await backdoor.all_items() == before

    async def test_every_row_a_batch_makes_is_a_fresh_queued_item(
        self, queue: WorkQueue, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await clock.advance(11)

        results = await queue.enqueue_many(
            [
                EnqueueRequest(AlphaJob(number=1)),
                EnqueueRequest(BetaJob(label="b"), dedup_key="b"),
                EnqueueRequest(AlphaJob(number=2), dedup_key="a"),
            ]
        )

        now = clock.now()
        assert await backdoor.all_items() == [
            WorkItem.queued(results[0].id, "contract_alpha", {"number": 1}, enqueued_at=now),
            WorkItem.queued(
                results[1].id, "contract_beta", {"label": "b"}, dedup_key="b", enqueued_at=now
            ),
            WorkItem.queued(
                results[2].id, "contract_alpha", {"number": 2}, dedup_key="a", enqueued_at=now
            ),
        ]
