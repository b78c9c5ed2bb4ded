"""Work items in a given state, for the unit tests that need one and no store to make it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from workqueue.domain import WorkItem, WorkStatus

T0 = datetime(2026, 1, 1, tzinfo=UTC)

_QUEUED = WorkItem(
    id=1,
    kind="alpha",
    payload={},
    status=WorkStatus.QUEUED,
    attempt=0,
    stalls=0,
    dedup_key=None,
    enqueued_at=T0,
    priority=0,
    run_at=T0,
    started_at=None,
    heartbeat_at=None,
    lease_expires_at=None,
    finished_at=None,
    worker_id=None,
    progress=None,
    error=None,
)


def queued_item(**changes: Any) -> WorkItem:
    """Item 1 of kind ``alpha``, queued at :data:`T0` to run at once, with ``changes``."""
    return replace(_QUEUED, **changes)


def running_item(**changes: Any) -> WorkItem:
    """That item in its first attempt, claimed at :data:`T0` by ``worker-1``, with ``changes``.

    Its lease expires at :data:`T0` unless ``changes`` say when.
    """
    claimed = replace(
        _QUEUED,
        status=WorkStatus.RUNNING,
        attempt=1,
        started_at=T0,
        heartbeat_at=T0,
        lease_expires_at=T0,
        worker_id="worker-1",
    )
    return replace(claimed, **changes)
