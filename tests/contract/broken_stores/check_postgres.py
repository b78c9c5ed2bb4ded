"""The kit on each broken PostgreSQL store: every class here must fail (see stores.py).

Each class runs the contracts its bug meets (the listing contract and the model
check for a listing bug, the claim contracts for a claim bug, the enqueue-if-due
contract for a due-ness bug), not the whole suite, to keep the check's time
down. Not collected by a plain pytest run; see test_the_kit_fails_broken_stores.py.
"""

from __future__ import annotations

import asyncpg
from stores import (
    CancelsAfterReadingTheStatus,
    ClaimsManyInFifoOrder,
    ClaimsPausedKindsOnPostgres,
    ClaimsWaitingForLocks,
    ClaimsWithoutSkipLocked,
    CompletionIgnoresTheStatusOnPostgres,
    EnqueueIfDueLockedInTheInsert,
    EnqueueIfDueWithoutTheLock,
    HeartbeatManyFencedByIdAlone,
    HeartbeatManyFencedByTheBatchOnPostgres,
    ListsEveryWorkersItems,
    NeverClaimsWaitingItems,
    NewestFirstIgnoresFilters,
    RetryLeftInTheClaimIndex,
    TakesFailedWithoutLocking,
    TakesSlotsWithoutLockingThem,
)

from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import (
    CancelContract,
    CapContract,
    ClaimContract,
    CompleteAndClaimContract,
    CompleteAndClaimManyContract,
    EnqueueIfDueContract,
    FencingContract,
    HangGuard,
    HeartbeatManyContract,
    ListingContract,
    ModelContract,
    PauseContract,
    RetryContract,
    TimingContract,
)
from workqueue.adapters.testing.contract.bulk import BulkContract
from workqueue.adapters.testing.postgres import PostgresContractFixtures
from workqueue.domain import WorkQueue, WorkStore


class TestNewestFirstIgnoresFilters(
    ListingContract, ModelContract, HangGuard, PostgresContractFixtures
):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return NewestFirstIgnoresFilters(pool, clock)


class TestListsEveryWorkersItems(ListingContract, HangGuard, PostgresContractFixtures):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return ListsEveryWorkersItems(pool, clock)


# A broken claim waits for the lock for good; the default patience (10 s) would
# only make this check slower.
SHORT_PATIENCE = 2.0


class TestClaimsWithoutSkipLocked(
    ClaimContract, CompleteAndClaimContract, HangGuard, PostgresContractFixtures
):
    lock_patience_seconds = SHORT_PATIENCE

    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return ClaimsWithoutSkipLocked(pool, clock)


class TestClaimsWaitingForLocks(
    ClaimContract, CompleteAndClaimContract, HangGuard, PostgresContractFixtures
):
    lock_patience_seconds = SHORT_PATIENCE

    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return ClaimsWaitingForLocks(pool, clock)


class TestEnqueueIfDueWithoutTheLock(EnqueueIfDueContract, HangGuard, PostgresContractFixtures):
    def make_queue(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkQueue:
        return EnqueueIfDueWithoutTheLock(pool, clock)


class TestEnqueueIfDueLockedInTheInsert(EnqueueIfDueContract, HangGuard, PostgresContractFixtures):
    def make_queue(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkQueue:
        return EnqueueIfDueLockedInTheInsert(pool, clock)


class TestCancelsAfterReadingTheStatus(CancelContract, HangGuard, PostgresContractFixtures):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return CancelsAfterReadingTheStatus(pool, clock)


class TestHeartbeatManyFencedByIdAlone(HeartbeatManyContract, HangGuard, PostgresContractFixtures):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return HeartbeatManyFencedByIdAlone(pool, clock)


class TestNeverClaimsWaitingItems(
    ClaimContract, TimingContract, HangGuard, PostgresContractFixtures
):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return NeverClaimsWaitingItems(pool, clock)


class TestClaimsPausedKindsOnPostgres(PauseContract, HangGuard, PostgresContractFixtures):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return ClaimsPausedKindsOnPostgres(pool, clock)


class TestClaimsManyInFifoOrder(TimingContract, HangGuard, PostgresContractFixtures):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return ClaimsManyInFifoOrder(pool, clock)


class TestRetryLeftInTheClaimIndex(RetryContract, HangGuard, PostgresContractFixtures):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return RetryLeftInTheClaimIndex(pool, clock)


class TestHeartbeatManyFencedByTheBatchOnPostgres(
    HeartbeatManyContract, FencingContract, HangGuard, PostgresContractFixtures
):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return HeartbeatManyFencedByTheBatchOnPostgres(pool, clock)


class TestCompletionIgnoresTheStatusOnPostgres(
    CompleteAndClaimManyContract, FencingContract, HangGuard, PostgresContractFixtures
):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return CompletionIgnoresTheStatusOnPostgres(pool, clock)


class TestTakesSlotsWithoutLockingThem(CapContract, HangGuard, PostgresContractFixtures):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return TakesSlotsWithoutLockingThem(pool, clock)


class TestTakesFailedWithoutLocking(BulkContract, HangGuard, PostgresContractFixtures):
    def make_store(self, pool: asyncpg.Pool, clock: FakeClock) -> WorkStore:
        return TakesFailedWithoutLocking(pool, clock)
