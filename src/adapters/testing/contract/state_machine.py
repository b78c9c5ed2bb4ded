"""A Hypothesis state machine that runs random operations on a store and on QueueModel.

Build one per adapter with :func:`store_state_machine` and expose its
``TestCase`` to pytest::

    async def open_memory() -> StoreSubject:
        state, clock = InMemoryState(), FakeClock()
        return StoreSubject(
            clock=clock,
            queue=InMemoryWorkQueue(state, clock),
            store=InMemoryWorkStore(state, clock),
            read_items=...,  # reads every row without the store under test
        )

    TestMemoryStateMachine = store_state_machine(open_memory).TestCase

Hypothesis cannot run a state machine inside an ``async def`` test, so each
example gets its own :class:`asyncio.Runner`: ``open_subject`` and
``close_subject`` run on it, and so does every store call of that example.
Anything the subject opens (connections, pools) therefore belongs to that
example's loop and must be closed by ``close_subject``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

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

from adapters.testing.clock import FakeClock
from adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from adapters.testing.contract.model import QueueModel
from adapters.testing.contract.steps import LEASE, MAX_STALLS
from domain import EnqueueRequest, Lease, WorkItem, WorkPayload, WorkQueue, WorkStatus, WorkStore

__all__ = ["DEFAULT_SETTINGS", "StoreSubject", "store_state_machine"]

T = TypeVar("T")

DEFAULT_SETTINGS = Settings(max_examples=100, stateful_step_count=50, deadline=None)
"""Fast enough for the in-memory store; a database adapter may pass fewer examples."""


@dataclass(frozen=True, slots=True)
class StoreSubject:
    """One fresh, empty store for one example, all on one FakeClock.

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
PROGRESS: st.SearchStrategy[JsonValue] = st.none() | st.builds(
    lambda step: {"step": step}, st.integers(0, 9)
)


def payloads() -> st.SearchStrategy[WorkPayload]:
    return st.one_of(
        st.builds(AlphaJob, number=st.integers(0, 9)),
        st.builds(BetaJob, label=st.sampled_from(["x", "y"])),
    )


def store_state_machine(
    open_subject: OpenSubject,
    close_subject: CloseSubject | None = None,
    *,
    max_stalls: int = MAX_STALLS,
    settings: Settings | None = None,
) -> type[RuleBasedStateMachine]:
    """A state machine class that checks the store ``open_subject`` makes against the model.

    :param open_subject: makes a fresh, empty store for each example.
    :param close_subject: releases what ``open_subject`` opened, after each example.
    :param max_stalls: the stall limit recovery runs with.
    :param settings: Hypothesis settings; defaults to :data:`DEFAULT_SETTINGS`.
    :returns: the machine; run it through its ``TestCase`` attribute.
    """

    class StoreStateMachine(RuleBasedStateMachine):
        """Random enqueues, claims, fenced writes, clock moves and recoveries."""

        leases = Bundle("leases")

        def __init__(self) -> None:
            super().__init__()
            self.runner = asyncio.Runner()
            try:
                self.subject: StoreSubject = self.run(open_subject())
            except BaseException:
                self.runner.close()
                raise
            self.model = QueueModel(max_stalls)
            self.highest_attempt: dict[int, int] = {}
            self.final_rows: dict[int, WorkItem] = {}

        def teardown(self) -> None:
            try:
                if close_subject is not None:
                    self.run(close_subject(self.subject))
            finally:
                self.runner.close()

        def run(self, operation: Awaitable[T]) -> T:
            async def awaited() -> T:
                return await operation

            return self.runner.run(awaited())

        @property
        def now(self) -> datetime:
            return self.subject.clock.now()

        def stored_rows(self) -> list[WorkItem]:
            return self.run(self.subject.read_items())

        @initialize()
        def starts_empty(self) -> None:
            assert self.stored_rows() == []

        @rule(payload=payloads(), dedup_key=DEDUP_KEYS)
        def enqueue(self, payload: WorkPayload, dedup_key: str | None) -> None:
            result = self.run(self.subject.queue.enqueue(payload, dedup_key=dedup_key))
            expected = self.model.enqueue(
                payload.kind_name(), payload.to_json(), dedup_key, self.now, new_id=result.id
            )
            assert result == expected

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
            payload = data.draw(payloads().filter(lambda p: p.kind_name() == running.kind))
            self.enqueue(payload, running.dedup_key)

        @rule(batch=st.lists(st.tuples(payloads(), DEDUP_KEYS), max_size=4))
        def enqueue_many(self, batch: list[tuple[WorkPayload, str | None]]) -> None:
            requests = [EnqueueRequest(payload, dedup_key) for payload, dedup_key in batch]
            results = self.run(self.subject.queue.enqueue_many(requests))
            assert len(results) == len(requests)
            for request, result in zip(requests, results, strict=True):
                expected = self.model.enqueue(
                    request.payload.kind_name(),
                    request.payload.to_json(),
                    request.dedup_key,
                    self.now,
                    new_id=result.id,
                )
                assert result == expected

        @rule(
            target=leases,
            kinds=st.sets(st.sampled_from(KINDS), min_size=1),
            worker_id=st.sampled_from(["w1", "w2"]),
        )
        def claim(self, kinds: set[str], worker_id: str) -> object:
            item = self.claim_and_compare(kinds, worker_id)
            return multiple() if item is None else item.lease

        @rule(target=leases)
        def claim_any_kind(self) -> object:
            # Claims are what lead to leases, stalls and returns; this makes them common.
            return self.claim(set(KINDS), "w1")

        @rule(kind=st.sampled_from(KINDS), succeed=st.booleans())
        def a_worker_runs_a_kind_until_nothing_is_claimable(self, kind: str, succeed: bool) -> None:
            # As the worker loop does. It also empties kinds of queued items, the only
            # state in which due-ness depends on when items finished.
            while (item := self.claim_and_compare({kind}, "w3")) is not None:
                if succeed:
                    self.complete(item.lease, None)
                else:
                    self.fail(item.lease, None, "boom")

        def claim_and_compare(self, kinds: set[str], worker_id: str) -> WorkItem | None:
            item = self.run(
                self.subject.store.claim(sorted(kinds), worker_id=worker_id, lease_duration=LEASE)
            )
            assert item == self.model.claim(kinds, worker_id, self.now, LEASE)
            return item

        @rule(lease=leases, progress=PROGRESS)
        def heartbeat(self, lease: Lease, progress: JsonValue) -> None:
            held = self.run(
                self.subject.store.heartbeat(lease, progress=progress, lease_duration=LEASE)
            )
            assert held == self.model.heartbeat(lease, progress, self.now, LEASE)

        @rule(lease=leases, progress=PROGRESS)
        def complete(self, lease: Lease, progress: JsonValue) -> None:
            done = self.run(self.subject.store.complete(lease, progress=progress))
            expected = self.model.finish(lease, WorkStatus.SUCCEEDED, None, progress, self.now)
            assert done == expected

        @rule(lease=leases, progress=PROGRESS, error=st.sampled_from(["boom", "bad input"]))
        def fail(self, lease: Lease, progress: JsonValue, error: str) -> None:
            done = self.run(self.subject.store.fail(lease, error=error, progress=progress))
            expected = self.model.finish(lease, WorkStatus.FAILED, error, progress, self.now)
            assert done == expected

        @rule(lease=leases, progress=PROGRESS)
        def release(self, lease: Lease, progress: JsonValue) -> None:
            done = self.run(self.subject.store.release(lease, progress=progress))
            assert done == self.model.release(lease, progress, self.now)

        @precondition(lambda self: bool(self.running_keyed_items()))
        @rule(data=st.data(), progress=PROGRESS)
        def release_a_keyed_item_on_shutdown(
            self, data: st.DataObject, progress: JsonValue
        ) -> None:
            # Most drawn leases are stale by now; a live keyed one exercises ADR 0004.
            running = data.draw(st.sampled_from(self.running_keyed_items()))
            self.release(running.lease, progress)

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
            result = self.run(self.subject.store.recover_expired(max_stalls=max_stalls))
            assert result == self.model.recover(self.now)

        # Intervals line up with the clock's steps, so "exactly one interval ago" occurs.
        @rule(kind=st.sampled_from(KINDS), seconds=st.sampled_from([30, 60, 121]))
        def ask_whether_due(self, kind: str, seconds: int) -> None:
            interval = timedelta(seconds=seconds)
            due = self.run(self.subject.store.is_due(kind, interval))
            assert due == self.model.is_due(kind, interval, self.now)

        @invariant()
        def the_store_keeps_the_contract(self) -> None:
            # One read per step: a database adapter pays a round trip for it.
            rows = self.stored_rows()
            self.check_rows_match_the_model(rows)
            self.check_no_two_queued_items_share_kind_and_key(rows)
            self.check_only_running_items_hold_a_lease_and_attempts_never_go_down(rows)
            self.check_finished_items_never_change_again(rows)
            self.check_stalls_never_exceed_the_limit(rows)
            self.check_due_ness_at_the_edge_of_the_interval()

        def check_due_ness_at_the_edge_of_the_interval(self) -> None:
            # Only a kind with nothing queued or running and something finished has an
            # edge; random intervals in ask_whether_due rarely land on it.
            for kind in KINDS:
                newest = self.model.newest_finish(kind)
                if newest is None or not self.model.is_due(kind, timedelta(0), self.now):
                    continue
                since = self.now - newest
                for interval in (since, since + timedelta(seconds=1)):
                    if interval > timedelta(0):
                        due = self.run(self.subject.store.is_due(kind, interval))
                        assert due == self.model.is_due(kind, interval, self.now), (kind, interval)

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
            assert all(item.stalls <= max_stalls for item in rows)

    StoreStateMachine.TestCase.settings = settings or DEFAULT_SETTINGS
    return StoreStateMachine
