"""InMemoryWorkQueue: the fake's only insert path, with the real queue's dedup rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workqueue.adapters.memory.due import kind_is_due
from workqueue.adapters.memory.state import InMemoryState
from workqueue.domain import (
    Clock,
    EnqueueRequest,
    EnqueueResult,
    WorkItem,
    WorkPayload,
    WorkSchedule,
    WorkStatus,
    check_dedup_key,
)
from workqueue.domain.payload_check import checked_payload_json

__all__ = ["InMemoryWorkQueue"]


class InMemoryWorkQueue:
    """A :class:`~workqueue.domain.WorkQueue` over an :class:`InMemoryState`.

    An enqueue with a dedup key is absorbed by a *queued* item of the same kind and
    key; running and finished items absorb nothing. Every enqueue is checked (dedup
    key, then payload) before anything is written.

    :param state: the shared in-memory rows.
    :param clock: stamps ``enqueued_at``.
    """

    def __init__(self, state: InMemoryState, clock: Clock) -> None:
        self._state = state
        self._clock = clock

    async def enqueue(self, payload: WorkPayload, *, dedup_key: str | None = None) -> EnqueueResult:
        """Insert a queued item for ``payload``, or return the queued item that absorbs it.

        :raises InvalidDedupKeyError: if ``dedup_key`` is empty, blank, too long or not text.
        :raises InvalidPayloadError: if ``payload`` does not validate against its model.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        checked = self._check(EnqueueRequest(payload, dedup_key))
        return self._insert_or_absorb(*checked)

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """Enqueue each request in order; a later request is absorbed by an earlier twin.

        :raises InvalidDedupKeyError: if any dedup key is unusable; nothing is written.
        :raises InvalidPayloadError: if any payload is invalid; nothing is written.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        checked = [self._check(request) for request in requests]
        return [self._insert_or_absorb(*entry) for entry in checked]

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        """Enqueue ``schedule``'s payload with its dedup key if its kind is due, else return None.

        Atomic as a transaction is: nothing is awaited between the due check and
        the insert, so no other coroutine can enqueue or claim in between.

        :raises InvalidPayloadError: if the payload does not validate against its model.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        self._state.check_available()
        kind, payload_json, dedup_key = self._check(
            EnqueueRequest(schedule.payload, schedule.dedup_key)
        )
        if not kind_is_due(self._state.items.values(), kind, schedule.interval, self._clock.now()):
            return None
        return self._insert_or_absorb(kind, payload_json, dedup_key)

    @staticmethod
    def _check(request: EnqueueRequest) -> tuple[str, dict[str, Any], str | None]:
        dedup_key = check_dedup_key(request.dedup_key)
        payload_json = checked_payload_json(request.payload)
        return request.payload.kind_name(), payload_json, dedup_key

    def _insert_or_absorb(
        self, kind: str, payload_json: dict[str, Any], dedup_key: str | None
    ) -> EnqueueResult:
        if dedup_key is not None:
            for item in self._state.items.values():
                if (
                    item.status is WorkStatus.QUEUED
                    and item.kind == kind
                    and item.dedup_key == dedup_key
                ):
                    return EnqueueResult(id=item.id, created=False)
        item = WorkItem(
            id=self._state.next_item_id(),
            kind=kind,
            payload=payload_json,
            status=WorkStatus.QUEUED,
            attempt=0,
            stalls=0,
            dedup_key=dedup_key,
            enqueued_at=self._clock.now(),
            started_at=None,
            heartbeat_at=None,
            lease_expires_at=None,
            finished_at=None,
            worker_id=None,
            progress=None,
            error=None,
        )
        self._state.write(item)
        self._state.announce_enqueued(kind)
        return EnqueueResult(id=item.id, created=True)
