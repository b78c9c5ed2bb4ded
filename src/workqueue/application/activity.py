"""The worker's share of the fleet's activity by minute (docs/adr/0040).

The lanes count every item they run into the worker's
:class:`~workqueue.application.tally.Tally`, which hands each outcome on to an
:class:`ActivityRecorder`: it counts the items that succeeded, failed or were
retried by minute and kind, and at every cycle of the worker adds those counts
to the :class:`~workqueue.domain.ActivityLog` in one write, then, once a minute,
offers the log the minute's depth sample (one worker of the fleet takes it).

The charts are a picture of the work, never in its way: counts the store could
not take while it was unreachable are added at the next cycle (those older than
:data:`~workqueue.domain.ACTIVITY_KEPT` are dropped); any other error of the log
(a role without the grants on its tables, say) is logged as a warning, once
until the log works again, and the worker goes on.
"""

from __future__ import annotations

import logging
from datetime import datetime

from workqueue.application.execution import ExecutionOutcome, ExecutionStatus
from workqueue.domain import (
    ACTIVITY_KEPT,
    ActivityLog,
    Clock,
    MinuteCounts,
    StoreUnavailableError,
    minute_of,
)

__all__ = ["COUNTED", "ActivityRecorder"]

logger = logging.getLogger("workqueue.worker")

COUNTED = (ExecutionStatus.SUCCEEDED, ExecutionStatus.FAILED, ExecutionStatus.RETRIED)
"""The endings the activity counts, in the order of :class:`~workqueue.domain.MinuteCounts`."""

_Counts = dict[tuple[datetime, str], list[int]]


class ActivityRecorder:
    """Counts a worker's items by minute and kind, and adds them to ``log`` at each cycle.

    :param log: where the fleet's activity is kept.
    :param clock: the minute an item ended in, and the minute a sample is for.
    """

    def __init__(self, log: ActivityLog, clock: Clock) -> None:
        self._log = log
        self._clock = clock
        self._counts: _Counts = {}
        # The last minute this worker offered a depth sample for (ADR 0006: an
        # equivalent mutant, any value that is no minute making the first cycle offer).
        self._offered: datetime | None = None  # pragma: no mutate
        # The failure of the log that was logged, until the log works again.
        self._warning: str | None = None

    def add(self, outcome: ExecutionOutcome) -> None:
        """Count ``outcome`` under the minute it ended in, if it is an ending charted."""
        if outcome.status in COUNTED:
            key = (minute_of(self._clock.now()), outcome.kind)
            self._counts.setdefault(key, [0, 0, 0])[COUNTED.index(outcome.status)] += 1

    async def run_once(self) -> None:
        """Add the counts since the last cycle to the log; offer this minute's depth sample.

        :raises StoreUnavailableError: if the store cannot be reached; the counts
            are kept for the next cycle.
        """
        counts, self._counts = self._counts, {}
        minute = minute_of(self._clock.now())
        try:
            await self._log.add_counts(
                [MinuteCounts(at, kind, *numbers) for (at, kind), numbers in counts.items()]
            )
        except StoreUnavailableError:
            self._keep(counts, minute)
            raise
        except Exception as error:  # a chart never stops the work
            self._failed(error)
            return
        if minute != self._offered:
            try:
                await self._log.sample_depth(minute)
            except StoreUnavailableError:
                raise
            except Exception as error:  # a chart never stops the work
                self._failed(error)
                return
            self._offered = minute
        self._warning = None

    def _keep(self, counts: _Counts, minute: datetime) -> None:
        """Put ``counts`` back, less the minutes the log no longer keeps."""
        oldest = minute - ACTIVITY_KEPT
        for key, numbers in counts.items():
            if key[0] >= oldest:
                kept = self._counts.setdefault(key, [0, 0, 0])
                for index, number in enumerate(numbers):
                    kept[index] += number

    def _failed(self, error: Exception) -> None:
        """Log the first failure of a run of them."""
        if self._warning is None:
            self._warning = f"{type(error).__name__}: {error}"
            logger.warning(
                "the activity by minute was not recorded (the charts miss it): %s", self._warning
            )
