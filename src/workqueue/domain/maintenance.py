"""The queue's first callers: the two periodic maintenance payloads."""

from __future__ import annotations

from workqueue.domain.kinds import WorkKind
from workqueue.domain.payload import WorkPayload

__all__ = ["TokenCleanup", "WorkItemRetention"]


class TokenCleanup(WorkPayload):
    """Delete refresh tokens that have expired or been revoked."""

    kind = WorkKind.TOKEN_CLEANUP


class WorkItemRetention(WorkPayload):
    """Delete finished work items older than the retention period.

    ``retention_days`` overrides the configured period for this run when set.
    """

    kind = WorkKind.WORK_ITEM_RETENTION

    retention_days: float | None = None
