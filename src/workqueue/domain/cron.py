"""A calendar for a periodic kind: a cron expression read in a time zone (docs/adr/0032).

The expression has the five fields of Debian's cron (minute, hour, day of month,
month, day of week), or six with a leading seconds field, with ranges, lists,
steps, names (``MON``, ``JAN``), ``L`` (the last day of the month, or ``5L``, its
last Friday), ``LW`` (its last weekday) and ``#`` (``1#2``: the second Monday),
and the aliases ``@yearly``, ``@annually``, ``@monthly``, ``@weekly``, ``@daily``,
``@midnight`` and ``@hourly``. When both day fields are restricted, a day that
matches either fires, as in Debian's cron. ``cronsim`` reads it, and this is
the one module that knows of cronsim.

Times are read in the calendar's time zone, as Debian's cron reads them in the
machine's: a time the clocks skip when they spring forward fires once, as the
clocks pass it (a daily 02:30 fires at 03:00 that day); a time the clocks pass
twice when they fall back fires once, the first time (a daily 02:30 fires at
the first 02:30). A schedule that fires at every hour, minute or second
(``*`` in the hour field) fires by elapsed time instead: 23 times in the day
the clocks spring forward, 25 times in the day they fall back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from workqueue.domain.errors import InvalidScheduleError

__all__ = ["CRON_ALIASES", "CronCalendar", "time_zone"]

CRON_ALIASES: Final = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
"""The named expressions a calendar accepts, and the five fields each stands for."""

_ANY_MOMENT: Final = datetime(2000, 1, 1, tzinfo=UTC)
"""A moment to read an expression from: reading it is what checks it."""


@dataclass(frozen=True, slots=True)
class CronCalendar:
    """When a cron expression fires, in a time zone (see the module's docstring).

    :param expression: five or six fields, or an alias such as ``@daily``.
    :param timezone: an IANA time zone name (``Europe/Paris``); UTC by default.
    :raises InvalidScheduleError: if the expression or the time zone cannot be read.
    """

    expression: str
    timezone: str = "UTC"

    def __post_init__(self) -> None:
        if not isinstance(self.expression, str):
            raise InvalidScheduleError(
                f"cron expression must be text, not {type(self.expression).__name__}"
            )
        self._zone()
        try:
            CronSim(self._fields(), _ANY_MOMENT)
        except CronSimError as error:
            raise InvalidScheduleError(
                f"cron expression {self.expression!r} cannot be read: {error}"
            ) from None

    def latest_fire(self, now: datetime) -> datetime:
        """The newest time the calendar fires at or before ``now``, in UTC."""
        # cronsim steps back strictly before the time it starts from, and counts
        # whole seconds: start at the whole second after ``now``'s. Counted on the
        # timestamp: a second added to a local time would be a second of the wall
        # clock, an hour and a second where the clocks fall back.
        start = datetime.fromtimestamp(math.floor(now.timestamp()) + 1, tz=self._zone())
        return next(CronSim(self._fields(), start, reverse=True)).astimezone(UTC)

    def next_fire(self, now: datetime) -> datetime:
        """The first time the calendar fires after ``now``, in UTC."""
        return next(CronSim(self._fields(), now.astimezone(self._zone()))).astimezone(UTC)

    def _fields(self) -> str:
        text = self.expression.strip()
        return CRON_ALIASES.get(text.lower(), text)

    def _zone(self) -> ZoneInfo:
        return time_zone(self.timezone)


def time_zone(name: object) -> ZoneInfo:
    """The IANA time zone ``name`` (``Europe/Paris``).

    :raises InvalidScheduleError: if ``name`` is not text or names no zone.
    """
    if not isinstance(name, str):
        raise InvalidScheduleError(f"time zone must be an IANA name, not {name!r}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidScheduleError(f"unknown time zone {name!r}") from None
