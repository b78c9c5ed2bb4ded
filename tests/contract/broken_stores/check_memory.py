"""The whole kit on each broken in-memory store: every class here must fail (see stores.py).

Not collected by a plain pytest run (the name has no ``test_``); the test in
tests/contract/test_the_kit_fails_broken_stores.py runs each class on its own.
"""

from __future__ import annotations

import pytest
from stores import (
    BulkIgnoresUpToId,
    CancelsInTwoSteps,
    CancelsRunningItemsAtOnce,
    ChecksTheCapBeforeClaiming,
    ClaimsInTwoSteps,
    ClaimsPausedKinds,
    ClaimsWaitingItemsEarly,
    CompletionFreesTheSlotTooLate,
    CompletionIgnoresTheStatus,
    CountsFinishedWithoutCancelled,
    CountsTheLastAddOnly,
    CronCatchesUp,
    CronInUtc,
    CronOverlapsAlways,
    CronTurnInTwoSteps,
    CronTurnsFromItems,
    CronTurnsOnTheWallClock,
    DropsProgressOnReads,
    DueBySuccessesAlone,
    DueByTheNewestFinishAlone,
    EnqueueIfDueInTwoSteps,
    FreesTheSlotOnlyOnSuccess,
    HeartbeatManyAnswersAsOne,
    HeartbeatManyFencedByTheBatch,
    HeartbeatManyLeasesFor60s,
    HeartbeatNeverAnswersCancel,
    IgnoresLeaseDuration,
    IgnoresPriority,
    IgnoresTheCap,
    KeepsOnlyTheLastFailure,
    NextRunAtOfEveryKind,
    PauseReplacesThePause,
    PolicyCapReplacesTheOperators,
    RecoveryKeepsTheSlot,
    RecoveryRequeuesCancelRequested,
    ReleaseForgetsStalls,
    RequeuesWithoutMarking,
    RetryLeavesTheItemRunning,
    RetryRunsAtOnce,
    SamplesEveryCall,
    SnoozeCountsAFailure,
    StallSpendsARetry,
)

from workqueue.adapters.memory import InMemoryState
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import MemoryContractFixtures, WorkQueueContractSuite
from workqueue.adapters.testing.contract.activity import ActivityContract, ActivityFixtures
from workqueue.adapters.testing.contract.monitoring import MonitoringContract, MonitoringFixtures
from workqueue.domain import ActivityLog, WorkMonitor, WorkQueue, WorkStore


class TestIgnoresLeaseDuration(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return IgnoresLeaseDuration(state, clock)


class TestDropsProgressOnReads(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return DropsProgressOnReads(state, clock)


class TestReleaseForgetsStalls(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return ReleaseForgetsStalls(state, clock)


class TestClaimsInTwoSteps(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return ClaimsInTwoSteps(state, clock)


class TestCronTurnsFromItems(WorkQueueContractSuite, MemoryContractFixtures):
    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return CronTurnsFromItems(state, clock)


class TestCronInUtc(WorkQueueContractSuite, MemoryContractFixtures):
    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return CronInUtc(state, clock)


class TestCronTurnsOnTheWallClock(WorkQueueContractSuite, MemoryContractFixtures):
    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return CronTurnsOnTheWallClock(state, clock)


class TestCronTurnInTwoSteps(WorkQueueContractSuite, MemoryContractFixtures):
    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return CronTurnInTwoSteps(state, clock)


class TestCronCatchesUp(WorkQueueContractSuite, MemoryContractFixtures):
    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return CronCatchesUp(state, clock)


class TestCronOverlapsAlways(WorkQueueContractSuite, MemoryContractFixtures):
    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return CronOverlapsAlways(state, clock)


class TestEnqueueIfDueInTwoSteps(WorkQueueContractSuite, MemoryContractFixtures):
    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return EnqueueIfDueInTwoSteps(state, clock)


class TestDueBySuccessesAlone(WorkQueueContractSuite, MemoryContractFixtures):
    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return DueBySuccessesAlone(state, clock)


class TestDueByTheNewestFinishAlone(WorkQueueContractSuite, MemoryContractFixtures):
    def make_queue(self, state: InMemoryState, clock: FakeClock) -> WorkQueue:
        return DueByTheNewestFinishAlone(state, clock)


class TestRecoveryRequeuesCancelRequested(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return RecoveryRequeuesCancelRequested(state, clock)


class TestHeartbeatNeverAnswersCancel(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return HeartbeatNeverAnswersCancel(state, clock)


class TestClaimsPausedKinds(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return ClaimsPausedKinds(state, clock)


class TestPauseReplacesThePause(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return PauseReplacesThePause(state, clock)


class TestIgnoresTheCap(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return IgnoresTheCap(state, clock)


class TestChecksTheCapBeforeClaiming(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return ChecksTheCapBeforeClaiming(state, clock)


class TestRecoveryKeepsTheSlot(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return RecoveryKeepsTheSlot(state, clock)


class TestFreesTheSlotOnlyOnSuccess(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return FreesTheSlotOnlyOnSuccess(state, clock)


class TestCompletionFreesTheSlotTooLate(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return CompletionFreesTheSlotTooLate(state, clock)


class TestPolicyCapReplacesTheOperators(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return PolicyCapReplacesTheOperators(state, clock)


class TestCancelsRunningItemsAtOnce(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return CancelsRunningItemsAtOnce(state, clock)


class TestCancelsInTwoSteps(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return CancelsInTwoSteps(state, clock)


class TestHeartbeatManyAnswersAsOne(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return HeartbeatManyAnswersAsOne(state, clock)


class TestClaimsWaitingItemsEarly(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return ClaimsWaitingItemsEarly(state, clock)


class TestIgnoresPriority(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return IgnoresPriority(state, clock)


class TestNextRunAtOfEveryKind(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return NextRunAtOfEveryKind(state, clock)


class TestRetryLeavesTheItemRunning(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return RetryLeavesTheItemRunning(state, clock)


class TestRetryRunsAtOnce(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return RetryRunsAtOnce(state, clock)


class TestKeepsOnlyTheLastFailure(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return KeepsOnlyTheLastFailure(state, clock)


class TestSnoozeCountsAFailure(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return SnoozeCountsAFailure(state, clock)


class TestStallSpendsARetry(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return StallSpendsARetry(state, clock)


class TestHeartbeatManyFencedByTheBatch(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return HeartbeatManyFencedByTheBatch(state, clock)


class TestHeartbeatManyLeasesFor60s(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return HeartbeatManyLeasesFor60s(state, clock)


class TestCompletionIgnoresTheStatus(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return CompletionIgnoresTheStatus(state, clock)


class TestCountsFinishedWithoutCancelled(
    MonitoringContract, MemoryContractFixtures, MonitoringFixtures
):
    @pytest.fixture
    def monitor(self, state: InMemoryState) -> WorkMonitor:
        return CountsFinishedWithoutCancelled(state)


class TestSamplesEveryCall(ActivityContract, MemoryContractFixtures, ActivityFixtures):
    @pytest.fixture
    def activity_log(self, state: InMemoryState, clock: FakeClock) -> ActivityLog:
        return SamplesEveryCall(state, clock)


class TestCountsTheLastAddOnly(ActivityContract, MemoryContractFixtures, ActivityFixtures):
    @pytest.fixture
    def activity_log(self, state: InMemoryState, clock: FakeClock) -> ActivityLog:
        return CountsTheLastAddOnly(state, clock)


class TestRequeuesWithoutMarking(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return RequeuesWithoutMarking(state, clock)


class TestBulkIgnoresUpToId(WorkQueueContractSuite, MemoryContractFixtures):
    def make_store(self, state: InMemoryState, clock: FakeClock) -> WorkStore:
        return BulkIgnoresUpToId(state, clock)
