"""The fleet's activity by minute: how items ended, and how deep the queue was (docs/adr/0040).

What the admin view draws as throughput and queue depth over the last hour and
day. Each worker counts the items its lanes run, by minute, kind and how they
ended (:class:`MinuteCounts`), and adds them to the store's
:class:`ActivityLog` at every cycle: one write per worker a poll interval,
never one per item, so a claim and a completion cost what they cost without it,
and the chart reads a few rows a minute however many items finished. Once a
minute one worker of the fleet samples the queue's depth per kind
(:meth:`ActivityLog.sample_depth`), and forgets the minutes older than
:data:`ACTIVITY_KEPT`.

What a worker killed before its next cycle had counted is lost to the chart (at
most a poll interval of its items); the items themselves are in the table as
ever. The chart is a picture, the table is the record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

__all__ = [
    "ACTIVITY_KEPT",
    "ActivityLog",
    "MinuteActivity",
    "MinuteCounts",
    "minute_of",
]

ACTIVITY_KEPT = timedelta(days=2)
"""How long a minute's activity is kept: the day the chart shows, and a day more."""


def minute_of(moment: datetime) -> datetime:
    """The minute ``moment`` falls in: ``moment`` with its seconds and microseconds cut.

    :raises ValueError: if ``moment`` is naive (every time a store keeps has a zone).
    """
    if moment.utcoffset() is None:
        raise ValueError(f"a minute of activity needs a time with a zone, not {moment!r}")
    return moment.replace(second=0, microsecond=0)


@dataclass(frozen=True, slots=True)
class MinuteCounts:
    """How many items of ``kind`` ended in ``minute``, by how they ended.

    :param minute: the minute (:func:`minute_of`) the items ended in.
    :param succeeded: items that succeeded.
    :param failed: items that failed for good.
    :param retried: items that failed with attempts left and went back to queued.
    """

    minute: datetime
    kind: str
    succeeded: int = 0
    failed: int = 0
    retried: int = 0


@dataclass(frozen=True, slots=True)
class MinuteActivity:
    """One minute of one kind (or of every kind, ``kind`` None): ended items and depth.

    The depth is the minute's sample (None when no worker took one that minute):
    ``queued`` items claimable then, ``delayed`` ones waiting for their run_at,
    and ``running`` ones.
    """

    minute: datetime
    kind: str | None
    succeeded: int = 0
    failed: int = 0
    retried: int = 0
    queued: int | None = None
    delayed: int | None = None
    running: int | None = None


class ActivityLog(Protocol):
    """Where the fleet's activity by minute is kept (docs/adr/0040)."""

    async def add_counts(self, counts: Sequence[MinuteCounts]) -> None:
        """Add ``counts`` to what is kept of their minutes and kinds (nothing for none).

        :raises StoreUnavailableError: if the store cannot be reached; nothing was added.
        """
        ...

    async def sample_depth(self, minute: datetime) -> bool:
        """Sample the depth of every kind for ``minute``, unless it was sampled already.

        The first call for a minute, from any worker, counts the queued, delayed and
        running items of each kind and keeps them, and forgets the minutes older
        than :data:`ACTIVITY_KEPT` before ``minute``; later calls for that minute
        change nothing.

        :returns: whether this call took the sample.
        :raises StoreUnavailableError: if the store cannot be reached.
        """
        ...

    async def activity(self, since: datetime, *, kind: str | None = None) -> list[MinuteActivity]:
        """The minutes from ``since`` on that have anything kept, oldest first.

        :param kind: that kind's minutes; None: every kind's, summed per minute
            (``kind`` None in each).
        :raises StoreUnavailableError: if the store cannot be reached.
        """
        ...
