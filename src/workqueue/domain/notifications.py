"""The WorkNotifications port: an idle worker's early wake-up."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

__all__ = ["WorkNotifications"]


class WorkNotifications(Protocol):
    """Tells an idle worker that work of its kinds may have arrived.

    Best effort: a notification may be lost, so the worker still polls.
    """

    async def wait_for_work(self, kinds: Collection[str]) -> None:
        """Return when an item of one of ``kinds`` may have been enqueued."""
        ...
