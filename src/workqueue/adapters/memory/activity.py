"""InMemoryActivityLog: the fleet's activity by minute, on an InMemoryState.

It keeps what the PostgreSQL log keeps (the contract kit's ``ActivityContract``
holds both to it): counts added per minute and kind, one depth sample a minute
with the totals under ``""``, and the minutes older than
:data:`~workqueue.domain.ACTIVITY_KEPT` forgotten by the sample that follows them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from workqueue.adapters.memory.state import InMemoryState
from workqueue.domain import (
    ACTIVITY_KEPT,
    ActivityLog,
    Clock,
    MinuteActivity,
    MinuteCounts,
    WorkStatus,
    minute_of,
)

__all__ = ["InMemoryActivityLog"]

_TOTALS = ""
# What a sampled minute holds for a kind that had no item then.
_NONE = (0, 0, 0)


class InMemoryActivityLog(ActivityLog):
    """An :class:`~workqueue.domain.ActivityLog` over an :class:`InMemoryState`.

    Every method raises :class:`~workqueue.domain.StoreUnavailableError` while the
    state is marked unavailable, before changing anything.

    :param clock: when a sample is taken: a queued item whose run_at is still to
        come then counts as delayed.
    """

    def __init__(self, state: InMemoryState, clock: Clock) -> None:
        self._state = state
        self._clock = clock

    async def add_counts(self, counts: Sequence[MinuteCounts]) -> None:
        """See :meth:`~workqueue.domain.ActivityLog.add_counts`."""
        self._state.check_available()
        for count in counts:
            key = (minute_of(count.minute), count.kind)
            succeeded, failed, retried = self._state.activity.get(key, _NONE)
            self._state.activity[key] = (
                succeeded + count.succeeded,
                failed + count.failed,
                retried + count.retried,
            )

    async def sample_depth(self, minute: datetime) -> bool:
        """See :meth:`~workqueue.domain.ActivityLog.sample_depth`."""
        self._state.check_available()
        minute = minute_of(minute)
        if minute in self._state.depth:
            return False
        queued: Counter[str] = Counter()
        delayed: Counter[str] = Counter()
        running: Counter[str] = Counter()
        now = self._clock.now()
        for item in self._state.items.values():
            if item.status is WorkStatus.RUNNING:
                running[item.kind] += 1
            elif item.status is WorkStatus.QUEUED:
                (delayed if item.run_at > now else queued)[item.kind] += 1
        sample = {
            kind: (queued[kind], delayed[kind], running[kind])
            for kind in queued | delayed | running
        }
        sample[_TOTALS] = (queued.total(), delayed.total(), running.total())
        self._state.depth[minute] = sample
        oldest = minute - ACTIVITY_KEPT
        for key in [key for key in self._state.activity if key[0] < oldest]:
            del self._state.activity[key]
        for old in [old for old in self._state.depth if old < oldest]:
            del self._state.depth[old]
        return True

    async def activity(self, since: datetime, *, kind: str | None = None) -> list[MinuteActivity]:
        """See :meth:`~workqueue.domain.ActivityLog.activity`."""
        self._state.check_available()
        ended: dict[datetime, tuple[int, int, int]] = {}
        for (minute, counted), counts in self._state.activity.items():
            if minute >= since and kind in (None, counted):
                before = ended.get(minute, _NONE)
                ended[minute] = (
                    before[0] + counts[0],
                    before[1] + counts[1],
                    before[2] + counts[2],
                )
        depth = {
            minute: sample.get(_TOTALS if kind is None else kind, _NONE)
            for minute, sample in self._state.depth.items()
            if minute >= since
        }
        return [
            MinuteActivity(
                minute,
                kind,
                *ended.get(minute, _NONE),
                *depth.get(minute, (None, None, None)),
            )
            for minute in sorted(ended.keys() | depth.keys())
        ]
