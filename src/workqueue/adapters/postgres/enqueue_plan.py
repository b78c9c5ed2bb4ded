"""What an enqueue sends to PostgreSQL and what it makes of the answers, for both queues.

:class:`~workqueue.adapters.postgres.PostgresWorkQueue` (asyncpg) and
:class:`~workqueue.adapters.psycopg.PsycopgWorkQueue` (psycopg) send the same statements of
``sql/queue.sql`` with the same parameters; only how a statement travels differs.
So everything of an enqueue but the sending lives here, once: the checks made
before anything is sent, which statement answers which request, its parameters,
the passes that follow a racing twin, and the results.

A plan is a generator. It yields each :class:`Statement` to send and is sent back
the statement's rows, each row a sequence of its columns in order; its return
value is the enqueue's result. A queue drives it like this (the async one awaits
the fetch)::

    plan = single_enqueue(check_request(request), clock)
    rows = None
    while True:
        try:
            statement = next(plan) if rows is None else plan.send(rows)
        except StopIteration as done:  # the plan has its answer
            return done.value
        rows = fetch(STATEMENTS[statement.name], *statement.arguments)

Nothing here does I/O, so the unit tests drive the plans with rows of their own.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple, TypeAlias, TypeVar

from pydantic_core import from_json, to_json

from workqueue.adapters.postgres.channel import CHANNEL
from workqueue.domain import (
    DEFAULT_PRIORITY,
    Clock,
    EnqueueFailedError,
    EnqueueRequest,
    EnqueueResult,
    TraceContext,
    When,
    WorkPayload,
    WorkQueueError,
    check_dedup_key,
    check_priority,
    check_when,
    run_at_of,
)
from workqueue.domain.payload_check import checked_payload_text, checked_payloads_json

__all__ = [
    "MAX_DEDUP_PASSES",
    "CheckedBatch",
    "CheckedRequest",
    "Plan",
    "Rows",
    "Statement",
    "batch_enqueue",
    "check_batch",
    "check_enqueue",
    "check_request",
    "context_text",
    "due_enqueue",
    "fired_enqueue",
    "inserted",
    "plain_insert",
    "single_enqueue",
]

T = TypeVar("T")

MAX_DEDUP_PASSES = 5
"""How many times an enqueue with a dedup key sends its statement before it gives up.

A pass after the first follows a queued twin the statement could not read: one a
claim took between the insert and the lookup, or one another transaction
committed while the statement waited for it. Under READ COMMITTED the next pass
sees what happened and answers; a run of five such races means something else is
wrong (a snapshot that never moves on, say), so the enqueue stops with an
:class:`~workqueue.domain.EnqueueFailedError` rather than loop for ever.
"""

Rows: TypeAlias = Sequence[Sequence[Any]]
"""A statement's rows, each one its columns in the order the statement selects them."""


class Statement(NamedTuple):
    """One statement to send: its name in ``sql/queue.sql`` and its parameters, in order.

    One is made for every enqueue, as is a :class:`CheckedRequest`: both are named
    tuples, which cost about half of what a frozen dataclass costs to make.
    """

    name: str
    arguments: tuple[Any, ...]


Plan: TypeAlias = Generator[Statement, Rows, T]
"""Yields the statements to send, is sent each one's rows, returns the result."""


class CheckedRequest(NamedTuple):
    """One request once checked: its kind, its payload as compact JSON text, its key, its
    priority and when it may run (a time, a delay from its enqueue, or None: at once)."""

    kind: str
    payload_json: str
    dedup_key: str | None
    priority: int
    when: When


@dataclass(frozen=True, slots=True)
class CheckedBatch:
    """The requests of a batch once checked, as parallel lists in request order."""

    kinds: list[str]
    payloads: list[dict[str, Any]]
    dedup_keys: list[str | None]
    priorities: list[int]
    whens: list[When]


def check_enqueue(
    payload: WorkPayload,
    dedup_key: str | None,
    priority: int = DEFAULT_PRIORITY,
    run_at: datetime | None = None,
    delay: timedelta | None = None,
) -> CheckedRequest:
    """Check an enqueue of ``payload`` before anything is sent, in this order: the dedup
    key, the priority, the run_at or delay, the payload.

    :raises InvalidDedupKeyError: if the dedup key is unusable.
    :raises InvalidPriorityError: if the priority is not an integer from -100 to 100.
    :raises InvalidRunAtError: if run_at is naive, delay negative, or both are given.
    :raises InvalidPayloadError: if the payload does not validate against its model.
    """
    checked_key = check_dedup_key(dedup_key)
    checked_priority = check_priority(priority)
    when = check_when(run_at, delay)
    return CheckedRequest(
        kind=payload.kind_name(),
        # Compact JSON text, as json.dumps with tight separators writes it; jsonb
        # parses either alike.
        payload_json=checked_payload_text(payload),
        dedup_key=checked_key,
        priority=checked_priority,
        when=when,
    )


def check_request(request: EnqueueRequest) -> CheckedRequest:
    """:func:`check_enqueue` of ``request``."""
    return check_enqueue(
        request.payload,
        request.dedup_key,
        request.priority,
        request.run_at,
        request.delay,
    )


def check_batch(requests: Sequence[EnqueueRequest]) -> CheckedBatch:
    """Check every request of a batch, refusing it as separate checks in order would.

    The keys, priorities and times of every request first, then the payloads all at
    once (one validation call for the batch). Should anything but a payload be
    unusable, the requests are checked again one by one, in order, so that the error
    is the first one separate checks would meet.

    :raises InvalidDedupKeyError: for the first unusable dedup key.
    :raises InvalidPriorityError: for the first unusable priority.
    :raises InvalidRunAtError: for the first unusable run_at or delay.
    :raises InvalidPayloadError: for the first invalid payload.
    """
    try:
        dedup_keys = [check_dedup_key(request.dedup_key) for request in requests]
        priorities = [check_priority(request.priority) for request in requests]
        whens = [check_when(request.run_at, request.delay) for request in requests]
    except WorkQueueError:
        for request in requests:
            check_request(request)
        raise
    payloads = checked_payloads_json([request.payload for request in requests])
    kind_names = {model: model.kind_name() for model in {type(r.payload) for r in requests}}
    return CheckedBatch(
        kinds=[kind_names[type(request.payload)] for request in requests],
        payloads=payloads,
        dedup_keys=dedup_keys,
        priorities=priorities,
        whens=whens,
    )


def context_text(context: TraceContext | None) -> str | None:
    """A trace context as the statements take it: JSON text, or None (SQL null) for none."""
    return None if context is None else to_json(context).decode()


def single_enqueue(
    request: CheckedRequest, clock: Clock, context: str | None = None
) -> Plan[EnqueueResult]:
    """The plan of one enqueue: ``enqueue_one_without_key``, or ``enqueue_one`` per pass.

    ``context`` is the trace context to store with the item (:func:`context_text`).

    :raises EnqueueFailedError: after :data:`MAX_DEDUP_PASSES` passes that each found
        a queued twin they could not read.
    """
    if request.dedup_key is None:
        return inserted((yield plain_insert(request, clock, context)))
    for _ in range(MAX_DEDUP_PASSES):
        now = clock.now()
        rows = yield _insert(
            "enqueue_one",
            request.kind,
            request.payload_json,
            now,
            request.dedup_key,
            request.priority,
            run_at_of(request.when, now),
            context,
        )
        item_id, created = rows[0]
        if item_id is not None:
            return EnqueueResult(id=item_id, created=created)
    raise EnqueueFailedError(
        f"gave up enqueueing kind {request.kind!r} with dedup key {request.dedup_key!r}: {_RACED}"
    )


def plain_insert(request: CheckedRequest, clock: Clock, context: str | None = None) -> Statement:
    """The one statement of an enqueue without a dedup key, which nothing can absorb:
    a plain insert, whose rows :func:`inserted` reads.

    :func:`single_enqueue` sends it for such a request; a queue may send it itself,
    without a plan to drive around one statement.
    """
    now = clock.now()
    return _insert(
        "enqueue_one_without_key",
        request.kind,
        request.payload_json,
        now,
        request.priority,
        run_at_of(request.when, now),
        context,
    )


def inserted(rows: Rows) -> EnqueueResult:
    """The result of :func:`plain_insert`'s statement, from its rows: a new item."""
    return EnqueueResult(id=rows[0][0], created=True)


def batch_enqueue(
    batch: CheckedBatch, clock: Clock, context: str | None = None
) -> Plan[list[EnqueueResult]]:
    """The plan of a batch: nothing when empty, ``enqueue_without_keys`` when no request
    has a key, else ``enqueue`` per pass for the requests still unanswered.

    ``context`` is the trace context to store with every item created.

    :raises EnqueueFailedError: after :data:`MAX_DEDUP_PASSES` passes that each left
        a request whose queued twin they could not read.
    """
    if not batch.kinds:
        return []
    if all(dedup_key is None for dedup_key in batch.dedup_keys):
        # Nothing to absorb: one insert of the whole batch, every request creates.
        now = clock.now()
        rows = yield _insert(
            "enqueue_without_keys",
            # One JSON array each for the whole batch: the client encodes one text
            # instead of a thousand, and the server parses one.
            to_json(batch.kinds).decode(),
            to_json(batch.payloads).decode(),
            now,
            # The kinds to notify: every request creates, so every kind gets work.
            to_json(sorted(set(batch.kinds))).decode(),
            *_timing(batch.priorities, batch.whens, now),
            context,
        )
        return [EnqueueResult(id=item_id, created=True) for item_id in from_json(rows[0][0])]
    results: list[EnqueueResult | None] = [None] * len(batch.kinds)
    unanswered = list(range(len(batch.kinds)))
    # Normally one pass answers everything. A request is left unanswered only when
    # its queued twin could not be read (see MAX_DEDUP_PASSES); the next pass then
    # inserts it or finds the twin.
    for _ in range(MAX_DEDUP_PASSES):
        now = clock.now()
        rows = yield _insert(
            "enqueue",
            to_json([batch.kinds[position] for position in unanswered]).decode(),
            to_json([batch.payloads[position] for position in unanswered]).decode(),
            now,
            to_json([batch.dedup_keys[position] for position in unanswered]).decode(),
            *_timing(
                [batch.priorities[position] for position in unanswered],
                [batch.whens[position] for position in unanswered],
                now,
            ),
            context,
        )
        left = []
        for position, (_, item_id, created) in zip(unanswered, rows, strict=True):
            if item_id is None:
                left.append(position)
            else:
                results[position] = EnqueueResult(id=item_id, created=created)
        if not left:
            return [result for result in results if result is not None]
        unanswered = left
    raise EnqueueFailedError(
        f"gave up enqueueing {len(unanswered)} of a batch of {len(results)} requests: {_RACED}"
    )


def due_enqueue(
    request: CheckedRequest, interval: timedelta, clock: Clock
) -> Plan[EnqueueResult | None]:
    """The plan of ``enqueue_if_due``, to run inside one READ COMMITTED transaction.

    ``lock_periodic_kind``, then ``enqueue_if_due`` as a statement of its own, whose
    ``now`` is read once the lock is granted (docs/adr/0005). Returns None when
    the kind was not due.
    """
    yield Statement("lock_periodic_kind", (request.kind,))
    # Read after the lock is granted: a scheduler that waited judges due-ness, and
    # stamps its item, as of when its turn came.
    now = clock.now()
    rows = yield _insert(
        "enqueue_if_due", request.kind, request.payload_json, now, request.dedup_key, now - interval
    )
    return EnqueueResult(id=rows[0][0], created=True) if rows else None


def fired_enqueue(
    request: CheckedRequest, fire: datetime, skip_while_busy: bool, clock: Clock
) -> Plan[EnqueueResult | None]:
    """The plan of ``enqueue_if_due`` for a cron schedule: its turn at ``fire``.

    ``request`` carries the fire time's dedup key. Returns None when the turn was
    taken already, or taken now but skipped while an item of the kind is busy.
    """
    rows = yield _insert(
        "enqueue_if_fired",
        request.kind,
        request.payload_json,
        clock.now(),
        request.dedup_key,
        fire,
        skip_while_busy,
    )
    return EnqueueResult(id=rows[0][0], created=True) if rows else None


def _timing(
    priorities: list[int], whens: list[When], now: datetime
) -> tuple[str | None, str | None]:
    """A batch's priorities and run_ats as the statements take them: a JSON array each,
    parallel to the requests, or null when every request has the default (priority 0,
    at once), which costs the usual batch nothing to encode or parse. A request to run
    at once is a JSON null there, which the statement reads as its enqueue time."""
    return (
        None if not any(priorities) else to_json(priorities).decode(),
        None
        if all(when is None for when in whens)
        else to_json([None if when is None else run_at_of(when, now) for when in whens]).decode(),
    )


def _insert(name: str, kind: Any, payload: Any, now: datetime, *rest: Any) -> Statement:
    """The statement ``name`` of queue.sql that inserts, with its parameters in the one
    order every such statement takes: kind(s), payload(s), enqueued_at, the channel to
    notify, then what the statement alone needs (``rest``)."""
    return Statement(name, (kind, payload, now, CHANNEL, *rest))


_RACED = (
    f"{MAX_DEDUP_PASSES} passes in a row found a queued twin and could not read it (claimed, "
    "or committed by another transaction, between the insert and the lookup)"
)
