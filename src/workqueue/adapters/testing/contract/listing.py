"""Contract: the read-only views (get, list, counts) the status command shows."""

from __future__ import annotations

from datetime import timedelta

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind, GammaJob
from workqueue.adapters.testing.contract.steps import LEASE, claim
from workqueue.domain import EnqueueRequest, RunOutcome, WorkItem, WorkQueue, WorkStatus, WorkStore

__all__ = ["ListingContract"]


async def mixed_items(queue: WorkQueue, store: WorkStore) -> dict[str, int]:
    """One alpha of each status, plus a queued beta and a queued gamma, by name."""
    ids = {
        name: (await queue.enqueue(payload)).id
        for name, payload in [
            ("alpha succeeded", AlphaJob(number=1)),
            ("alpha failed", AlphaJob(number=2)),
            ("alpha running", AlphaJob(number=3)),
            ("alpha queued", AlphaJob(number=4)),
            ("beta queued", BetaJob()),
            ("gamma queued", GammaJob()),
        ]
    }
    await store.finish((await claim(store)).lease, RunOutcome.succeeded(None))
    await store.finish((await claim(store)).lease, RunOutcome.failed("boom", None))
    await claim(store)
    return ids


async def items_with_every_field_set(backdoor: Backdoor, clock: FakeClock) -> list[WorkItem]:
    """One item of each status with every column the status allows filled in, by id.

    Progress, errors, stalls, worker ids and dedup keys differ from item to item,
    so a read that drops or mixes up any column shows.
    """
    t = clock.now()
    hour = timedelta(hours=1)
    ids = [
        await backdoor.insert_item(
            kind=ContractKind.ALPHA,
            payload={"number": 1},
            status=WorkStatus.SUCCEEDED,
            attempt=2,
            stalls=1,
            dedup_key="daily",
            enqueued_at=t - 3 * hour,
            started_at=t - 2 * hour,
            heartbeat_at=t - hour,
            finished_at=t - hour,
            worker_id="worker-1",
            progress={"pages": [1, 2, 3]},
        ),
        await backdoor.insert_item(
            kind=ContractKind.BETA,
            payload={"label": "b"},
            status=WorkStatus.FAILED,
            attempt=1,
            dedup_key="weekly",
            enqueued_at=t - 2 * hour,
            started_at=t - hour,
            heartbeat_at=t - hour,
            finished_at=t - timedelta(minutes=5),
            worker_id="worker-2",
            progress={"rows": 7},
            error="ValueError: bad row 7",
        ),
        await backdoor.insert_item(
            kind=ContractKind.ALPHA,
            payload={"number": 3},
            status=WorkStatus.RUNNING,
            attempt=3,
            stalls=2,
            enqueued_at=t - hour,
            started_at=t - timedelta(minutes=1),
            heartbeat_at=t - timedelta(seconds=2),
            lease_expires_at=t + LEASE,
            worker_id="worker-3",
            progress=[1, "half", None, True, 2.5],
        ),
        await backdoor.insert_item(
            kind=ContractKind.GAMMA,
            status=WorkStatus.QUEUED,
            attempt=1,
            stalls=1,
            dedup_key="hourly",
            enqueued_at=t - timedelta(minutes=30),
            started_at=t - timedelta(minutes=20),
            heartbeat_at=t - timedelta(minutes=19),
            progress={"resume_at": "page 4"},
        ),
    ]
    items = [await backdoor.read_item(item_id) for item_id in ids]
    return [item for item in items if item is not None]


class ListingContract:
    """Reads return what is stored, every column of it, and never let a caller change it."""

    async def test_get_returns_every_column_of_the_stored_item(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        for stored in await items_with_every_field_set(backdoor, clock):
            assert await store.get(stored.id) == stored, stored.status

    async def test_get_returns_the_progress_a_heartbeat_wrote(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claim(store)
        assert await store.heartbeat(item.lease, progress={"done": 41}, lease_duration=LEASE)

        got = await store.get(item.id)
        listed = await store.list_items(statuses=[WorkStatus.RUNNING])

        assert got is not None
        assert got.progress == {"done": 41}
        assert [entry.progress for entry in listed] == [{"done": 41}]

    @pytest.mark.parametrize("newest_first", [False, True], ids=["oldest first", "newest first"])
    async def test_list_items_returns_every_column_of_the_stored_items(
        self, store: WorkStore, backdoor: Backdoor, clock: FakeClock, newest_first: bool
    ) -> None:
        stored = await items_with_every_field_set(backdoor, clock)

        listed = await store.list_items(newest_first=newest_first)

        assert listed == (stored[::-1] if newest_first else stored)

    @pytest.mark.parametrize("newest_first", [False, True], ids=["oldest first", "newest first"])
    async def test_list_items_filters_by_status_and_kind_in_either_order(
        self, queue: WorkQueue, store: WorkStore, newest_first: bool
    ) -> None:
        ids = await mixed_items(queue, store)

        def listed(items: list[WorkItem]) -> list[int]:
            return [item.id for item in items]

        def expected(*names: str) -> list[int]:
            wanted = sorted(ids[name] for name in names)
            return wanted[::-1] if newest_first else wanted

        queued = await store.list_items(statuses=[WorkStatus.QUEUED], newest_first=newest_first)
        finished = await store.list_items(
            statuses=[WorkStatus.SUCCEEDED, WorkStatus.FAILED], newest_first=newest_first
        )
        running = await store.list_items(statuses=[WorkStatus.RUNNING], newest_first=newest_first)
        alpha = await store.list_items(kinds=["contract_alpha"], newest_first=newest_first)
        queued_beta_or_gamma = await store.list_items(
            statuses=[WorkStatus.QUEUED],
            kinds=[ContractKind.BETA, "contract_gamma"],
            newest_first=newest_first,
        )
        nothing = await store.list_items(
            statuses=[WorkStatus.RUNNING], kinds=["contract_beta"], newest_first=newest_first
        )

        assert listed(queued) == expected("alpha queued", "beta queued", "gamma queued")
        assert listed(finished) == expected("alpha succeeded", "alpha failed")
        assert listed(running) == expected("alpha running")
        assert listed(alpha) == expected(
            "alpha succeeded", "alpha failed", "alpha running", "alpha queued"
        )
        assert listed(queued_beta_or_gamma) == expected("beta queued", "gamma queued")
        assert nothing == []

    @pytest.mark.parametrize("newest_first", [False, True], ids=["oldest first", "newest first"])
    async def test_list_items_filters_by_the_worker_holding_or_last_holding_each_item(
        self, queue: WorkQueue, store: WorkStore, newest_first: bool
    ) -> None:
        for number in range(5):
            await queue.enqueue(AlphaJob(number=number))
        finished = await claim(store, worker_id="worker-a")
        await store.finish(finished.lease, RunOutcome.succeeded(None))
        running_a = await claim(store, worker_id="worker-a")
        running_b = await claim(store, worker_id="worker-b")
        released = await claim(store, worker_id="worker-a")
        await store.finish(released.lease, RunOutcome.released(None))

        async def listed(
            *worker_ids: str,
            statuses: list[WorkStatus] | None = None,
            kinds: list[str] | None = None,
            limit: int = 100,
        ) -> list[int]:
            items = await store.list_items(
                statuses=statuses,
                kinds=kinds,
                worker_ids=worker_ids,
                limit=limit,
                newest_first=newest_first,
            )
            return [item.id for item in items]

        def expected(*items: WorkItem) -> list[int]:
            wanted = sorted(item.id for item in items)
            return wanted[::-1] if newest_first else wanted

        assert await listed("worker-a") == expected(finished, running_a)
        assert await listed("worker-a", statuses=[WorkStatus.RUNNING]) == expected(running_a)
        assert await listed("worker-a", "worker-b") == expected(finished, running_a, running_b)
        assert (
            await listed("worker-a", "worker-b", limit=1)
            == expected(finished, running_a, running_b)[:1]
        )
        assert await listed("worker-a", kinds=["contract_beta"]) == []
        assert await listed("worker-c") == []
        assert await listed() == []

    @pytest.mark.parametrize("newest_first", [False, True], ids=["oldest first", "newest first"])
    async def test_the_limit_applies_after_the_filters_in_either_order(
        self, queue: WorkQueue, store: WorkStore, newest_first: bool
    ) -> None:
        ids = await mixed_items(queue, store)
        queued = sorted(ids[name] for name in ("alpha queued", "beta queued", "gamma queued"))
        alpha = sorted(
            ids[name]
            for name in ("alpha succeeded", "alpha failed", "alpha running", "alpha queued")
        )
        if newest_first:
            queued, alpha = queued[::-1], alpha[::-1]

        two_queued = await store.list_items(
            statuses=[WorkStatus.QUEUED], limit=2, newest_first=newest_first
        )
        three_alpha = await store.list_items(
            kinds=["contract_alpha"], limit=3, newest_first=newest_first
        )
        one_queued_alpha = await store.list_items(
            statuses=[WorkStatus.QUEUED],
            kinds=["contract_alpha"],
            limit=1,
            newest_first=newest_first,
        )

        assert [item.id for item in two_queued] == queued[:2]
        assert [item.id for item in three_alpha] == alpha[:3]
        assert [item.id for item in one_queued_alpha] == [ids["alpha queued"]]

    async def test_list_items_returns_at_most_100_by_default(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        results = await queue.enqueue_many([EnqueueRequest(GammaJob()) for _ in range(105)])
        ids = [result.id for result in results]

        oldest = await store.list_items()
        newest = await store.list_items(newest_first=True)

        assert [item.id for item in oldest] == ids[:100]
        assert [item.id for item in newest] == ids[::-1][:100]

    async def test_get_returns_the_stored_item(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob(number=8), dedup_key="eight")

        item = await store.get(enqueued.id)

        assert item is not None
        assert item == await backdoor.read_item(enqueued.id)
        assert item.payload == {"number": 8}

    async def test_get_returns_none_for_a_missing_id(self, store: WorkStore) -> None:
        assert await store.get(424242) is None

    async def test_changing_a_returned_item_changes_nothing_stored(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        enqueued = await queue.enqueue(AlphaJob(number=8))
        running = await claim(store)
        assert await store.heartbeat(running.lease, progress={"done": [1]}, lease_duration=LEASE)
        item = await store.get(enqueued.id)
        (listed,) = await store.list_items()
        assert item is not None

        item.payload["number"] = 9
        assert isinstance(item.progress, dict)
        item.progress["done"] = [2]
        listed.payload["number"] = 10
        assert isinstance(listed.progress, dict)
        listed_done = listed.progress["done"]
        assert isinstance(listed_done, list)
        listed_done.append(3)

        stored = await backdoor.read_item(enqueued.id)
        assert stored is not None
        assert stored.payload == {"number": 8}

    async def test_list_items_returns_every_item_oldest_first(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await mixed_items(queue, store)

        assert await store.list_items() == await backdoor.all_items()

    async def test_list_items_can_return_the_newest_first(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        ids = await mixed_items(queue, store)

        items = await store.list_items(newest_first=True)

        assert [item.id for item in items] == sorted(ids.values(), reverse=True)

    async def test_list_items_filters_by_status_and_kind(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        ids = await mixed_items(queue, store)

        queued = await store.list_items(statuses=[WorkStatus.QUEUED])
        finished = await store.list_items(statuses=[WorkStatus.SUCCEEDED, WorkStatus.FAILED])
        alpha = await store.list_items(kinds=["contract_alpha"])
        queued_beta_or_gamma = await store.list_items(
            statuses=[WorkStatus.QUEUED], kinds=["contract_beta", "contract_gamma"]
        )

        assert [item.id for item in queued] == [
            ids["alpha queued"],
            ids["beta queued"],
            ids["gamma queued"],
        ]
        assert [item.id for item in finished] == [ids["alpha succeeded"], ids["alpha failed"]]
        assert [item.id for item in alpha] == [
            ids[name]
            for name in ("alpha succeeded", "alpha failed", "alpha running", "alpha queued")
        ]
        assert [item.id for item in queued_beta_or_gamma] == [
            ids["beta queued"],
            ids["gamma queued"],
        ]

    async def test_list_items_returns_at_most_the_limit(
        self, queue: WorkQueue, store: WorkStore
    ) -> None:
        ids = sorted((await mixed_items(queue, store)).values())

        oldest = await store.list_items(limit=2)
        newest = await store.list_items(limit=2, newest_first=True)

        assert [item.id for item in oldest] == ids[:2]
        assert [item.id for item in newest] == ids[::-1][:2]
        assert await store.list_items(limit=1) == oldest[:1]
        assert await store.list_items(limit=0) == []
        assert await store.list_items(limit=0, newest_first=True) == []

    async def test_an_empty_store_lists_and_counts_nothing(self, store: WorkStore) -> None:
        assert await store.list_items() == []
        assert await store.count_by_kind_and_status() == {}

    async def test_counts_are_by_kind_and_status_leaving_out_empty_pairs(
        self, queue: WorkQueue, store: WorkStore, clock: FakeClock
    ) -> None:
        await mixed_items(queue, store)
        await queue.enqueue(BetaJob(label="second"))

        counts = await store.count_by_kind_and_status()

        assert counts == {
            ("contract_alpha", WorkStatus.SUCCEEDED): 1,
            ("contract_alpha", WorkStatus.FAILED): 1,
            ("contract_alpha", WorkStatus.RUNNING): 1,
            ("contract_alpha", WorkStatus.QUEUED): 1,
            ("contract_beta", WorkStatus.QUEUED): 2,
            ("contract_gamma", WorkStatus.QUEUED): 1,
        }
        assert all(type(status) is WorkStatus for _, status in counts)
