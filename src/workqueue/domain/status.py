"""The states of a work item, and who moves items in and out of each."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["FINISHED_STATUSES", "WorkStatus"]


class WorkStatus(StrEnum):
    """The ``work_items.status`` values.

    - ``queued``: written by the WorkQueue (enqueue), by release on shutdown and by
      lease recovery; left by a claim.
    - ``running``: written by a claim; left by complete, fail, cancelled, release or
      recovery.
    - ``succeeded`` / ``failed`` / ``cancelled``: final. Only retention removes them.
      ``cancelled`` is written by a cancel of a queued item, by the holder of a
      running item whose cancel was requested, and by lease recovery of such an item.
    """

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def is_finished(self) -> bool:
        """True for the final states, which never change again."""
        return self in FINISHED_STATUSES


FINISHED_STATUSES = frozenset({WorkStatus.SUCCEEDED, WorkStatus.FAILED, WorkStatus.CANCELLED})
