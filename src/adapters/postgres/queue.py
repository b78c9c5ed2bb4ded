"""PostgresWorkQueue: the one way work items come into being on PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
from pydantic_core import from_json, to_json

from adapters.postgres.held import HeldConnection
from adapters.postgres.queue_sql import (
    ENQUEUE,
    ENQUEUE_IF_DUE,
    ENQUEUE_ONE,
    ENQUEUE_ONE_WITHOUT_KEY,
    ENQUEUE_WITHOUT_KEYS,
    LOCK_PERIODIC_KIND,
)
from adapters.postgres.unavailable import connection_loss_as_unavailable
from domain import (
    Clock,
    EnqueueRequest,
    EnqueueResult,
    InvalidDedupKeyError,
    WorkPayload,
    WorkSchedule,
    check_dedup_key,
)
from domain.payload_check import checked_payload_json, checked_payloads_json

__all__ = ["PostgresWorkQueue"]


@dataclass(frozen=True, slots=True)
class _CheckedRequest:
    kind: str
    payload_json: str
    dedup_key: str | None


@dataclass(frozen=True, slots=True)
class _CheckedBatch:
    """The requests of a batch once checked, as parallel lists in request order."""

    kinds: list[str]
    payloads: list[dict[str, Any]]
    dedup_keys: list[str | None]


class PostgresWorkQueue:  # pragma: no mutate block
    """A :class:`~domain.WorkQueue` on the ``work_items`` table.

    Dedup rests on a partial unique index over ``(kind, dedup_key)`` for queued
    items: an insert that would make a second queued twin does nothing
    (``ON CONFLICT DO NOTHING``) and the queued twin's id is returned instead.
    A created item sends ``NOTIFY workqueue, '<kind>'`` in the same transaction,
    so listeners hear of it once it is committed. Ids grow with every request but
    have gaps: an absorbed request has drawn one too, as a rolled-back insert would.

    :meth:`enqueue_if_due` serializes the schedulers of one periodic kind with a
    transaction-level advisory lock and checks due-ness in a statement of its own
    after it, so the check sees whatever the previous lock holder created, even
    if a claimer has taken it since (docs/adr/0005).

    :param pool: connections to a migrated database (see :func:`create_pool`).
    :param clock: stamps ``enqueued_at``.
    """

    def __init__(self, pool: asyncpg.Pool, clock: Clock) -> None:
        self._pool = pool
        # Enqueues one after another (a producer's loop) share one kept connection;
        # concurrent ones (a web process) go through the pool as before.
        self._connection = HeldConnection(pool)
        self._clock = clock

    async def close(self) -> None:
        """Give the connection this queue keeps between enqueues back to the pool.

        Call it before closing the pool, or the pool waits up to
        :data:`~adapters.postgres.held.IDLE_CHECK_SECONDS` for it. The queue still
        works afterwards, through the pool.
        """
        await self._connection.close()

    async def enqueue(self, payload: WorkPayload, *, dedup_key: str | None = None) -> EnqueueResult:
        """Insert a queued item for ``payload``, or return the queued item that absorbs it.

        :raises InvalidDedupKeyError: if ``dedup_key`` is empty, blank, too long or not text.
        :raises InvalidPayloadError: if ``payload`` does not validate against its model.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        request = _check(EnqueueRequest(payload, dedup_key))
        if request.dedup_key is None:
            # Nothing can absorb it: a plain insert.
            with connection_loss_as_unavailable():
                item_id: int = await self._connection.fetchval(
                    ENQUEUE_ONE_WITHOUT_KEY, request.kind, request.payload_json, self._clock.now()
                )
            return EnqueueResult(id=item_id, created=True)
        # As in enqueue_many, a second pass happens only when the queued item that
        # absorbed the request was claimed between the insert and the lookup.
        while True:
            with connection_loss_as_unavailable():
                row = await self._connection.fetchrow(
                    ENQUEUE_ONE,
                    request.kind,
                    request.payload_json,
                    request.dedup_key,
                    self._clock.now(),
                )
            if row is not None and row["id"] is not None:
                return EnqueueResult(id=row["id"], created=row["created"])

    async def enqueue_many(self, requests: Sequence[EnqueueRequest]) -> list[EnqueueResult]:
        """Enqueue every request, in order, in one statement.

        A later request with the same kind and dedup key as an earlier one in the
        batch is absorbed by it. Every request is checked before anything is sent.

        :raises InvalidDedupKeyError: if any dedup key is unusable; nothing is written.
        :raises InvalidPayloadError: if any payload is invalid; nothing is written.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        batch = _check_batch(requests)
        if batch.kinds and all(dedup_key is None for dedup_key in batch.dedup_keys):
            # Nothing to absorb: one insert of the whole batch, every request creates.
            return await self._insert_all(batch)
        results: list[EnqueueResult | None] = [None] * len(batch.kinds)
        unanswered = list(range(len(batch.kinds)))
        # Normally one pass answers everything. A request is left unanswered only
        # when the queued item that absorbed it was claimed between the statement's
        # insert and its lookup; the next pass then inserts or finds another one.
        while unanswered:
            answers = await self._insert_or_absorb(batch, unanswered)
            left = []
            for index, answer in zip(unanswered, answers, strict=True):
                if answer is None:
                    left.append(index)
                else:
                    results[index] = answer
            unanswered = left
        return [result for result in results if result is not None]

    async def enqueue_if_due(self, schedule: WorkSchedule) -> EnqueueResult | None:
        """Enqueue ``schedule``'s payload with its dedup key if its kind is due, else return None.

        One READ COMMITTED transaction: take the kind's advisory lock, then, in a
        new statement (a fresh snapshot taken after the lock is granted), insert
        only if nothing of the kind is queued or running and nothing finished
        less than ``schedule.interval`` ago. The payload is checked first.

        :raises InvalidPayloadError: if the payload does not validate against its model;
            nothing is sent.
        :raises StoreUnavailableError: if the database cannot be reached.
        """
        request = _check(EnqueueRequest(schedule.payload, schedule.dedup_key))
        with connection_loss_as_unavailable():
            async with (
                self._pool.acquire() as connection,
                # Explicit: the fresh snapshot per statement is what makes the lock
                # work; REPEATABLE READ would keep the snapshot of the lock statement.
                connection.transaction(isolation="read_committed"),
            ):
                await connection.execute(LOCK_PERIODIC_KIND, request.kind)
                # Read after the lock is granted: a scheduler that waited judges
                # due-ness, and stamps its item, as of when its turn came.
                now = self._clock.now()
                item_id: int | None = await connection.fetchval(
                    ENQUEUE_IF_DUE,
                    request.kind,
                    request.payload_json,
                    request.dedup_key,
                    now,
                    now - schedule.interval,
                )
        return None if item_id is None else EnqueueResult(id=item_id, created=True)

    async def _insert_all(self, batch: _CheckedBatch) -> list[EnqueueResult]:
        with connection_loss_as_unavailable():
            ids: str = await self._connection.fetchval(
                ENQUEUE_WITHOUT_KEYS,
                # One JSON array each for the whole batch: the client encodes one
                # text instead of a thousand, and the server parses one.
                to_json(batch.kinds).decode(),
                to_json(batch.payloads).decode(),
                self._clock.now(),
                # The kinds to notify: every request creates, so every kind gets work.
                to_json(sorted(set(batch.kinds))).decode(),
            )
        return [EnqueueResult(item_id, True) for item_id in from_json(ids)]

    async def _insert_or_absorb(
        self, batch: _CheckedBatch, positions: Sequence[int]
    ) -> list[EnqueueResult | None]:
        if not positions:
            return []
        with connection_loss_as_unavailable():
            rows = await self._connection.fetch(
                ENQUEUE,
                to_json([batch.kinds[position] for position in positions]).decode(),
                to_json([batch.payloads[position] for position in positions]).decode(),
                to_json([batch.dedup_keys[position] for position in positions]).decode(),
                self._clock.now(),
            )
        return [
            None if row["id"] is None else EnqueueResult(id=row["id"], created=row["created"])
            for row in rows
        ]


def _check_batch(requests: Sequence[EnqueueRequest]) -> _CheckedBatch:
    """Check every request of a batch, refusing it as separate checks in order would."""
    try:
        dedup_keys = [check_dedup_key(request.dedup_key) for request in requests]
    except InvalidDedupKeyError:
        # One by one, a bad payload before the bad key is what gets reported.
        for request in requests:
            _check(request)
        raise
    payloads = checked_payloads_json([request.payload for request in requests])
    kind_names = {model: model.kind_name() for model in {type(r.payload) for r in requests}}
    return _CheckedBatch(
        kinds=[kind_names[type(request.payload)] for request in requests],
        payloads=payloads,
        dedup_keys=dedup_keys,
    )


def _check(request: EnqueueRequest) -> _CheckedRequest:
    dedup_key = check_dedup_key(request.dedup_key)
    payload_json = checked_payload_json(request.payload)
    return _CheckedRequest(
        kind=request.payload.kind_name(),
        # pydantic's serializer writes the same compact JSON as json.dumps with
        # tight separators, several times faster; jsonb parses either alike.
        payload_json=to_json(payload_json).decode(),
        dedup_key=dedup_key,
    )
