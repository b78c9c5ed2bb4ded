"""Contract: looking items up by dedup key (:meth:`WorkMonitor.items_by_dedup_key`).

What the admin view's find box and ``/api/items?dedup_key=`` read. A store whose
monitor runs :class:`~workqueue.adapters.testing.contract.monitoring.MonitoringContract`
runs this mixin on the same fixtures::

    class TestMyLookup(LookupContract, MyMonitorFixtures):
        pass

where ``MyMonitorFixtures`` overrides
:class:`~workqueue.adapters.testing.contract.monitoring.MonitoringFixtures`'s
``monitor``. Like the monitoring contract, it is not part of
:class:`WorkQueueContractSuite`: the port is optional for an adapter.
"""

from __future__ import annotations

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob, ContractKind
from workqueue.adapters.testing.contract.steps import LEASE, claim
from workqueue.domain import WorkItem, WorkMonitor, WorkQueue, WorkStatus, WorkStore

__all__ = ["LookupContract"]

ALPHA = ContractKind.ALPHA.value
BETA = ContractKind.BETA.value
GAMMA = ContractKind.GAMMA.value
KEY = "invoice-7"


async def _item_with_key(
    backdoor: Backdoor, clock: FakeClock, kind: str, status: WorkStatus, dedup_key: str | None
) -> int:
    """A row of ``kind`` in ``status`` under ``dedup_key``, with the fields that status has."""
    now = clock.now()
    fields: dict[str, object] = {}
    if status is not WorkStatus.QUEUED:
        fields = {"attempt": 1, "started_at": now, "heartbeat_at": now, "worker_id": "w"}
    if status is WorkStatus.RUNNING:
        fields["lease_expires_at"] = now + LEASE
    elif status.is_finished:
        fields["finished_at"] = now
        if status is not WorkStatus.SUCCEEDED:
            fields["error"] = f"{status.value}: why"
    return await backdoor.insert_item(
        kind=kind,
        status=status,
        dedup_key=dedup_key,
        **fields,  # type: ignore[arg-type]
    )


async def _rows(backdoor: Backdoor, ids: list[int]) -> list[WorkItem | None]:
    return [await backdoor.read_item(item_id) for item_id in ids]


class LookupContract:
    """Items found by their dedup key: every kind and status, exact keys, newest first."""

    async def test_every_item_with_the_key_is_found_whatever_its_kind_and_status_newest_first(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        kinds = (ALPHA, BETA, GAMMA)
        found = []
        for number, status in enumerate(WorkStatus):
            await _item_with_key(backdoor, clock, ALPHA, status, None)
            await _item_with_key(backdoor, clock, BETA, status, "invoice-8")
            kind = kinds[number % len(kinds)]
            found.append(await _item_with_key(backdoor, clock, kind, status, KEY))
            await clock.advance(1)
        before = await backdoor.all_items()

        items = await monitor.items_by_dedup_key(KEY, limit=50)

        assert items == await _rows(backdoor, found[::-1])
        assert {item.status for item in items} == set(WorkStatus)
        assert await backdoor.all_items() == before

    async def test_the_key_must_match_exactly_with_no_prefix_case_or_spaces_folded(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        near = ["Invoice-7", "INVOICE-7", "invoice-70", "invoice-", "invoice", " invoice-7"]
        for key in [*near, "invoice-7 ", "invoice-%", "invoice-_"]:
            await _item_with_key(backdoor, clock, ALPHA, WorkStatus.SUCCEEDED, key)
        exact = await _item_with_key(backdoor, clock, ALPHA, WorkStatus.SUCCEEDED, KEY)

        assert await monitor.items_by_dedup_key(KEY, limit=50) == await _rows(backdoor, [exact])
        assert [
            item.dedup_key for item in await monitor.items_by_dedup_key("invoice", limit=50)
        ] == ["invoice"]
        # Nothing is a pattern: no item has the key "invoice-%" but one.
        assert [
            item.dedup_key for item in await monitor.items_by_dedup_key("invoice-%", limit=50)
        ] == ["invoice-%"]
        assert await monitor.items_by_dedup_key("invoice-7%", limit=50) == []

    async def test_at_most_limit_items_are_read_the_newest(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        ids = [
            await _item_with_key(backdoor, clock, ALPHA, WorkStatus.SUCCEEDED, KEY)
            for _ in range(5)
        ]

        assert await monitor.items_by_dedup_key(KEY, limit=2) == await _rows(
            backdoor, ids[::-1][:2]
        )
        assert len(await monitor.items_by_dedup_key(KEY, limit=5)) == 5
        assert len(await monitor.items_by_dedup_key(KEY, limit=6)) == 5
        assert await monitor.items_by_dedup_key(KEY, limit=0) == []
        assert await monitor.items_by_dedup_key(KEY, limit=-1) == []

    async def test_a_key_no_item_has_finds_nothing(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        assert await monitor.items_by_dedup_key(KEY, limit=50) == []

        await _item_with_key(backdoor, clock, ALPHA, WorkStatus.QUEUED, None)
        await _item_with_key(backdoor, clock, ALPHA, WorkStatus.FAILED, "invoice-8")

        assert await monitor.items_by_dedup_key(KEY, limit=50) == []

    async def test_a_key_no_item_can_hold_finds_nothing_rather_than_failing(
        self, monitor: WorkMonitor, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await _item_with_key(backdoor, clock, ALPHA, WorkStatus.QUEUED, KEY)

        assert await monitor.items_by_dedup_key("invoice\x00-7", limit=50) == []
        assert await monitor.items_by_dedup_key("invoice-\ud800", limit=50) == []

    async def test_an_item_enqueued_again_once_its_twin_runs_is_found_before_it(
        self,
        monitor: WorkMonitor,
        queue: WorkQueue,
        store: WorkStore,
        backdoor: Backdoor,
        clock: FakeClock,
    ) -> None:
        first = await queue.enqueue(AlphaJob(number=1), dedup_key=KEY)
        absorbed = await queue.enqueue(AlphaJob(number=2), dedup_key=KEY)
        running = await claim(store)
        await clock.advance(3)
        second = await queue.enqueue(AlphaJob(number=3), dedup_key=KEY)

        assert absorbed.id == first.id == running.id
        assert await monitor.items_by_dedup_key(KEY, limit=50) == await _rows(
            backdoor, [second.id, first.id]
        )
