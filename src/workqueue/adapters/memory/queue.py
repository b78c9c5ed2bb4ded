"""InMemoryWorkQueue: the fake's only insert path, with the real queue's dedup rules."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from workqueue.adapters.memory.due import kind_is_busy, kind_is_due
from workqueue.adapters.memory.state import InMemoryState
from workqueue.adapters.tracing import default_tracing
from workqueue.domain import (
    DEFAULT_PRIORITY,
    Clock,
    EnqueueRequest,
    EnqueueResult,
    Overlap,
    TraceContext,
    Tracing,
    When,
    WorkItem,
    WorkPayload,
    WorkSchedule,
    WorkStatus,
    check_dedup_key,
    check_priority,
    check_when,
    run_at_of,
)
from workqueue.domain.payload_check import checked_payload_json

__all__ = ["InMemoryWorkQueue"]


class _Checked(NamedTuple):
    """A request once checked: what its row is written with."""

    kind: str
    payload: dict[str, Any]
    dedup_key: str | None
    priority: int
    when: When


class InMemoryWorkQueue:
    """A :class:`~workqueue.domain.WorkQueue` over an :class:`InMemoryState`.

    An enqueue with a dedup key is absorbed by a *queued* item of the same kind and
    key; running and finished items absorb nothing. Every enqueue is checked (dedup
    key, then payload) before anything is written.

    :param state: the shared in-memory rows.
    :param clock: stamps ``enqueued_at``.
    :param tracing: records each enqueue's span and keeps its context with the items
        (docs/adr/0038); not given, OpenTelemetry's when it is installed.
    """

    def __init__(self, state: InMemoryState, clock: Clock, tracing: Tracing | None = None) -> None:
        self._state = state
        self._clock = clock
        self._tracing = default_tracing() if tracing is None else tracing

    async def enqueue(
        self,
        payload: WorkPayload,
        *,
        dedup_key: str | None = None,
        priority: int = DEFAULT_PRIORITY,
        run_at: datetime | None = None,
        delay: timedelta | None = None,
    ) -> EnqueueResult:
        """Insert a queued item for ``payload``, or return the queued item that absorbs it.

        :raises InvalidDedupKeyError: if ``dedup_key`` is empty, blank, too long or not text.
        :raises InvalidPriorityError: if ``priority`` is not an integer from -100 to 100.
        :raises InvalidRunAtError: if ``run_at`` is naive, ``delay`` negative, or both given.
        :raises InvalidPayloadError: if ``payload`` does not validate against its model.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        checked = self._check(EnqueueRequest(payload, dedup_key, priority, run_at, delay))
        with self._tracing.enqueue(checked.kind) as span:
            result = self._insert_or_absorb(checked, span.context)
            span.enqueued((result,))
        return result

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """Enqueue each request in order; a later request is absorbed by an earlier twin.

        :raises InvalidDedupKeyError: if any dedup key is unusable; nothing is written.
        :raises InvalidPayloadError: if any payload is invalid; nothing is written.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        checked = [self._check(request) for request in requests]
        with self._tracing.enqueue_many([entry.kind for entry in checked]) as span:
            results = [self._insert_or_absorb(entry, span.context) for entry in checked]
            span.enqueued(results)
        return results

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        """Enqueue ``schedule``'s payload with its dedup key if its kind is due, else return None.

        A cron schedule's newest fire time at or before now is due unless the kind
        had its turn at it (or a later one), recorded in ``fires``; its turn is
        taken then, and its item enqueued with the fire time's dedup key unless
        its overlap skips it while an item of the kind is queued or running.
        Atomic as a transaction is: nothing is awaited between the due check and
        the insert, so no other coroutine can enqueue or claim in between.

        :raises InvalidPayloadError: if the payload does not validate against its model.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        now = self._clock.now()
        if schedule.interval is not None:
            checked = self._check(EnqueueRequest(schedule.payload, schedule.dedup_key))
            if not kind_is_due(self._state.items.values(), checked.kind, schedule.interval, now):
                return None
            return self._insert_or_absorb(checked)
        fire = schedule.calendar.latest_fire(now)
        checked = self._check(EnqueueRequest(schedule.payload, schedule.fire_dedup_key(fire)))
        last = self._state.fires.get(checked.kind)
        if last is not None and last >= fire:
            return None
        self._state.fires[checked.kind] = fire
        if schedule.overlap is Overlap.SKIP and kind_is_busy(
            self._state.items.values(), checked.kind
        ):
            return None
        return self._insert_or_absorb(checked)

    def _check(self, request: EnqueueRequest) -> _Checked:
        """Check ``request`` as the real queues do: dedup key, priority, run_at, payload."""
        dedup_key = check_dedup_key(request.dedup_key)
        priority = check_priority(request.priority)
        when = check_when(request.run_at, request.delay)
        payload_json = checked_payload_json(request.payload)
        return _Checked(request.payload.kind_name(), payload_json, dedup_key, priority, when)

    def _insert_or_absorb(
        self, checked: _Checked, context: TraceContext | None = None
    ) -> EnqueueResult:
        kind, dedup_key = checked.kind, checked.dedup_key
        if dedup_key is not None:
            for item in self._state.items.values():
                if (
                    item.status is WorkStatus.QUEUED
                    and item.kind == kind
                    and item.dedup_key == dedup_key
                ):
                    return EnqueueResult(id=item.id, created=False)
        now = self._clock.now()
        item = WorkItem.queued(
            self._state.next_item_id(),
            kind,
            checked.payload,
            enqueued_at=now,
            dedup_key=dedup_key,
            priority=checked.priority,
            run_at=run_at_of(checked.when, now),
            trace_context=context,
        )
        self._state.write(item)
        self._state.announce_enqueued(kind)
        return EnqueueResult(id=item.id, created=True)
