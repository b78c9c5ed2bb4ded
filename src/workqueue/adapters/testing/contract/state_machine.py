"""A Hypothesis state machine that runs random operations on a store and on QueueModel.

Every operation of the ports takes part: enqueues (single, batch, if due),
claims, heartbeats, completions (alone and with the next claim), failures,
releases, clock moves, lease recovery, purges, and the reads (``get``, listings
with every filter, counts). After every step the store's rows must be
the model's, and the queue's invariants must hold (no queued twins, leases only
on running items, attempts never going down, finished items never changing).

It runs two ways:

- **Inside the suite**, on the adapter's own fixtures:
  :class:`~workqueue.adapters.testing.contract.ModelContract` (part of
  :class:`~workqueue.adapters.testing.contract.WorkQueueContractSuite`) runs it with no
  set-up of its own. Examples follow each other on the same data; each first
  empties it through the store's own API (:func:`empty_through_the_api`).
- **On fresh stores**, with :func:`store_state_machine`: every example gets an
  empty store of its own, so a failure replays exactly and shrinks to a short
  story. Build one per adapter and expose its ``TestCase`` to pytest::

    TestMemoryStateMachine = store_state_machine(open_memory_subject).TestCase

Hypothesis cannot run a state machine inside an ``async def`` test. On fresh
stores each example gets its own :class:`asyncio.Runner`: ``open_subject`` and
``close_subject`` run on it, and so does every store call of that example, so
anything the subject opens (connections, pools) belongs to that example's loop
and must be closed by ``close_subject``. Inside the suite the machine runs on a
thread of its own and sends every store call to the test's event loop.

Cancellation (issue 16) will add its rules beside those of release and recovery.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, TypeVar

from hypothesis import assume
from hypothesis import settings as Settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
)
from pydantic import JsonValue

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.hang import HANG_AFTER_SECONDS, fail_if_hung
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.adapters.testing.contract.model import QueueModel
from workqueue.adapters.testing.contract.requeue import decode
from workqueue.adapters.testing.contract.steps import LEASE, LONG_LEASE, MAX_STALLS, SHORT_LEASE
from workqueue.application import REQUEUABLE_STATUSES, requeue
from workqueue.domain import (
    PERIODIC_DEDUP_KEY,
    EnqueueRequest,
    Lease,
    RequeueOutcome,
    RequeueResult,
    RunOutcome,
    WorkItem,
    WorkPayload,
    WorkQueue,
    WorkSchedule,
    WorkStatus,
    WorkStore,
    next_run_at,
)

__all__ = [
    "DEFAULT_SETTINGS",
    "StoreRules",
    "StoreSubject",
    "empty_through_the_api",
    "seeded_state_machine",
    "store_state_machine",
]

T = TypeVar("T")

DEFAULT_SETTINGS = Settings(max_examples=100, stateful_step_count=50, deadline=None)
"""Fast enough for the in-memory store; a database adapter may pass fewer examples."""


@dataclass(frozen=True, slots=True)
class StoreSubject:
    """One store for the machine, all on one FakeClock.

    ``read_items`` returns every row by id without going through the store (a
    back door's ``all_items``).
    """

    clock: FakeClock
    queue: WorkQueue
    store: WorkStore
    read_items: Callable[[], Awaitable[list[WorkItem]]]


OpenSubject = Callable[[], Awaitable[StoreSubject]]
CloseSubject = Callable[[StoreSubject], Awaitable[None]]

KINDS = [kind.value for kind in ContractKind]
DEDUP_KEYS = st.none() | st.sampled_from(["daily", "hourly"])
LEASES = st.sampled_from([SHORT_LEASE, LEASE, LONG_LEASE])
PRIORITIES = st.sampled_from([-100, -1, 0, 3, 100])
# Delays line up with the clock's steps, so an item becomes due exactly at a step.
DELAYS = st.sampled_from([timedelta(0), timedelta(seconds=1), timedelta(seconds=30)])
PROGRESS: st.SearchStrategy[JsonValue] = st.none() | st.builds(
    lambda step: {"step": step}, st.integers(0, 9)
)
RESULTS: st.SearchStrategy[JsonValue] = st.sampled_from([None, {"pages": 3}, ["a", 1], "done", 0])
# How long a retried or snoozed item waits: not at all, a clock step, or more than one.
WAITS = st.sampled_from([timedelta(0), timedelta(seconds=1), timedelta(seconds=45)])
STATUS_FILTERS = st.none() | st.frozensets(st.sampled_from(list(WorkStatus)), min_size=1)
KIND_FILTERS = st.none() | st.frozensets(st.sampled_from(KINDS), min_size=1)
WORKER_FILTERS = st.none() | st.frozensets(st.sampled_from(["w1", "w2", "w5"]), min_size=1)
DEFAULT_LIST_LIMIT = 100


PAYLOADS_BY_KIND: dict[str, st.SearchStrategy[WorkPayload]] = {
    ContractKind.ALPHA.value: st.builds(AlphaJob, number=st.integers(0, 9)),
    ContractKind.BETA.value: st.builds(BetaJob, label=st.sampled_from(["x", "y"])),
}


def payloads() -> st.SearchStrategy[WorkPayload]:
    return st.one_of(*PAYLOADS_BY_KIND.values())


class StoreRules(RuleBasedStateMachine):
    """The rules and invariants; a subclass says how store calls are run (:meth:`run`).

    Not a test by itself: :func:`store_state_machine` and
    :func:`seeded_state_machine` make the runnable ones.
    """

    max_stalls: ClassVar[int] = MAX_STALLS
    leases = Bundle("leases")

    def __init__(self) -> None:
        super().__init__()
        self.subject = self.open_subject()
        rows = self.stored_rows()
        self.model = QueueModel(self.max_stalls, rows)
        self.highest_attempt: dict[int, int] = {item.id: item.attempt for item in rows}
        self.final_rows: dict[int, WorkItem] = {
            item.id: item for item in rows if item.status.is_finished
        }

    def open_subject(self) -> StoreSubject:
        """The store for this example."""
        raise NotImplementedError

    def run(self, operation: Awaitable[T]) -> T:
        """Run one store call to completion and return what it returned."""
        raise NotImplementedError

    @property
    def now(self) -> datetime:
        return self.subject.clock.now()

    def stored_rows(self) -> list[WorkItem]:
        return self.run(self.subject.read_items())

    @initialize()
    def starts_as_the_model_does(self) -> None:
        assert self.stored_rows() == self.model.rows()

    # -- enqueues ---------------------------------------------------------

    @rule(payload=payloads(), dedup_key=DEDUP_KEYS)
    def enqueue(self, payload: WorkPayload, dedup_key: str | None) -> None:
        result = self.run(self.subject.queue.enqueue(payload, dedup_key=dedup_key))
        expected = self.model.enqueue(
            payload.kind_name(), payload.to_json(), dedup_key, self.now, new_id=result.id
        )
        assert result == expected

    @rule(
        payload=payloads(),
        dedup_key=DEDUP_KEYS,
        priority=PRIORITIES,
        delay=DELAYS,
    )
    def enqueue_with_a_priority_and_a_delay(
        self, payload: WorkPayload, dedup_key: str | None, priority: int, delay: timedelta
    ) -> None:
        result = self.run(
            self.subject.queue.enqueue(payload, dedup_key=dedup_key, priority=priority, delay=delay)
        )
        expected = self.model.enqueue(
            payload.kind_name(),
            payload.to_json(),
            dedup_key,
            self.now,
            new_id=result.id,
            priority=priority,
            run_at=self.now + delay,
        )
        assert result == expected

    @rule(kinds=st.sets(st.sampled_from(KINDS), min_size=1))
    def ask_when_the_next_waiting_item_is_due(self, kinds: set[str]) -> None:
        answer = self.run(self.subject.store.next_run_at(sorted(kinds)))
        assert answer == next_run_at(self.model.rows(), kinds, self.now)

    def running_keyed_items(self) -> list[WorkItem]:
        return [
            item
            for item in self.model.rows()
            if item.status is WorkStatus.RUNNING and item.dedup_key is not None
        ]

    @precondition(lambda self: bool(self.running_keyed_items()))
    @rule(data=st.data())
    def enqueue_a_twin_of_a_running_item(self, data: st.DataObject) -> None:
        # The twin is what a later release or recovery of the running item must not
        # duplicate (ADR 0004); random enqueues alone rarely line this up.
        running = data.draw(st.sampled_from(self.running_keyed_items()))
        payload = data.draw(PAYLOADS_BY_KIND[running.kind])
        self.enqueue(payload, running.dedup_key)

    @rule(
        batch=st.lists(
            st.tuples(payloads(), DEDUP_KEYS, PRIORITIES | st.just(0), DELAYS | st.none()),
            max_size=4,
        )
    )
    def enqueue_many(
        self, batch: list[tuple[WorkPayload, str | None, int, timedelta | None]]
    ) -> None:
        requests = [
            EnqueueRequest(payload, dedup_key, priority, delay=delay)
            for payload, dedup_key, priority, delay in batch
        ]
        results = self.run(self.subject.queue.enqueue_many(requests))
        assert len(results) == len(requests)
        for request, result in zip(requests, results, strict=True):
            expected = self.model.enqueue(
                request.payload.kind_name(),
                request.payload.to_json(),
                request.dedup_key,
                self.now,
                new_id=result.id,
                priority=request.priority,
                run_at=None if request.delay is None else self.now + request.delay,
            )
            assert result == expected

    # Intervals line up with the clock's steps, so "exactly one interval ago" occurs.
    @rule(
        payload=payloads(),
        seconds=st.sampled_from([30, 60, 121]),
        dedup_key=st.sampled_from([PERIODIC_DEDUP_KEY, "daily"]),
    )
    def enqueue_if_due(self, payload: WorkPayload, seconds: int, dedup_key: str) -> None:
        self.schedule(payload, timedelta(seconds=seconds), dedup_key)

    def kinds_at_rest_after_a_finish(self) -> list[str]:
        """The kinds with nothing queued or running and something finished."""
        return [
            kind
            for kind in KINDS
            if self.model.newest_finish(kind) is not None
            and self.model.is_due(kind, timedelta(0), self.now)
        ]

    @precondition(lambda self: bool(self.kinds_at_rest_after_a_finish()))
    @rule(data=st.data(), dedup_key=st.sampled_from([PERIODIC_DEDUP_KEY, "daily"]))
    def enqueue_if_due_at_the_edge_of_the_interval(
        self, data: st.DataObject, dedup_key: str
    ) -> None:
        # Only a kind at rest with something finished has an edge, and random intervals
        # rarely land on it: exactly the time since its newest finish is due, a second
        # more is not.
        kind = data.draw(st.sampled_from(self.kinds_at_rest_after_a_finish()))
        newest = self.model.newest_finish(kind)
        assert newest is not None
        since = self.now - newest
        edges = [interval for interval in (since, since + timedelta(seconds=1)) if interval]
        interval = data.draw(st.sampled_from(edges))
        self.schedule(data.draw(PAYLOADS_BY_KIND[kind]), interval, dedup_key)

    def schedule(self, payload: WorkPayload, interval: timedelta, dedup_key: str) -> None:
        """One enqueue_if_due of ``payload`` every ``interval``, checked against the model."""
        schedule = WorkSchedule(payload=payload, interval=interval, dedup_key=dedup_key)
        result = self.run(self.subject.queue.enqueue_if_due(schedule))
        expected = self.model.enqueue_if_due(
            payload.kind_name(),
            payload.to_json(),
            dedup_key,
            interval,
            self.now,
            new_id=None if result is None else result.id,
        )
        assert result == expected

    # -- claims and fenced writes ----------------------------------------

    @rule(
        target=leases,
        kinds=st.sets(st.sampled_from(KINDS), min_size=1),
        worker_id=st.sampled_from(["w1", "w2"]),
        duration=LEASES,
    )
    def claim(self, kinds: set[str], worker_id: str, duration: timedelta) -> object:
        item = self.claim_and_compare(kinds, worker_id, duration)
        return multiple() if item is None else item.lease

    @rule(target=leases)
    def claim_any_kind(self) -> object:
        # Claims are what lead to leases, stalls and returns; this makes them common.
        return self.claim(set(KINDS), "w1", LEASE)

    @rule(kind=st.sampled_from(KINDS), succeed=st.booleans())
    def a_worker_runs_a_kind_until_nothing_is_claimable(self, kind: str, succeed: bool) -> None:
        # As the worker loop does. It also empties kinds of queued items, the only
        # state in which due-ness depends on when items finished.
        while (item := self.claim_and_compare({kind}, "w3", LEASE)) is not None:
            if succeed:
                self.complete(item.lease, None)
            else:
                self.fail(item.lease, None, "boom")

    @rule(kind=st.sampled_from(KINDS), duration=LEASES)
    def a_worker_drains_a_kind_completing_and_claiming_in_one_step(
        self, kind: str, duration: timedelta
    ) -> None:
        item = self.claim_and_compare({kind}, "w4", duration)
        while item is not None:
            item = self.complete_and_claim_and_compare(item.lease, None, {kind}, "w4", duration)

    def claim_and_compare(
        self, kinds: set[str], worker_id: str, duration: timedelta
    ) -> WorkItem | None:
        item = self.run(
            self.subject.store.claim(sorted(kinds), worker_id=worker_id, lease_duration=duration)
        )
        assert item == self.model.claim(kinds, worker_id, self.now, duration)
        return item

    @rule(
        target=leases,
        lease=leases,
        progress=PROGRESS,
        kinds=st.sets(st.sampled_from(KINDS)),
        duration=LEASES,
    )
    def complete_and_claim(
        self, lease: Lease, progress: JsonValue, kinds: set[str], duration: timedelta
    ) -> object:
        item = self.complete_and_claim_and_compare(lease, progress, kinds, "w2", duration)
        return multiple() if item is None else item.lease

    def complete_and_claim_and_compare(
        self,
        lease: Lease,
        progress: JsonValue,
        kinds: set[str],
        worker_id: str,
        duration: timedelta,
    ) -> WorkItem | None:
        outcome = self.run(
            self.subject.store.complete_and_claim(
                lease,
                progress=progress,
                kinds=sorted(kinds),
                worker_id=worker_id,
                lease_duration=duration,
            )
        )
        expected = self.model.complete_and_claim(
            lease, progress, kinds, worker_id, self.now, duration
        )
        assert outcome == expected
        return outcome[1]

    @rule(lease=leases, progress=PROGRESS, duration=LEASES)
    def heartbeat(self, lease: Lease, progress: JsonValue, duration: timedelta) -> None:
        held = self.run(
            self.subject.store.heartbeat(lease, progress=progress, lease_duration=duration)
        )
        assert held == self.model.heartbeat(lease, progress, self.now, duration)

    # The batch calls a worker's lanes make: the model answers each lease of the
    # batch as the single call would, in turn.
    @rule(first=leases, second=leases, progress=PROGRESS, duration=LEASES)
    def heartbeat_many(
        self, first: Lease, second: Lease, progress: JsonValue, duration: timedelta
    ) -> None:
        assume(first.item_id != second.item_id)  # a worker holds one lease per item
        answers = self.run(
            self.subject.store.heartbeat_many(
                [(first, progress), (second, None)], lease_duration=duration
            )
        )
        assert answers == [
            self.model.heartbeat(first, progress, self.now, duration),
            self.model.heartbeat(second, None, self.now, duration),
        ]

    @rule(
        first=leases,
        second=leases,
        kinds=st.sets(st.sampled_from(KINDS)),
        duration=LEASES,
    )
    def complete_and_claim_many(
        self, first: Lease, second: Lease, kinds: set[str], duration: timedelta
    ) -> None:
        assume(first.item_id != second.item_id)  # a worker holds one lease per item
        answers = self.run(
            self.subject.store.complete_and_claim_many(
                [(first, {"lane": 1}), (second, None)],
                kinds=sorted(kinds),
                worker_id="w5",
                lease_duration=duration,
            )
        )
        assert answers == [
            self.model.complete_and_claim(first, {"lane": 1}, kinds, "w5", self.now, duration),
            self.model.complete_and_claim(second, None, kinds, "w5", self.now, duration),
        ]

    # One rule per way a run ends (each drawn as often as when they were four writes),
    # all through the one write, finish.
    @rule(lease=leases, progress=PROGRESS)
    def complete(self, lease: Lease, progress: JsonValue) -> None:
        self.finish(lease, RunOutcome.succeeded(progress))

    def finish(self, lease: Lease, outcome: RunOutcome) -> None:
        done = self.run(self.subject.store.finish(lease, outcome))
        assert done == self.model.finish(lease, outcome, self.now)

    @rule(lease=leases, progress=PROGRESS, error=st.sampled_from(["boom", "bad input"]))
    def fail(self, lease: Lease, progress: JsonValue, error: str) -> None:
        self.finish(lease, RunOutcome.failed(error, progress))

    @rule(lease=leases, progress=PROGRESS)
    def release(self, lease: Lease, progress: JsonValue) -> None:
        self.finish(lease, RunOutcome.released(progress))

    @rule(lease=leases, progress=PROGRESS, result=RESULTS)
    def complete_with_a_result(self, lease: Lease, progress: JsonValue, result: JsonValue) -> None:
        self.finish(lease, RunOutcome.succeeded(progress, result))

    @rule(lease=leases, progress=PROGRESS, error=st.sampled_from(["boom", "down"]), wait=WAITS)
    def retry(self, lease: Lease, progress: JsonValue, error: str, wait: timedelta) -> None:
        self.finish(lease, RunOutcome.retried(error, self.now + wait, progress))

    @rule(lease=leases, progress=PROGRESS, wait=WAITS)
    def snooze(self, lease: Lease, progress: JsonValue, wait: timedelta) -> None:
        self.finish(lease, RunOutcome.snoozed(self.now + wait, progress))

    @precondition(lambda self: bool(self.running_keyed_items()))
    @rule(data=st.data(), progress=PROGRESS)
    def release_a_keyed_item_on_shutdown(self, data: st.DataObject, progress: JsonValue) -> None:
        # Most drawn leases are stale by now; a live keyed one exercises ADR 0004.
        running = data.draw(st.sampled_from(self.running_keyed_items()))
        self.release(running.lease, progress)

    # -- cancel and requeue (docs/adr/0018) -------------------------------

    @rule(data=st.data(), reason=st.sampled_from(["stop", "wrong input"]))
    def cancel(self, data: st.DataObject, reason: str) -> None:
        missing = max(self.model.items, default=0) + 1000
        item_id = data.draw(st.sampled_from([*sorted(self.model.items), missing]))
        outcome = self.run(self.subject.store.cancel(item_id, reason=reason))
        assert outcome == self.model.cancel(item_id, reason, self.now), item_id

    def running_items(self) -> list[WorkItem]:
        return [item for item in self.model.rows() if item.status is WorkStatus.RUNNING]

    @precondition(lambda self: bool(self.running_items()))
    @rule(data=st.data())
    def cancel_a_running_item(self, data: st.DataObject) -> None:
        # Random ids rarely hit the one running item; its request is what the
        # heartbeats, recovery and release of a cancelled item are about.
        running = data.draw(st.sampled_from(self.running_items()))
        outcome = self.run(self.subject.store.cancel(running.id, reason="stop"))
        assert outcome == self.model.cancel(running.id, "stop", self.now)

    @rule(lease=leases, progress=PROGRESS)
    def mark_cancelled(self, lease: Lease, progress: JsonValue) -> None:
        self.finish(lease, RunOutcome.cancelled(progress))

    @rule(data=st.data())
    def requeue(self, data: st.DataObject) -> None:
        missing = max(self.model.items, default=0) + 1000
        item_id = data.draw(st.sampled_from([*sorted(self.model.items), missing]))
        subject = self.subject
        result = self.run(requeue(item_id, store=subject.store, queue=subject.queue, decode=decode))
        old = self.model.get(item_id)
        if old is None:
            assert result == RequeueResult(RequeueOutcome.UNKNOWN)
        elif old.status not in REQUEUABLE_STATUSES:
            assert result == RequeueResult(RequeueOutcome.REFUSED, status=old.status)
        else:
            assert result.queued_id is not None
            enqueued = self.model.enqueue(
                old.kind, old.payload, old.dedup_key, self.now, new_id=result.queued_id
            )
            outcome = RequeueOutcome.REQUEUED if enqueued.created else RequeueOutcome.ABSORBED
            assert result == RequeueResult(outcome, enqueued.id, old.status)

    # -- time, recovery, retention ---------------------------------------

    @rule(seconds=st.sampled_from([1, 30, LEASE.total_seconds()]))
    def advance_the_clock(self, seconds: float) -> None:
        self.run(self.subject.clock.advance(seconds))

    @rule(seconds=st.sampled_from([LEASE.total_seconds() + 1, 2 * LEASE.total_seconds()]))
    def let_leases_lapse_and_recover(self, seconds: float) -> None:
        # What a worker's poll does after a pause: recovery soon after leases lapse.
        self.run(self.subject.clock.advance(seconds))
        self.recover_expired_leases()

    @rule()
    def recover_expired_leases(self) -> None:
        result = self.run(self.subject.store.recover_expired(max_stalls=self.max_stalls))
        assert result == self.model.recover(self.now)

    @rule(seconds_ago=st.sampled_from([0, 30, 61, 121]), limit=st.sampled_from([1, 2, 100]))
    def purge_finished(self, seconds_ago: int, limit: int) -> None:
        cutoff = self.now - timedelta(seconds=seconds_ago)
        deleted = self.run(self.subject.store.purge_finished(finished_before=cutoff, limit=limit))
        left = {item.id for item in self.stored_rows()}
        gone = [item_id for item_id in self.model.items if item_id not in left]
        assert deleted == len(gone), f"purge said {deleted}, but {len(gone)} items are gone"
        self.model.purge(gone, cutoff, limit)
        for item_id in gone:
            self.final_rows.pop(item_id, None)

    # -- reads ------------------------------------------------------------

    @rule(
        statuses=STATUS_FILTERS,
        kinds=KIND_FILTERS,
        worker_ids=WORKER_FILTERS,
        limit=st.none() | st.sampled_from([1, 2, 3]),
        newest_first=st.booleans(),
    )
    def list_items(
        self,
        statuses: frozenset[WorkStatus] | None,
        kinds: frozenset[str] | None,
        worker_ids: frozenset[str] | None,
        limit: int | None,
        newest_first: bool,
    ) -> None:
        arguments: dict[str, Any] = {"newest_first": newest_first}
        if limit is not None:
            arguments["limit"] = limit
        listed = self.run(
            self.subject.store.list_items(
                statuses=None if statuses is None else sorted(statuses),
                kinds=None if kinds is None else sorted(kinds),
                worker_ids=None if worker_ids is None else sorted(worker_ids),
                **arguments,
            )
        )
        expected = self.model.list_items(
            statuses,
            kinds,
            worker_ids,
            DEFAULT_LIST_LIMIT if limit is None else limit,
            newest_first,
        )
        assert listed == expected, (statuses, kinds, worker_ids, limit, newest_first)

    @rule(data=st.data())
    def get_an_item(self, data: st.DataObject) -> None:
        missing = max(self.model.items, default=0) + 1000
        item_id = data.draw(st.sampled_from([*sorted(self.model.items), missing]))
        assert self.run(self.subject.store.get(item_id)) == self.model.get(item_id)

    @rule()
    def count_items(self) -> None:
        assert self.run(self.subject.store.count_by_kind_and_status()) == self.model.counts()

    # -- invariants -------------------------------------------------------

    @invariant()
    def the_store_keeps_the_contract(self) -> None:
        # One read per step: a database adapter pays a round trip for it.
        rows = self.stored_rows()
        self.check_rows_match_the_model(rows)
        self.check_no_two_queued_items_share_kind_and_key(rows)
        self.check_only_running_items_hold_a_lease_and_attempts_never_go_down(rows)
        self.check_finished_items_never_change_again(rows)
        self.check_stalls_never_exceed_the_limit(rows)

    def check_rows_match_the_model(self, rows: list[WorkItem]) -> None:
        assert rows == self.model.rows()

    def check_no_two_queued_items_share_kind_and_key(self, rows: list[WorkItem]) -> None:
        queued = Counter(
            (item.kind, item.dedup_key)
            for item in rows
            if item.status is WorkStatus.QUEUED and item.dedup_key is not None
        )
        assert all(count == 1 for count in queued.values()), queued

    def check_only_running_items_hold_a_lease_and_attempts_never_go_down(
        self, rows: list[WorkItem]
    ) -> None:
        for item in rows:
            assert item.attempt >= self.highest_attempt.get(item.id, 0), "attempt went down"
            self.highest_attempt[item.id] = item.attempt
            holds_a_lease = item.lease_expires_at is not None
            assert holds_a_lease == (item.status is WorkStatus.RUNNING), item

    def check_finished_items_never_change_again(self, rows: list[WorkItem]) -> None:
        for item in rows:
            if item.id in self.final_rows:
                assert item == self.final_rows[item.id], "a finished item changed"
            elif item.status.is_finished:
                self.final_rows[item.id] = item
        still_there = {item.id for item in rows}
        assert set(self.final_rows) <= still_there, "a finished item disappeared"

    def check_stalls_never_exceed_the_limit(self, rows: list[WorkItem]) -> None:
        assert all(item.stalls <= self.max_stalls for item in rows)


def store_state_machine(
    open_subject: OpenSubject,
    close_subject: CloseSubject | None = None,
    *,
    max_stalls: int = MAX_STALLS,
    settings: Settings | None = None,
) -> type[RuleBasedStateMachine]:
    """A state machine class that checks the store ``open_subject`` makes against the model.

    Each store call is guarded against hanging (:func:`fail_if_hung`).

    :param open_subject: makes a fresh, empty store for each example.
    :param close_subject: releases what ``open_subject`` opened, after each example.
    :param max_stalls: the stall limit recovery runs with.
    :param settings: Hypothesis settings; defaults to :data:`DEFAULT_SETTINGS`.
    :returns: the machine; run it through its ``TestCase`` attribute.
    """

    class StoreStateMachine(StoreRules):
        """Random operations on a fresh store per example, compared with the model."""

        def __init__(self) -> None:
            self.runner = asyncio.Runner()
            try:
                super().__init__()
            except BaseException:
                self.runner.close()
                raise
            assert self.model.rows() == [], "open_subject must give an empty store"

        def open_subject(self) -> StoreSubject:
            return self.run(open_subject())

        def teardown(self) -> None:
            try:
                if close_subject is not None:
                    self.run(close_subject(self.subject))
            finally:
                self.runner.close()

        def run(self, operation: Awaitable[T]) -> T:
            async def awaited() -> T:
                return await operation

            # The runner's loop, not Runner.run: that one sets up SIGINT handling on
            # every call, which costs more than an in-memory store's whole call.
            with fail_if_hung(HANG_AFTER_SECONDS, "a store call of the state machine"):
                return self.runner.get_loop().run_until_complete(awaited())

    StoreStateMachine.max_stalls = max_stalls
    StoreStateMachine.TestCase.settings = settings or DEFAULT_SETTINGS
    return StoreStateMachine


DAY = timedelta(days=1)
_MOST_STEPS = 10_000


async def empty_through_the_api(subject: StoreSubject, *, max_stalls: int = MAX_STALLS) -> None:
    """Bring the subject back to no rows at all, through the store's own API.

    A day passes (every lease lapses, every finish is older than any interval the
    machine asks about), expired leases are recovered, everything queued is
    claimed and completed, and every finished item is purged. Ids and the clock
    go on from where they were.

    :raises AssertionError: if rows are left: the store broke the contract on the way.
    """
    clock, store = subject.clock, subject.store
    await clock.advance(DAY.total_seconds())
    await store.recover_expired(max_stalls=max_stalls)
    for _ in range(_MOST_STEPS):
        item = await store.claim(KINDS, worker_id="emptying", lease_duration=LEASE)
        if item is None:
            break
        await store.finish(item.lease, RunOutcome.succeeded(None))
    await clock.advance(1)
    for _ in range(_MOST_STEPS):
        if await store.purge_finished(finished_before=clock.now(), limit=1000) < 1000:
            break
    left = await subject.read_items()
    assert left == [], (
        "the store did not come back empty through its own API (a day on, recover, "
        f"claim and complete everything, purge): {left}"
    )


def seeded_state_machine(
    subject: StoreSubject, loop: asyncio.AbstractEventLoop, *, max_stalls: int = MAX_STALLS
) -> type[RuleBasedStateMachine]:
    """A state machine class on ``subject``, whose store calls run on ``loop``.

    Run it from a thread other than the loop's, while the loop runs. Examples
    share the subject: each starts by emptying it through the API
    (:func:`empty_through_the_api`), so each starts, as a fresh one would, from
    no rows (with later ids and a later clock).
    """

    class SeededStateMachine(StoreRules):
        """Random operations on one store, example after example, compared with the model."""

        def open_subject(self) -> StoreSubject:
            self.run(empty_through_the_api(subject, max_stalls=max_stalls))
            return subject

        def run(self, operation: Awaitable[T]) -> T:
            async def awaited() -> T:
                return await operation

            return asyncio.run_coroutine_threadsafe(awaited(), loop).result()

    SeededStateMachine.max_stalls = max_stalls
    return SeededStateMachine
