"""Contract: the adapter's back door itself stores and reads rows faithfully.

Every other contract test trusts the back door; these tests make a broken one
fail loudly and in one place.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.capabilities import (
    StoreCapabilities,
    skip_unless_refresh_tokens,
)
from workqueue.adapters.testing.contract.kinds import ContractKind
from workqueue.domain import WorkItem, WorkStatus

__all__ = ["BackdoorContract"]


class BackdoorContract:
    """The back door reads back exactly what it inserted, with fresh-item defaults."""

    async def test_the_back_door_inserts_a_fresh_queued_item_by_default(
        self, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        item_id = await backdoor.insert_item(kind=ContractKind.BETA)

        assert await backdoor.read_item(item_id) == WorkItem.queued(
            item_id, "contract_beta", {}, enqueued_at=clock.now()
        )

    async def test_the_back_door_reads_back_every_field_it_inserted(
        self, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        t = clock.now()
        wanted = WorkItem(
            id=0,
            kind="contract_gamma",
            payload={"nested": {"list": [1, 2.5, "three", None, True]}},
            status=WorkStatus.FAILED,
            attempt=4,
            stalls=2,
            dedup_key="key",
            enqueued_at=t - timedelta(hours=3),
            priority=-7,
            run_at=t - timedelta(hours=2, minutes=30),
            started_at=t - timedelta(hours=2),
            heartbeat_at=t - timedelta(hours=1),
            lease_expires_at=t + timedelta(minutes=1),
            finished_at=t - timedelta(microseconds=1),
            worker_id="worker-9",
            progress={"done": [1, 2]},
            error="it broke",
        )
        first = await backdoor.insert_item(kind=ContractKind.ALPHA)
        second = await backdoor.insert_item(
            kind=wanted.kind,
            payload=wanted.payload,
            status=wanted.status,
            attempt=wanted.attempt,
            stalls=wanted.stalls,
            dedup_key=wanted.dedup_key,
            enqueued_at=wanted.enqueued_at,
            priority=wanted.priority,
            run_at=wanted.run_at,
            started_at=wanted.started_at,
            heartbeat_at=wanted.heartbeat_at,
            lease_expires_at=wanted.lease_expires_at,
            finished_at=wanted.finished_at,
            worker_id=wanted.worker_id,
            progress=wanted.progress,
            error=wanted.error,
        )

        assert second > first
        assert await backdoor.read_item(second) == replace(wanted, id=second)
        assert [item.id for item in await backdoor.all_items()] == [first, second]
        assert await backdoor.read_item(second + 1000) is None

    async def test_the_back_door_inserts_and_lists_refresh_tokens(
        self, backdoor: Backdoor, clock: FakeClock, capabilities: StoreCapabilities
    ) -> None:
        skip_unless_refresh_tokens(capabilities)
        first = await backdoor.insert_refresh_token(
            user_id=1,
            token_hash="a",  # noqa: S106 - a made-up hash
            created_at=clock.now(),
            expires_at=clock.now(),
        )
        second = await backdoor.insert_refresh_token(
            user_id=1,
            token_hash="b",  # noqa: S106 - a made-up hash
            created_at=clock.now(),
            expires_at=clock.now(),
            revoked_at=clock.now(),
        )

        assert first != second
        assert await backdoor.refresh_token_hashes() == {"a", "b"}
