"""PostgresWorkQueue: the one way work items come into being on PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from adapters.postgres.queue_sql import ENQUEUE
from adapters.postgres.unavailable import connection_loss_as_unavailable
from domain import Clock, EnqueueRequest, EnqueueResult, WorkPayload, check_dedup_key
from domain.payload_check import checked_payload_json

__all__ = ["PostgresWorkQueue"]


@dataclass(frozen=True, slots=True)
class _CheckedRequest:
    kind: str
    payload_json: str
    dedup_key: str | None


class PostgresWorkQueue:
    """A :class:`~domain.WorkQueue` on the ``work_items`` table.

    Dedup rests on a partial unique index over ``(kind, dedup_key)`` for queued
    items: an insert that would make a second queued twin does nothing
    (``ON CONFLICT DO NOTHING``) and the queued twin's id is returned instead.
    A created item sends ``NOTIFY workqueue, '<kind>'`` in the same transaction,
    so listeners hear of it once it is committed. Ids grow with every request but
    have gaps: an absorbed request has drawn one too, as a rolled-back insert would.

    :param pool: connections to a migrated database (see :func:`create_pool`).
    :param clock: stamps ``enqueued_at``.
    """

    def __init__(self, pool: asyncpg.Pool, clock: Clock) -> None:
        self._pool = pool
        self._clock = clock

    async def enqueue(self, payload: WorkPayload, *, dedup_key: str | None = None) -> EnqueueResult:
        """Insert a queued item for ``payload``, or return the queued item that absorbs it.

        :raises InvalidDedupKeyError: if ``dedup_key`` is empty, blank, too long or not text.
        :raises InvalidPayloadError: if ``payload`` does not validate against its model.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        (result,) = await self.enqueue_many([EnqueueRequest(payload, dedup_key)])
        return result

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """Enqueue every request, in order, in one statement.

        A later request with the same kind and dedup key as an earlier one in the
        batch is absorbed by it. Every request is checked before anything is sent.

        :raises InvalidDedupKeyError: if any dedup key is unusable; nothing is written.
        :raises InvalidPayloadError: if any payload is invalid; nothing is written.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        checked = [_check(request) for request in requests]
        results: list[EnqueueResult | None] = [None] * len(checked)
        unanswered = list(range(len(checked)))
        # Normally one pass answers everything. A request is left unanswered only
        # when the queued item that absorbed it was claimed between the statement's
        # insert and its lookup; the next pass then inserts or finds another one.
        while unanswered:
            answers = await self._insert_or_absorb([checked[index] for index in unanswered])
            left = []
            for index, answer in zip(unanswered, answers, strict=True):
                if answer is None:
                    left.append(index)
                else:
                    results[index] = answer
            unanswered = left
        return [result for result in results if result is not None]

    async def _insert_or_absorb(
        self, requests: Sequence[_CheckedRequest]
    ) -> list[EnqueueResult | None]:
        if not requests:
            return []
        with connection_loss_as_unavailable():
            rows = await self._pool.fetch(
                ENQUEUE,
                [request.kind for request in requests],
                [request.payload_json for request in requests],
                [request.dedup_key for request in requests],
                self._clock.now(),
            )
        return [
            None if row["id"] is None else EnqueueResult(id=row["id"], created=row["created"])
            for row in rows
        ]


def _check(request: EnqueueRequest) -> _CheckedRequest:
    dedup_key = check_dedup_key(request.dedup_key)
    payload_json = checked_payload_json(request.payload)
    return _CheckedRequest(
        kind=request.payload.kind_name(),
        payload_json=json.dumps(payload_json, separators=(",", ":")),
        dedup_key=dedup_key,
    )
