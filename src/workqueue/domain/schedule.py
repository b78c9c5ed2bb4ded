"""The WorkSchedule port: one per periodic kind, on an interval or on a calendar."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Final

from workqueue.domain.cron import CronCalendar
from workqueue.domain.dedup import check_dedup_key
from workqueue.domain.errors import InvalidScheduleError
from workqueue.domain.items import WorkItem
from workqueue.domain.payload import WorkPayload

__all__ = ["PERIODIC_DEDUP_KEY", "Overlap", "WorkSchedule"]

PERIODIC_DEDUP_KEY: Final = "periodic"

_ANY_FIRE: Final = datetime(2000, 1, 1, tzinfo=UTC)
"""A fire time, to check the length of a calendar's dedup keys with."""


class Overlap(StrEnum):
    """What a calendar's fire time does while an item of its kind is queued or running."""

    SKIP = "skip"
    """The fire time passes without an item: the one before is still to finish."""
    QUEUE = "queue"
    """The fire time has its item all the same; it may run beside the one before."""


@dataclass(frozen=True, slots=True)
class WorkSchedule:
    """A periodic kind: the payload to enqueue, and when; exactly one of ``interval``
    and ``cron``.

    There is no timer and no leader: every worker's scheduler asks the queue to
    enqueue the payload if the kind is due (from the table), in one atomic step, so
    workers that find it due together produce one item.

    - ``interval``: due when no item of the kind is queued or running and the newest
      finished one finished at least ``interval`` ago (or none exists).
    - ``cron`` (with ``timezone``): due at each fire time of the calendar
      (:mod:`workqueue.domain.cron`). The newest fire time at or before now that has
      had no turn yet is due: after downtime, the fire times missed have one item
      between them, not one each. The item's dedup key is ``dedup_key``, ``@`` and
      the fire time in UTC (ISO 8601), so one fire time makes one item however many
      schedulers find it due. ``overlap`` says what a fire time does while an item
      of the kind is queued or running: skip it (the default) or queue it.

    :raises InvalidScheduleError: naming the kind, if the interval is not positive,
        the expression or the time zone cannot be read, both ``interval`` and
        ``cron`` or neither are given, or a calendar's option is given to an interval.
    :raises InvalidDedupKeyError: if the dedup key (with a fire time, for a
        calendar) is not one.
    """

    payload: WorkPayload
    interval: timedelta | None = None
    dedup_key: str = PERIODIC_DEDUP_KEY
    cron: str | None = None
    timezone: str = "UTC"
    overlap: Overlap = Overlap.SKIP

    def __post_init__(self) -> None:
        try:
            self._check()
        except InvalidScheduleError as error:
            raise InvalidScheduleError(f"schedule of {self.kind!r}: {error}") from None
        if self.cron is None:
            check_dedup_key(self.dedup_key)
        else:
            # Every fire time's key is as long as this one.
            check_dedup_key(self.fire_dedup_key(_ANY_FIRE))

    def _check(self) -> None:
        if (self.interval is None) == (self.cron is None):
            raise InvalidScheduleError("give exactly one of interval and cron")
        if self.interval is not None:
            if not isinstance(self.interval, timedelta) or self.interval <= timedelta(0):
                raise InvalidScheduleError(
                    f"interval must be a positive timedelta, not {self.interval!r}"
                )
            if self.timezone != "UTC" or self.overlap is not Overlap.SKIP:
                raise InvalidScheduleError("timezone and overlap are for cron schedules")
        else:
            self.calendar  # noqa: B018 - reading the calendar checks its expression and zone
        if not isinstance(self.overlap, Overlap):
            raise InvalidScheduleError(
                f"overlap must be one of {', '.join(Overlap)}, not {self.overlap!r}"
            )

    @property
    def kind(self) -> str:
        """The periodic kind's name."""
        return self.payload.kind_name()

    @property
    def calendar(self) -> CronCalendar:
        """The calendar of a cron schedule.

        :raises InvalidScheduleError: if the expression or the time zone cannot be
            read, or this is an interval schedule.
        """
        return _calendar_of(self)

    def next_due(
        self, now: datetime, *, newest: WorkItem | None, fired_at: datetime | None
    ) -> datetime | None:
        """When the kind is next due, given its newest item and its calendar's last turn.

        A calendar: its newest fire time at or before ``now`` if it has had no turn
        at it yet (due now: the next scheduler pass takes it), else its next fire
        time. An interval: ``newest``'s finish plus the interval (at or before
        ``now``: due now), ``now`` when there is no item, None while ``newest`` is
        queued or running (due an interval after it finishes).
        """
        if self.interval is None:
            latest = self.calendar.latest_fire(now)
            if fired_at is None or fired_at < latest:
                return latest
            return self.calendar.next_fire(now)
        if newest is None:
            return now
        if newest.finished_at is None:
            return None
        return newest.finished_at + self.interval

    def fire_dedup_key(self, fire: datetime) -> str:
        """The dedup key of the item of the calendar's fire time ``fire`` (in UTC, as
        :class:`~workqueue.domain.CronCalendar` gives them)."""
        return f"{self.dedup_key}@{fire.isoformat()}"


def _calendar_of(schedule: WorkSchedule) -> CronCalendar:
    if schedule.cron is None:
        raise InvalidScheduleError(f"schedule of {schedule.kind!r} has no cron expression")
    return CronCalendar(schedule.cron, schedule.timezone)
