"""Steps the contract tests share: claim, expire a lease, reclaim."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta

from adapters.testing.clock import FakeClock
from adapters.testing.contract.kinds import ContractKind
from domain import Lease, WorkItem, WorkStore

__all__ = [
    "ALL_KINDS",
    "LEASE",
    "LEASED_WRITES",
    "MAX_STALLS",
    "WORKER",
    "claim",
    "expire_the_lease",
    "lost_lease_after_a_reclaim",
]

LEASE = timedelta(seconds=60)
"""The lease every contract claim takes."""

MAX_STALLS = 3
"""The stall limit the contract recovers with, as in production."""

WORKER = "contract-worker"

ALL_KINDS: tuple[str, ...] = tuple(kind.value for kind in ContractKind)


async def claim(
    store: WorkStore, *, kinds: tuple[str, ...] = ALL_KINDS, worker_id: str = WORKER
) -> WorkItem:
    """Claim the next item, which the test knows is there.

    :raises AssertionError: if nothing was claimable.
    """
    item = await store.claim(kinds, worker_id=worker_id, lease_duration=LEASE)
    assert item is not None, "expected a claimable item"
    return item


async def expire_the_lease(clock: FakeClock) -> None:
    """Move time just past a lease taken now."""
    await clock.advance(LEASE.total_seconds() + 1)


async def lost_lease_after_a_reclaim(store: WorkStore, clock: FakeClock) -> tuple[Lease, WorkItem]:
    """Claim the next item, let its lease expire, recover it and claim it again.

    :returns: the first attempt's lease (now lost) and the item as reclaimed.
    """
    first = await claim(store)
    await expire_the_lease(clock)
    recovered = await store.recover_expired(max_stalls=MAX_STALLS)
    assert recovered.requeued == [first.id]
    second = await claim(store)
    assert second.id == first.id
    return first.lease, second


LeasedWrite = Callable[[WorkStore, Lease], Awaitable[bool]]

LEASED_WRITES: dict[str, LeasedWrite] = {
    "heartbeat": lambda store, lease: store.heartbeat(
        lease, progress={"from": "heartbeat"}, lease_duration=LEASE
    ),
    "complete": lambda store, lease: store.complete(lease, progress={"from": "complete"}),
    "fail": lambda store, lease: store.fail(lease, error="boom", progress={"from": "fail"}),
    "release": lambda store, lease: store.release(lease, progress={"from": "release"}),
}
"""Every write fenced by a lease, by name, each leaving a trace if it lands."""
