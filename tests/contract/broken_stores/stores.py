"""Stores with one bug each, against a semantic the contract kit must hold them to.

Each is a small subclass of one of our stores or queues, so all it gets wrong is
its one bug. tests/contract/test_the_kit_fails_broken_stores.py runs the kit on
each (the ``check_*.py`` modules beside this one) and expects it to fail, in
the tests named there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from pydantic import JsonValue

from workqueue.adapters.memory import (
    InMemoryActivityLog,
    InMemoryWorkMonitor,
    InMemoryWorkQueue,
    InMemoryWorkStore,
)
from workqueue.adapters.memory.due import kind_is_due
from workqueue.adapters.postgres import PostgresWorkQueue, PostgresWorkStore
from workqueue.adapters.postgres.channel import CHANNEL
from workqueue.adapters.postgres.enqueue_plan import check_request
from workqueue.adapters.postgres.pool import lease_columns
from workqueue.adapters.postgres.queue_sql import STATEMENTS
from workqueue.adapters.postgres.rows import work_item_from_row
from workqueue.adapters.postgres.store import _SQL
from workqueue.domain import (
    LARGEST_ITEM_ID,
    BulkBatch,
    CancelOutcome,
    CapSource,
    EnqueueRequest,
    EnqueueResult,
    HeartbeatAnswer,
    KindCap,
    KindPause,
    Lease,
    LeaseProgress,
    MinuteCounts,
    Overlap,
    PayloadDecoder,
    ProgressSnapshot,
    RecoveryResult,
    RunEnding,
    RunOutcome,
    WorkItem,
    WorkSchedule,
    WorkStatus,
    decoded,
    kind_name,
    requeued_batch,
)

FIXED_LEASE = timedelta(seconds=60)
ENQUEUE_IF_DUE = STATEMENTS["enqueue_if_due"]
LOCK_PERIODIC_KIND = STATEMENTS["lock_periodic_kind"]


class IgnoresLeaseDuration(InMemoryWorkStore):
    """Leases every claim and heartbeat for 60 s, whatever the worker asks for."""

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        return await super().claim(kinds, worker_id=worker_id, lease_duration=FIXED_LEASE)

    async def heartbeat(
        self, lease: Lease, *, progress: JsonValue, lease_duration: timedelta
    ) -> HeartbeatAnswer:
        return await super().heartbeat(lease, progress=progress, lease_duration=FIXED_LEASE)


class ClaimsWaitingItemsEarly(InMemoryWorkStore):
    """Claims queued items whatever their run_at: a delayed item runs at once."""

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        for item in list(self._state.items.values()):
            if item.status is WorkStatus.QUEUED and item.run_at > self._clock.now():
                self._state.write(replace(item, run_at=self._clock.now()))
        return await super().claim(kinds, worker_id=worker_id, lease_duration=lease_duration)


class IgnoresPriority(InMemoryWorkStore):
    """Claims in FIFO order alone, as if every item had priority 0."""

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        # Only the items with a priority are rewritten: rewriting every item on every
        # claim made the contract's races spin past the hang guard.
        items = self._state.items
        priorities = {item.id: item.priority for item in items.values() if item.priority}
        for id_ in priorities:
            self._state.write(replace(items[id_], priority=0))
        claimed = await super().claim(kinds, worker_id=worker_id, lease_duration=lease_duration)
        for id_, priority in priorities.items():
            self._state.write(replace(items[id_], priority=priority))
        return None if claimed is None else self._state.items[claimed.id]


class NextRunAtOfEveryKind(InMemoryWorkStore):
    """Answers when the next waiting item of any kind is due, not only of those asked for."""

    async def next_run_at(self, kinds: Collection[str]) -> datetime | None:
        return await super().next_run_at({item.kind for item in self._state.items.values()})


class ClaimsPausedKinds(InMemoryWorkStore):
    """Claims as if no kind were paused: a pause is stored, listed and resumed, never obeyed."""

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        pauses = dict(self._state.pauses)
        self._state.pauses.clear()
        try:
            return await super().claim(kinds, worker_id=worker_id, lease_duration=lease_duration)
        finally:
            self._state.pauses.update(pauses)


class PauseReplacesThePause(InMemoryWorkStore):
    """A pause of a paused kind starts a new pause: the operator loses since when and why."""

    async def pause_kind(self, kind: str, *, reason: str | None = None) -> KindPause:
        self._state.pauses.pop(kind, None)
        return await super().pause_kind(kind, reason=reason)


class IgnoresTheCap(InMemoryWorkStore):
    """Claims as if no kind were capped: a cap is stored and listed, never obeyed."""

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        slots = dict(self._state.slots)
        self._state.slots.clear()
        try:
            return await super().claim(kinds, worker_id=worker_id, lease_duration=lease_duration)
        finally:
            self._state.slots.update(slots)


class ChecksTheCapBeforeClaiming(InMemoryWorkStore):
    """A claim reads which capped kinds have a free slot, awaits, then claims: claimers
    that read together all take the last slot (a count read before the others' claims)."""

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        full = {kind for kind, slots in self._state.slots.items() if None not in slots}
        await asyncio.sleep(0)  # another claimer takes the last slot meanwhile
        wanted = {kind_name(kind) for kind in kinds} - full
        slots = dict(self._state.slots)
        self._state.slots.clear()
        try:
            item = await super().claim(wanted, worker_id=worker_id, lease_duration=lease_duration)
        finally:
            self._state.slots.update(slots)
        free = None if item is None else self._state.slots.get(item.kind)
        if item is not None and free is not None and None in free:
            free[free.index(None)] = item.id
        return item


class RecoveryKeepsTheSlot(InMemoryWorkStore):
    """Lease recovery returns a dead worker's item but its slot stays held: the kind runs
    one fewer at a time for every worker that died."""

    async def recover_expired(self, *, max_stalls: int) -> RecoveryResult:
        held = {kind: list(slots) for kind, slots in self._state.slots.items()}
        result = await super().recover_expired(max_stalls=max_stalls)
        for kind, slots in held.items():
            self._state.slots[kind][:] = slots
        return result


class FreesTheSlotOnlyOnSuccess(InMemoryWorkStore):
    """A run its holder ends other than by a success (a failure, a retry, a snooze, a
    release, a cancel) keeps its slot: every failure shrinks the kind's cap for good."""

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        item = self._held(lease)
        slots = [] if item is None else self._state.slots.get(item.kind, [])
        if item is None or outcome.ending is RunEnding.SUCCEEDED or item.id not in slots:
            return await super().finish(lease, outcome)
        slot = slots.index(item.id)
        finished = await super().finish(lease, outcome)
        slots[slot] = item.id
        return finished


class CompletionFreesTheSlotTooLate(InMemoryWorkStore):
    """A completion claims before it frees its own slot (as a statement that reads the slots
    as they were when it began): a worker at its kind's cap claims nothing with it."""

    async def complete_and_claim(
        self,
        lease: Lease,
        *,
        progress: JsonValue | ProgressSnapshot,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> tuple[bool, WorkItem | None]:
        claimed = await self.claim(kinds, worker_id=worker_id, lease_duration=lease_duration)
        completed = await self.finish(lease, RunOutcome.succeeded(progress))
        return completed, claimed


class PolicyCapReplacesTheOperators(InMemoryWorkStore):
    """A worker starting with its kind's policy overwrites the cap an operator set."""

    async def cap_kind(
        self, kind: str, max_running: int | None, *, source: CapSource = CapSource.OPERATOR
    ) -> KindCap | None:
        current = self._state.caps.get(kind)
        if source is CapSource.POLICY and current is not None:
            self._state.caps[kind] = replace(current, source=CapSource.POLICY)
        return await super().cap_kind(kind, max_running, source=source)


class DropsProgressOnReads(InMemoryWorkStore):
    """``get`` and ``list_items`` leave out the progress snapshot."""

    async def get(self, item_id: int) -> WorkItem | None:
        item = await super().get(item_id)
        return None if item is None else replace(item, progress=None)

    async def list_items(
        self,
        *,
        statuses: Collection[WorkStatus] | None = None,
        kinds: Collection[str] | None = None,
        worker_ids: Collection[str] | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> list[WorkItem]:
        items = await super().list_items(
            statuses=statuses,
            kinds=kinds,
            worker_ids=worker_ids,
            limit=limit,
            newest_first=newest_first,
        )
        return [replace(item, progress=None) for item in items]


class ReleaseForgetsStalls(InMemoryWorkStore):
    """A release puts the item back with its stall count reset to 0."""

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        item = self._held(lease)
        if item is not None and outcome.ending is RunEnding.RELEASED:
            self._state.write(replace(item, stalls=0))
        return await super().finish(lease, outcome)


class RetryLeavesTheItemRunning(InMemoryWorkStore):
    """A retry records the failure and its run_at but leaves the item running under the
    old lease: the failed run's holder can still write, and nobody claims it again."""

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        item = self._held(lease)
        if item is None or outcome.ending is not RunEnding.RETRIED:
            return await super().finish(lease, outcome)
        failure = outcome.failure(item.attempt, self._clock.now())
        assert failure is not None
        self._state.write(
            replace(
                item,
                error=outcome.error,
                run_at=outcome.run_at or item.run_at,
                failures=(*item.failures, failure),
            )
        )
        return True


class RetryRunsAtOnce(InMemoryWorkStore):
    """A retry goes back to queued at once: its run_at (the backoff) is dropped."""

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        if outcome.ending is RunEnding.RETRIED:
            outcome = replace(outcome, run_at=None)
        return await super().finish(lease, outcome)


class KeepsOnlyTheLastFailure(InMemoryWorkStore):
    """Each failure replaces the ones before it in the item's failures."""

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        item = self._held(lease)
        if item is not None:
            self._state.write(replace(item, failures=()))
        return await super().finish(lease, outcome)


class SnoozeCountsAFailure(InMemoryWorkStore):
    """A snooze is recorded as a failure of the item (spending an attempt of its policy)."""

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        item = self._held(lease)
        if item is not None and outcome.ending is RunEnding.SNOOZED:
            failure = RunOutcome.failed("snoozed").failure(item.attempt, self._clock.now())
            assert failure is not None
            self._state.write(replace(item, failures=(*item.failures, failure)))
        return await super().finish(lease, outcome)


class StallSpendsARetry(InMemoryWorkStore):
    """Recovery records every stall as a failure of the item, not only the last one."""

    async def recover_expired(self, *, max_stalls: int) -> RecoveryResult:
        now = self._clock.now()
        for item in list(self._state.items.values()):
            expired = item.lease_expires_at is not None and item.lease_expires_at < now
            if item.status is WorkStatus.RUNNING and expired and item.stalls + 1 < max_stalls:
                failure = RunOutcome.failed("stalled").failure(item.attempt, now)
                assert failure is not None
                self._state.write(replace(item, failures=(*item.failures, failure)))
        return await super().recover_expired(max_stalls=max_stalls)


class ClaimsInTwoSteps(InMemoryWorkStore):
    """A claim reads the oldest queued item, awaits, then writes: two claimers can share it."""

    async def claim(
        self, kinds: Collection[str], *, worker_id: str, lease_duration: timedelta
    ) -> WorkItem | None:
        wanted = set(kinds) - self._state.pauses.keys()
        oldest = next(
            (
                item
                for item in self._state.items.values()
                if item.status is WorkStatus.QUEUED and item.kind in wanted
            ),
            None,
        )
        if oldest is None:
            return None
        await asyncio.sleep(0)  # another claimer reads the same item meanwhile
        now = self._clock.now()
        return self._state.write(
            replace(
                oldest,
                status=WorkStatus.RUNNING,
                attempt=oldest.attempt + 1,
                started_at=now,
                heartbeat_at=now,
                worker_id=worker_id,
                lease_expires_at=now + lease_duration,
            )
        )


class RecoveryRequeuesCancelRequested(InMemoryWorkStore):
    """Recovery forgets a cancel request: a dead holder's cancelled item runs again."""

    async def recover_expired(self, *, max_stalls: int) -> RecoveryResult:
        for item in list(self._state.items.values()):
            if item.status is WorkStatus.RUNNING and item.cancel_reason is not None:
                self._state.write(replace(item, cancel_reason=None))
        return await super().recover_expired(max_stalls=max_stalls)


class HeartbeatNeverAnswersCancel(InMemoryWorkStore):
    """A heartbeat says the lease is held, never that a cancel was requested."""

    async def heartbeat(
        self, lease: Lease, *, progress: JsonValue | ProgressSnapshot, lease_duration: timedelta
    ) -> HeartbeatAnswer:
        answer = await super().heartbeat(lease, progress=progress, lease_duration=lease_duration)
        return answer and HeartbeatAnswer.HELD


class HeartbeatManyAnswersAsOne(InMemoryWorkStore):
    """Heartbeats each lease of a batch, but answers every one as the first was answered."""

    async def heartbeat_many(
        self,
        beats: Sequence[tuple[Lease, JsonValue | ProgressSnapshot]],
        *,
        lease_duration: timedelta,
    ) -> list[HeartbeatAnswer]:
        answers = await super().heartbeat_many(beats, lease_duration=lease_duration)
        return [answers[0]] * len(answers)


class HeartbeatManyFencedByTheBatch(InMemoryWorkStore):
    """Fences a batch of heartbeats by "the item's attempt is one of the batch's", not
    lease by lease: a lost lease beside a held one of the reclaimed attempt is held."""

    async def heartbeat_many(
        self,
        beats: Sequence[tuple[Lease, JsonValue | ProgressSnapshot]],
        *,
        lease_duration: timedelta,
    ) -> list[HeartbeatAnswer]:
        attempts = {lease.attempt for lease, _ in beats}
        answers = []
        for lease, progress in beats:
            item = self._state.items.get(lease.item_id)
            fenced = lease
            if item is not None and item.attempt in attempts:
                fenced = Lease(lease.item_id, item.attempt)
            answers.append(
                await self.heartbeat(fenced, progress=progress, lease_duration=lease_duration)
            )
        return answers


class HeartbeatManyLeasesFor60s(InMemoryWorkStore):
    """Renews every lease of a batch for 60 s, whatever duration it is given."""

    async def heartbeat_many(
        self,
        beats: Sequence[tuple[Lease, JsonValue | ProgressSnapshot]],
        *,
        lease_duration: timedelta,
    ) -> list[HeartbeatAnswer]:
        return await super().heartbeat_many(beats, lease_duration=FIXED_LEASE)


class CompletionIgnoresTheStatus(InMemoryWorkStore):
    """Completes a batch's leases by id and attempt alone: a late completion overwrites
    an item that has failed or been cancelled meanwhile (under the same attempt)."""

    async def complete_and_claim_many(
        self,
        completions: Sequence[LeaseProgress],
        *,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> list[tuple[bool, WorkItem | None]]:
        for lease, _ in completions:
            item = self._state.items.get(lease.item_id)
            if item is not None and item.attempt == lease.attempt and item.status.is_finished:
                self._state.write(replace(item, status=WorkStatus.RUNNING))
        return await super().complete_and_claim_many(
            completions, kinds=kinds, worker_id=worker_id, lease_duration=lease_duration
        )


class CountsFinishedWithoutCancelled(InMemoryWorkMonitor):
    """Counts the finished items of each kind, leaving the cancelled ones out."""

    async def count_finished(self) -> dict[tuple[str, WorkStatus], int]:
        counts = await super().count_finished()
        return {key: count for key, count in counts.items() if key[1] is not WorkStatus.CANCELLED}


class SamplesEveryCall(InMemoryActivityLog):
    """Takes a depth sample at every call, over the minute's first one."""

    async def sample_depth(self, minute: datetime) -> bool:
        self._state.depth.pop(minute.replace(second=0, microsecond=0), None)
        return await super().sample_depth(minute)


class CountsTheLastAddOnly(InMemoryActivityLog):
    """Keeps the counts of a minute and kind as last added, instead of adding them up."""

    async def add_counts(self, counts: Sequence[MinuteCounts]) -> None:
        for count in counts:
            self._state.activity.pop(
                (count.minute.replace(second=0, microsecond=0), count.kind), None
            )
            await super().add_counts([count])


class CancelsRunningItemsAtOnce(InMemoryWorkStore):
    """A cancel of a running item finishes it under its holder, outside the holder's fence."""

    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        item = self._state.items.get(item_id)
        if item is not None and item.status is WorkStatus.RUNNING:
            self._finish(item, WorkStatus.CANCELLED, error=reason)
            return CancelOutcome.CANCELLED
        return await super().cancel(item_id, reason=reason)


class CancelsInTwoSteps(InMemoryWorkStore):
    """A cancel reads the status, awaits, then writes: a claim in between is overwritten."""

    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        item = self._state.items.get(item_id)
        if item is None or item.status is not WorkStatus.QUEUED:
            return await super().cancel(item_id, reason=reason)
        await asyncio.sleep(0)  # a claimer takes the item meanwhile
        now = self._clock.now()
        current = self._state.items[item_id]
        self._state.write(
            replace(current, status=WorkStatus.CANCELLED, error=reason, finished_at=now)
        )
        return CancelOutcome.CANCELLED


class EnqueueIfDueInTwoSteps(InMemoryWorkQueue):
    """Checks due-ness, awaits, then enqueues: the check and the insert are not one step."""

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        items = self._state.items.values()
        if not kind_is_due(items, schedule.kind, schedule.interval, self._clock.now()):
            return None
        await asyncio.sleep(0)  # a claimer may take another scheduler's item meanwhile
        return await self.enqueue(schedule.payload, dedup_key=schedule.dedup_key)


class CronTurnsFromItems(InMemoryWorkQueue):
    """Tells a cron kind's taken turns by its items alone: once retention deletes
    the item of a fire time, that fire time is due again."""

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        if schedule.cron is not None:
            self._state.fires.pop(schedule.kind, None)
            fire = schedule.calendar.latest_fire(self._clock.now())
            key = schedule.fire_dedup_key(fire)
            if any(item.dedup_key == key for item in self._state.items.values()):
                return None
        return await super().enqueue_if_due(schedule)


class CronInUtc(InMemoryWorkQueue):
    """Reads every calendar in UTC, whatever its time zone."""

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        if schedule.cron is not None:
            schedule = replace(schedule, timezone="UTC")
        return await super().enqueue_if_due(schedule)


class CronTurnsOnTheWallClock(InMemoryWorkQueue):
    """Tells fire times apart by the wall clock of the schedule's time zone: the hour
    the clocks pass twice, when they fall back, has one turn instead of two."""

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        last = self._state.fires.get(schedule.kind)
        if schedule.cron is not None and last is not None:
            zone = ZoneInfo(schedule.timezone)
            fire = schedule.calendar.latest_fire(self._clock.now())
            if fire.astimezone(zone).replace(tzinfo=None) <= last.astimezone(zone).replace(
                tzinfo=None
            ):
                return None
        return await super().enqueue_if_due(schedule)


class CronTurnInTwoSteps(InMemoryWorkQueue):
    """Checks a fire time's turn, awaits, then takes it: two schedulers both take it."""

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        if schedule.cron is not None:
            last = self._state.fires.get(schedule.kind)
            if last is not None and last >= schedule.calendar.latest_fire(self._clock.now()):
                return None
            await asyncio.sleep(0)  # another scheduler may take the turn meanwhile
            self._state.fires.pop(schedule.kind, None)
        return await super().enqueue_if_due(schedule)


class CronCatchesUp(InMemoryWorkQueue):
    """After downtime, makes an item for every fire time missed, not one for them all."""

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        last = self._state.fires.get(schedule.kind)
        if schedule.cron is None or last is None:
            return await super().enqueue_if_due(schedule)
        result = None
        fire = schedule.calendar.next_fire(last)
        while fire <= self._clock.now():
            self._state.fires[schedule.kind] = fire
            key = schedule.fire_dedup_key(fire)
            result = await self.enqueue(schedule.payload, dedup_key=key)
            fire = schedule.calendar.next_fire(fire)
        return result


class CronOverlapsAlways(InMemoryWorkQueue):
    """Queues every fire time's item, also while one of the kind is queued or running."""

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        if schedule.cron is not None:
            schedule = replace(schedule, overlap=Overlap.QUEUE)
        return await super().enqueue_if_due(schedule)


class DueBySuccessesAlone(InMemoryWorkQueue):
    """Decides due-ness on succeeded finishes alone: a failed or cancelled run does not count."""

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        counted = [
            item
            for item in self._state.items.values()
            if not item.status.is_finished or item.status is WorkStatus.SUCCEEDED
        ]
        if not kind_is_due(counted, schedule.kind, schedule.interval, self._clock.now()):
            return None
        return await self.enqueue(schedule.payload, dedup_key=schedule.dedup_key)


class DueByTheNewestFinishAlone(InMemoryWorkQueue):
    """Once a kind has finished, its newest finish alone decides, whatever is running."""

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        items = self._state.items.values()
        now = self._clock.now()
        finishes = [
            item.finished_at
            for item in items
            if item.kind == schedule.kind and item.finished_at is not None
        ]
        if finishes:
            due = now - max(finishes) >= schedule.interval
        else:
            due = kind_is_due(items, schedule.kind, schedule.interval, now)
        if not due:
            return None
        return await self.enqueue(schedule.payload, dedup_key=schedule.dedup_key)


_NEWEST_FIRST_UNFILTERED = """
SELECT id, kind, payload, status, attempt, stalls, dedup_key, enqueued_at, started_at,
       heartbeat_at, lease_expires_at, finished_at, worker_id, progress, error
FROM work_items
ORDER BY id DESC
"""


class NewestFirstIgnoresFilters(PostgresWorkStore):
    """The newest-first listing ignores its filters and its limit."""

    async def list_items(
        self,
        *,
        statuses: Collection[WorkStatus] | None = None,
        kinds: Collection[str] | None = None,
        worker_ids: Collection[str] | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> list[WorkItem]:
        if not newest_first:
            return await super().list_items(
                statuses=statuses, kinds=kinds, worker_ids=worker_ids, limit=limit
            )
        rows = await self._connection.fetch(_NEWEST_FIRST_UNFILTERED)
        return [work_item_from_row(row) for row in rows]


class ListsEveryWorkersItems(PostgresWorkStore):
    """A listing by worker lists the items of every worker (the watchdog would renew leases
    its worker does not hold)."""

    async def list_items(
        self,
        *,
        statuses: Collection[WorkStatus] | None = None,
        kinds: Collection[str] | None = None,
        worker_ids: Collection[str] | None = None,
        limit: int = 100,
        newest_first: bool = False,
    ) -> list[WorkItem]:
        return await super().list_items(
            statuses=statuses, kinds=kinds, limit=limit, newest_first=newest_first
        )


class CancelsAfterReadingTheStatus(PostgresWorkStore):
    """A cancel reads the status, then cancels by id alone: a claim in between is overwritten."""

    async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
        status = await self._connection.fetchval(
            "SELECT status FROM work_items WHERE id = $1", item_id
        )
        if status != WorkStatus.QUEUED:
            return await super().cancel(item_id, reason=reason)
        await self._connection.execute(
            "UPDATE work_items SET status = 'cancelled', error = $2, finished_at = $3,"
            " lease_expires_at = NULL WHERE id = $1",
            item_id,
            reason,
            self._clock.now(),
        )
        return CancelOutcome.CANCELLED


class HeartbeatManyFencedByIdAlone(PostgresWorkStore):
    """Renews a batch of leases matching rows by id and status, not by attempt."""

    async def heartbeat_many(
        self,
        beats: Sequence[tuple[Lease, JsonValue | ProgressSnapshot]],
        *,
        lease_duration: timedelta,
    ) -> list[HeartbeatAnswer]:
        ids, attempts, progress = lease_columns(beats)
        now = self._clock.now()
        rows = await self._connection.fetch(
            _SQL["heartbeat_many"].replace("AND item.attempt = beat.attempt::integer", ""),
            ids,
            attempts,
            now,
            now + lease_duration,
            progress,
        )
        held = {row["id"] for row in rows}
        return [
            HeartbeatAnswer.HELD if lease.item_id in held else HeartbeatAnswer.LOST
            for lease, _ in beats
        ]


class _ClaimSql(PostgresWorkStore):
    """A PostgreSQL store whose one claim statement (also for complete-and-claim) is claim_sql."""

    claim_sql: str

    async def _claim(
        self,
        names: list[str],
        worker_id: str,
        lease_duration: timedelta,
        item_id: int | None,
        attempt: int | None,
        progress: JsonValue | ProgressSnapshot,
    ) -> tuple[bool, WorkItem | None]:
        # The store's one claim statement (it completes the lease given first, if
        # any), with the bug: claim() and complete_and_claim() both come here.
        now = self._clock.now()
        row = await self._connection.fetchrow(
            self.claim_sql, names, worker_id, now, now + lease_duration, item_id, attempt, progress
        )
        assert row is not None
        return bool(row["completed"]), None if row["id"] is None else work_item_from_row(row)


class ClaimsPausedKindsOnPostgres(_ClaimSql):
    """Its claim statements serve every kind asked for, paused or not."""

    claim_sql = _SQL["claim"].replace(
        "ARRAY(SELECT unnest($1::text[]) EXCEPT SELECT kind FROM work_kind_controls)", "$1::text[]"
    )


class NeverClaimsWaitingItems(_ClaimSql):
    """Claims only items that never waited: one enqueued with a delay is never claimed."""

    claim_sql = _SQL["claim"].replace("AND run_at <= $3::timestamptz", "AND false")


class ClaimsManyInFifoOrder(PostgresWorkStore):
    """Completes and claims many in FIFO order among the candidates, priority aside."""

    async def complete_and_claim_many(
        self,
        completions: Sequence[LeaseProgress],
        *,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> list[tuple[bool, WorkItem | None]]:
        statement = _SQL["complete_and_claim_many"].replace(
            "SELECT id FROM candidate ORDER BY priority DESC, id",
            "SELECT id FROM candidate ORDER BY id",
        )
        ids, attempts, progress = lease_columns(completions)
        now = self._clock.now()
        rows = await self._connection.fetch(
            statement,
            [kind_name(kind) for kind in kinds],
            worker_id,
            now,
            now + lease_duration,
            ids,
            attempts,
            progress,
            len(completions),
        )
        held = {int(item_id) for item_id in rows[0]["completed"]}
        items = sorted(
            (work_item_from_row(row) for row in rows if row["id"] is not None),
            key=lambda item: item.id,
        )
        claimed: list[WorkItem | None] = [*items, *[None] * (len(completions) - len(items))]
        return [
            (lease.item_id in held, following)
            for (lease, _), following in zip(completions, claimed, strict=True)
        ]


class RetryLeftInTheClaimIndex(PostgresWorkStore):
    """A retry (or a snooze) writes its run_at but leaves the item out of the waiting
    items (``delayed`` unchanged): the claim index hands it out before its run_at."""

    async def finish(self, lease: Lease, outcome: RunOutcome) -> bool:
        statement = _SQL["finish"].replace(
            "delayed = coalesce(e.run_at > e.ended_at, w.delayed)", "delayed = w.delayed"
        )
        assert statement != _SQL["finish"]
        row = await self._connection.fetchrow(
            statement,
            lease.item_id,
            lease.attempt,
            self._clock.now(),
            outcome.ending.value,
            outcome.progress,
            outcome.error,
            outcome.run_at,
            outcome.result,
        )
        return row is not None


class ClaimsWithoutSkipLocked(_ClaimSql):
    """Claims without ``FOR UPDATE SKIP LOCKED``: two claimers can take one item."""

    claim_sql = _SQL["claim"].replace("FOR UPDATE SKIP LOCKED", "")


class ClaimsWaitingForLocks(_ClaimSql):
    """Claims ``FOR UPDATE`` without ``SKIP LOCKED``: claimers wait for each other's rows."""

    claim_sql = _SQL["claim"].replace("FOR UPDATE SKIP LOCKED", "FOR UPDATE")


class _EnqueueIfDueSql(PostgresWorkQueue):
    """A PostgreSQL queue whose enqueue_if_due runs :attr:`statements` in one transaction."""

    statements: tuple[str, ...]

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        request = check_request(EnqueueRequest(schedule.payload, schedule.dedup_key))
        async with (
            self._pool.acquire() as connection,
            connection.transaction(isolation="read_committed"),
        ):
            for statement in self.statements[:-1]:
                await connection.execute(statement, request.kind)
            now = self._clock.now()
            item_id: int | None = await connection.fetchval(
                self.statements[-1],
                request.kind,
                request.payload_json,
                now,
                CHANNEL,
                request.dedup_key,
                now - schedule.interval,
            )
        return None if item_id is None else EnqueueResult(id=item_id, created=True)


class EnqueueIfDueWithoutTheLock(_EnqueueIfDueSql):
    """Takes no periodic-kind lock: the due check and insert race other schedulers."""

    statements = (ENQUEUE_IF_DUE,)


class EnqueueIfDueLockedInTheInsert(_EnqueueIfDueSql):
    """Takes the lock inside the insert statement, whose snapshot predates the wait."""

    statements = (
        ENQUEUE_IF_DUE.replace(
            "WITH inserted AS (",
            "WITH locked AS (SELECT pg_advisory_xact_lock(2003923044, hashtext($1::text))),\n"
            "inserted AS (",
        ).replace("WHERE NOT EXISTS", "WHERE (SELECT true FROM locked) AND NOT EXISTS", 1),
    )


# The lock EnqueueIfDueLockedInTheInsert takes is the real one, only in the wrong place.
assert "pg_advisory_xact_lock(2003923044, hashtext($1))" in LOCK_PERIODIC_KIND


class HeartbeatManyFencedByTheBatchOnPostgres(PostgresWorkStore):
    """Fences a batch of heartbeats by "the row's attempt is one of the batch's", not
    lease by lease (the PostgreSQL form of HeartbeatManyFencedByTheBatch)."""

    async def heartbeat_many(
        self,
        beats: Sequence[tuple[Lease, JsonValue | ProgressSnapshot]],
        *,
        lease_duration: timedelta,
    ) -> list[HeartbeatAnswer]:
        statement = _SQL["heartbeat_many"].replace(
            "AND item.attempt = beat.attempt::integer",
            "AND item.attempt::text = ANY ($2::text[])",
        )
        assert statement != _SQL["heartbeat_many"]
        ids, attempts, progress = lease_columns(beats)
        now = self._clock.now()
        rows = await self._connection.fetch(
            statement, ids, attempts, now, now + lease_duration, progress
        )
        held = {row["id"] for row in rows}
        return [
            HeartbeatAnswer.HELD if lease.item_id in held else HeartbeatAnswer.LOST
            for lease, _ in beats
        ]


class CompletionIgnoresTheStatusOnPostgres(PostgresWorkStore):
    """Completes leases by id and attempt alone: a late completion overwrites a failed
    or cancelled item (the PostgreSQL form of CompletionIgnoresTheStatus)."""

    async def complete_and_claim_many(
        self,
        completions: Sequence[LeaseProgress],
        *,
        kinds: Collection[str],
        worker_id: str,
        lease_duration: timedelta,
    ) -> list[tuple[bool, WorkItem | None]]:
        ids, attempts, _ = lease_columns(completions)
        await self._connection.execute(
            "UPDATE work_items AS item SET status = 'running'"
            " FROM unnest($1::text[], $2::text[]) AS lease(id, attempt)"
            " WHERE item.id = lease.id::bigint AND item.attempt = lease.attempt::integer"
            " AND item.status IN ('failed', 'cancelled')",
            ids,
            attempts,
        )
        return await super().complete_and_claim_many(
            completions, kinds=kinds, worker_id=worker_id, lease_duration=lease_duration
        )


class TakesSlotsWithoutLockingThem(PostgresWorkStore):
    """Its capped claims read a capped kind's free slots without locking them and write
    into them without checking they are still free: claims racing over the last free
    slot each take it, and the kind runs more than its cap (docs/adr/0035)."""

    @staticmethod
    def _complete_and_claim(name: str, count: int) -> str:
        statement = PostgresWorkStore._complete_and_claim(name, count)
        if name != "complete_and_claim_capped":
            return statement
        broken = statement.replace(
            "        FOR UPDATE SKIP LOCKED\n    ) AS s\n", "    ) AS s\n"
        ).replace(" AND s.item_id IS NOT DISTINCT FROM p.holder", "")
        assert (
            broken.count("FOR UPDATE SKIP LOCKED") == statement.count("FOR UPDATE SKIP LOCKED") - 1
        )
        assert "IS NOT DISTINCT FROM" not in broken
        return broken


class RequeuesWithoutMarking(InMemoryWorkStore):
    """Its bulk requeue enqueues the new items but leaves the failed ones unmarked: pressed
    twice, or by two operators at once, it runs each failed item again (docs/adr/0041)."""

    async def requeue_failed(
        self,
        kind: str,
        *,
        after_id: int,
        up_to_id: int,
        limit: int,
        decode: PayloadDecoder,
    ) -> BulkBatch:
        batch = await super().requeue_failed(
            kind, after_id=after_id, up_to_id=up_to_id, limit=limit, decode=decode
        )
        for item in list(self._state.items.values()):
            if item.requeued_as is not None:
                self._state.write(replace(item, requeued_as=None))
        return batch


class BulkIgnoresUpToId(InMemoryWorkStore):
    """Its bulk requeue and cancel take every item of the kind, however high its id: items
    enqueued or failed after the operator read the count are taken too."""

    async def requeue_failed(
        self,
        kind: str,
        *,
        after_id: int,
        up_to_id: int,
        limit: int,
        decode: PayloadDecoder,
    ) -> BulkBatch:
        return await super().requeue_failed(
            kind, after_id=after_id, up_to_id=LARGEST_ITEM_ID, limit=limit, decode=decode
        )

    async def cancel_queued(
        self, kind: str, *, after_id: int, up_to_id: int, limit: int, reason: str
    ) -> BulkBatch:
        return await super().cancel_queued(
            kind, after_id=after_id, up_to_id=LARGEST_ITEM_ID, limit=limit, reason=reason
        )


class TakesFailedWithoutLocking(PostgresWorkStore):
    """Its bulk requeue reads a batch of failed items without locking them: two bulk
    requeues at once read the same items, and each enqueues them again."""

    async def requeue_failed(
        self,
        kind: str,
        *,
        after_id: int,
        up_to_id: int,
        limit: int,
        decode: PayloadDecoder,
    ) -> BulkBatch:
        unlocked = _SQL["take_failed"].replace("FOR UPDATE SKIP LOCKED", "")
        assert unlocked != _SQL["take_failed"]
        async with self._pool.acquire() as connection, connection.transaction():
            rows = await connection.fetch(unlocked, kind, after_id, up_to_id, limit)
            taken = [work_item_from_row(row) for row in rows]
            requests, invalid = decoded(taken, decode)
            queue = PostgresWorkQueue(connection, self._clock)
            results = await queue.enqueue_many([request for _, request in requests])
            await connection.execute(
                _SQL["mark_requeued"],
                [item.id for item, _ in requests],
                [result.id for result in results],
            )
        return requeued_batch(taken, results, invalid)
