"""The states of a work item, and who moves items in and out of each."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["FINISHED_STATUSES", "WorkStatus"]


class WorkStatus(StrEnum):
    """The ``work_items.status`` values.

    - ``queued``: written by the WorkQueue (enqueue), by release on shutdown and by
      lease recovery; left by a claim.
    - ``running``: written by a claim; left by complete, fail, release or recovery.
    - ``succeeded`` / ``failed``: final. Only retention removes them.
    """

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"

    @property
    def is_finished(self) -> bool:
        """True for the final states, which never change again."""
        return self in FINISHED_STATUSES


FINISHED_STATUSES = frozenset({WorkStatus.SUCCEEDED, WorkStatus.FAILED})
