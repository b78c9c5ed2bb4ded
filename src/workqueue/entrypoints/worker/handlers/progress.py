"""The progress both maintenance handlers report: ``{"deleted": n}``."""

from __future__ import annotations

from workqueue.domain import WorkContext

__all__ = ["deleted_so_far"]


def deleted_so_far(ctx: WorkContext) -> int:
    """How many rows earlier attempts of this item reported deleted, else 0.

    A stalled run that is claimed again resumes its count, so the item's final
    progress says what the item as a whole deleted.
    """
    snapshot = ctx.progress
    if isinstance(snapshot, dict):
        deleted = snapshot.get("deleted")
        if isinstance(deleted, int) and not isinstance(deleted, bool):
            # A negative count is nonsense; start again from none rather than trust it.
            return max(deleted, 0)
    return 0
