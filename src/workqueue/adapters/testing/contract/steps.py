"""Steps the contract tests share: claim, expire a lease, reclaim."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, ContractKind
from workqueue.domain import HeartbeatAnswer, Lease, RunOutcome, WorkItem, WorkQueue, WorkStore

__all__ = [
    "ALL_KINDS",
    "LEASE",
    "LEASED_WRITES",
    "LONG_LEASE",
    "MAX_STALLS",
    "SHORT_LEASE",
    "WORKER",
    "claim",
    "expire_the_lease",
    "lost_lease_after_a_reclaim",
    "running_after_stalls",
]

LEASE = timedelta(seconds=60)
"""The lease every contract claim takes unless a test says otherwise."""

SHORT_LEASE = timedelta(seconds=17)
LONG_LEASE = timedelta(seconds=95)
"""Leases other than :data:`LEASE`, so a store that ignores the duration it is given shows."""

MAX_STALLS = 3
"""The stall limit the contract recovers with, as in production."""

WORKER = "contract-worker"

ALL_KINDS: tuple[str, ...] = tuple(kind.value for kind in ContractKind)


async def claim(
    store: WorkStore,
    *,
    kinds: tuple[str, ...] = ALL_KINDS,
    worker_id: str = WORKER,
    lease: timedelta = LEASE,
) -> WorkItem:
    """Claim the next item, which the test knows is there.

    :raises AssertionError: if nothing was claimable.
    """
    item = await store.claim(kinds, worker_id=worker_id, lease_duration=lease)
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


async def a_lost_lease_beside_a_held_one(
    queue: WorkQueue, store: WorkStore, clock: FakeClock
) -> tuple[Lease, WorkItem, WorkItem]:
    """A first attempt's lease, lost to a reclaim, and another item claimed and held.

    :returns: the lost lease, its item as reclaimed, and the held item.
    """
    await queue.enqueue(AlphaJob(number=1))
    stale, reclaimed = await lost_lease_after_a_reclaim(store, clock)
    await queue.enqueue(AlphaJob(number=2))
    return stale, reclaimed, await claim(store)


async def a_lost_lease_beside_a_held_one_of_the_same_attempt(
    queue: WorkQueue, store: WorkStore, clock: FakeClock
) -> tuple[Lease, WorkItem, WorkItem]:
    """A first attempt's lease, lost to a reclaim, and another item held by its second.

    A batch of the two holds the attempt numbers 1 and 2, and so does the lost
    lease's row: a store that fences a batch by "its id and its attempt are among
    the batch's" instead of row by row takes the lost lease for a held one.

    :returns: the lost lease, its item as reclaimed, and the held item (attempt 2).
    """
    await queue.enqueue(AlphaJob(number=1))
    await queue.enqueue(AlphaJob(number=2))
    first, second = await claim(store), await claim(store)
    await expire_the_lease(clock)
    assert (await store.recover_expired(max_stalls=MAX_STALLS)).requeued == [first.id, second.id]
    reclaimed, held = await claim(store), await claim(store)
    assert (reclaimed.id, held.id, held.attempt) == (first.id, second.id, 2)
    return first.lease, reclaimed, held


async def lease_held(heartbeat: Awaitable[HeartbeatAnswer]) -> bool:
    """Whether the heartbeat found its lease held: what the fencing tests ask of every write."""
    return bool(await heartbeat)


async def _first_held(heartbeats: Awaitable[list[HeartbeatAnswer]]) -> bool:
    (answer,) = await heartbeats
    return bool(answer)


async def _completed(completion: Awaitable[tuple[bool, WorkItem | None]]) -> bool:
    held, _ = await completion
    return held


async def _first_completed(completions: Awaitable[list[tuple[bool, WorkItem | None]]]) -> bool:
    ((held, _),) = await completions
    return held


LeasedWrite = Callable[[WorkStore, Lease], Awaitable[bool]]

LEASED_WRITES: dict[str, LeasedWrite] = {
    "heartbeat": lambda store, lease: lease_held(
        store.heartbeat(lease, progress={"from": "heartbeat"}, lease_duration=LEASE)
    ),
    "complete": lambda store, lease: store.finish(
        lease, RunOutcome.succeeded({"from": "complete"})
    ),
    "fail": lambda store, lease: store.finish(lease, RunOutcome.failed("boom", {"from": "fail"})),
    "release": lambda store, lease: store.finish(lease, RunOutcome.released({"from": "release"})),
    "mark_cancelled": lambda store, lease: store.finish(
        lease, RunOutcome.cancelled({"from": "mark_cancelled"})
    ),
    # The calls that write under several leases at once, given one: each lease in
    # them is fenced as the single calls fence it. The completions claim nothing
    # (no kinds), so what they write is their lease's alone.
    "heartbeat_many": lambda store, lease: _first_held(
        store.heartbeat_many([(lease, {"from": "heartbeat_many"})], lease_duration=LEASE)
    ),
    "complete_and_claim": lambda store, lease: _completed(
        store.complete_and_claim(
            lease,
            progress={"from": "complete_and_claim"},
            kinds=(),
            worker_id=WORKER,
            lease_duration=LEASE,
        )
    ),
    "complete_and_claim_many": lambda store, lease: _first_completed(
        store.complete_and_claim_many(
            [(lease, {"from": "complete_and_claim_many"})],
            kinds=(),
            worker_id=WORKER,
            lease_duration=LEASE,
        )
    ),
}
"""Every write fenced by a lease, by name, each leaving a trace if it lands."""


async def running_after_stalls(store: WorkStore, clock: FakeClock, stalls: int) -> WorkItem:
    """Claim the next item and let its lease lapse ``stalls`` times, then claim it again.

    :returns: the item, running again, with ``stalls`` stalls and attempt ``stalls + 1``.
    :raises AssertionError: if a step did not go as the contract says.
    """
    assert stalls < MAX_STALLS
    for _ in range(stalls):
        lapsed = await claim(store)
        await expire_the_lease(clock)
        assert (await store.recover_expired(max_stalls=MAX_STALLS)).requeued == [lapsed.id]
    item = await claim(store)
    assert (item.stalls, item.attempt) == (stalls, stalls + 1)
    return item
