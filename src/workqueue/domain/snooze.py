"""A handler's request to run its item again later, without a failure.

A handler raises :class:`Snooze` when the work cannot be done yet and is not
wrong: a partner answered 429 (too many requests), a file has not arrived, a
rate limit's window is spent::

    if response.status_code == 429:
        raise Snooze(timedelta(seconds=int(response.headers.get("Retry-After", "60"))))

The item goes back to ``queued``, claimable again once ``delay`` has passed, with
no failure recorded and no attempt of its kind's retry policy spent; its
``snoozes`` count grows by one. An item that snoozes more than its kind's
``max_snoozes`` fails, so a handler cannot snooze forever unseen (ADR 0031).
"""

from __future__ import annotations

from datetime import timedelta

from workqueue.domain.timing import check_delay

__all__ = ["Snooze"]


class Snooze(Exception):
    """Raised by a handler: run this item again after ``delay``, without a failure.

    :param delay: how long from now the item waits (zero or more).
    :raises InvalidRunAtError: if ``delay`` is not a timedelta or is negative.
    """

    def __init__(self, delay: timedelta) -> None:
        self.delay = check_delay(delay)
        super().__init__(f"snooze for {delay}")
