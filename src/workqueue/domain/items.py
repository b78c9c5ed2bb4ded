"""A work item as stored, and the lease that fences every write to it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias

from pydantic import JsonValue

from workqueue.domain.status import WorkStatus

__all__ = ["LARGEST_ITEM_ID", "Failure", "Lease", "TraceContext", "WorkItem"]

TraceContext: TypeAlias = dict[str, str]
"""A span's context as propagation headers (``traceparent``, ``tracestate``, ...): what
an item carries from its enqueue to its runs (docs/adr/0038)."""

LARGEST_ITEM_ID = 2**63 - 1
"""The largest id an item can have (PostgreSQL's ``bigint``): a larger one is no item."""


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to write to one claimed item: its id and the attempt that claimed it.

    Every write after a claim is fenced by ``id = item_id AND attempt = attempt AND
    status = 'running'``, so a worker whose item was reclaimed cannot write.
    """

    item_id: int
    attempt: int


@dataclass(frozen=True, slots=True)
class Failure:
    """One failure of an item's handler (or its last stall): which attempt, when, and why."""

    attempt: int
    at: datetime
    error: str


@dataclass(frozen=True, slots=True)
class WorkItem:
    """One row of ``work_items``.

    ``cancel_reason`` is set once a cancel was requested while the item ran (its
    reason); the holder's heartbeat learns of it (docs/adr/0018). ``priority``
    (-100..100, larger first) and ``run_at`` (the time from which it is claimable;
    its enqueue time unless the producer gave one) order and time its claims
    (``domain/timing.py``, ``domain/claim_order.py``, docs/adr/0030).
    ``failures`` holds every failure of its handler in order, the one that failed
    it too (its count is what a retry policy counts); ``snoozes`` how many times
    its handler asked to run again later; ``result`` what its handler returned
    when it succeeded (docs/adr/0031). ``trace_context`` is the context of the span
    that enqueued it, when one was recorded: each attempt's span starts from it
    (docs/adr/0038). ``requeued_as`` is the item a bulk requeue enqueued for this
    failed one, or the queued twin that absorbed it (docs/adr/0041).
    """

    id: int
    kind: str
    payload: dict[str, Any]
    status: WorkStatus
    attempt: int
    stalls: int
    dedup_key: str | None
    enqueued_at: datetime
    priority: int
    run_at: datetime
    started_at: datetime | None
    heartbeat_at: datetime | None
    lease_expires_at: datetime | None
    finished_at: datetime | None
    worker_id: str | None
    progress: JsonValue
    error: str | None
    cancel_reason: str | None = None
    failures: tuple[Failure, ...] = ()
    snoozes: int = 0
    result: JsonValue = None
    trace_context: TraceContext | None = None
    requeued_as: int | None = None

    @classmethod
    def queued(
        cls,
        item_id: int,
        kind: str,
        payload: dict[str, Any],
        *,
        enqueued_at: datetime,
        dedup_key: str | None = None,
        priority: int = 0,
        run_at: datetime | None = None,
        trace_context: TraceContext | None = None,
    ) -> WorkItem:
        """The row an enqueue makes: queued, attempt 0, no stall, no run yet; claimable
        from ``run_at``, its enqueue time unless given."""
        return cls(
            id=item_id,
            kind=kind,
            payload=payload,
            status=WorkStatus.QUEUED,
            attempt=0,
            stalls=0,
            dedup_key=dedup_key,
            enqueued_at=enqueued_at,
            priority=priority,
            run_at=enqueued_at if run_at is None else run_at,
            started_at=None,
            heartbeat_at=None,
            lease_expires_at=None,
            finished_at=None,
            worker_id=None,
            progress=None,
            error=None,
            trace_context=trace_context,
        )

    @property
    def lease(self) -> Lease:
        """The lease of the current (or last) attempt."""
        return Lease(self.id, self.attempt)
