"""Contract: the read-only views (get, list, counts) the status command shows."""

from __future__ import annotations

from adapters.testing.clock import FakeClock
from adapters.testing.contract.backdoor import Backdoor
from adapters.testing.contract.kinds import AlphaJob, BetaJob, GammaJob
from adapters.testing.contract.steps import claim
from domain import WorkQueue, WorkStatus, WorkStore

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
    await store.complete((await claim(store)).lease, progress=None)
    await store.fail((await claim(store)).lease, error="boom", progress=None)
    await claim(store)
    return ids


class ListingContract:
    """Reads return what is stored and never let a caller change it."""

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
        item = await store.get(enqueued.id)
        assert item is not None

        item.payload["number"] = 9

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
