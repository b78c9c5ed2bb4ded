"""Contract: progress given as a snapshot encoded once is written as its value."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from pydantic import JsonValue

from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.kinds import AlphaJob
from workqueue.adapters.testing.contract.steps import LEASE, claim, lease_held
from workqueue.domain import (
    HeartbeatAnswer,
    Lease,
    ProgressSnapshot,
    RunOutcome,
    WorkQueue,
    WorkStore,
)

__all__ = ["ProgressSnapshotContract"]

ProgressWrite = Callable[[WorkStore, Lease, "JsonValue | ProgressSnapshot"], Awaitable[bool]]

PROGRESS_WRITES: dict[str, ProgressWrite] = {
    "heartbeat": lambda s, lease, p: lease_held(
        s.heartbeat(lease, progress=p, lease_duration=LEASE)
    ),
    "complete": lambda s, lease, p: s.finish(lease, RunOutcome.succeeded(p)),
    "fail": lambda s, lease, p: s.finish(lease, RunOutcome.failed("boom", p)),
    "release": lambda s, lease, p: s.finish(lease, RunOutcome.released(p)),
    "mark_cancelled": lambda s, lease, p: s.finish(lease, RunOutcome.cancelled(p)),
}


class ProgressSnapshotContract:
    """The port's writes take a JSON value or a ProgressSnapshot as progress, to the same effect."""

    @pytest.mark.parametrize("write", sorted(PROGRESS_WRITES))
    async def test_a_snapshot_encoded_once_is_stored_as_its_value(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, write: str
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        snapshot = ProgressSnapshot.of_json('{"step":2,"note":"é ✓","rows":[1,2]}')

        assert await PROGRESS_WRITES[write](store, claimed.lease, snapshot) is True

        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert item.progress == {"step": 2, "note": "é ✓", "rows": [1, 2]}

    @pytest.mark.parametrize("write", sorted(PROGRESS_WRITES))
    async def test_a_snapshot_of_a_value_is_stored_as_that_value(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, write: str
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)

        snapshot = ProgressSnapshot.of_value([None, True, 1.5, "x"])
        assert await PROGRESS_WRITES[write](store, claimed.lease, snapshot) is True

        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert item.progress == [None, True, 1.5, "x"]

    async def test_a_snapshot_is_fenced_like_any_progress(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor
    ) -> None:
        await queue.enqueue(AlphaJob())
        claimed = await claim(store)
        await store.finish(claimed.lease, RunOutcome.succeeded({"kept": True}))

        stale = ProgressSnapshot.of_json('{"kept":false}')
        held = await store.heartbeat(claimed.lease, progress=stale, lease_duration=LEASE)

        assert held is HeartbeatAnswer.LOST
        item = await backdoor.read_item(claimed.id)
        assert item is not None
        assert item.progress == {"kept": True}
