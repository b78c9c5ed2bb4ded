"""A kind's policy: how the runs of its items are judged and bounded, declared with its handler.

Every kind has one :class:`KindPolicy`, declared on its handler class::

    class CrawlPageHandler(WorkHandler[CrawlPage]):
        policy = KindPolicy(max_attempts=5, backoff=Backoff(initial=timedelta(seconds=30)))

and the kind registry returns it with the dispatch of each item, so the
executor holds it with the claim (``Claim.policy``) wherever an item's run is
decided: the verdict, the outcome write, the heartbeat. A handler that declares
none has the default, which is what part one of DESIGN.md fixes for every kind:
a failure fails the item (no retry), nothing caps or pauses the kind (ADR 0029).
A policy may cap the kind (``max_running``, ADR 0035): the store holds the cap,
which every worker obeys, those that do not know the kind's policy too.

Retries (ADR 0031): a handler failure with attempts left puts the item back to
queued, to run again once the backoff's delay has passed; the last failure
fails it. Stalls are not failures and spend no attempt (``max_stalls`` bounds
them). A handler may snooze (run again later without a failure) at most
``max_snoozes`` times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from workqueue.domain.caps import MAX_CAP
from workqueue.domain.errors import InvalidPolicyError

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_MAX_SNOOZES",
    "DEFAULT_POLICY",
    "Backoff",
    "KindPolicy",
]

DEFAULT_MAX_SNOOZES: Final = 100
"""How many times an item may snooze unless its kind's policy says otherwise."""


def _positive_delay(name: str, value: timedelta) -> None:
    if not isinstance(value, timedelta) or value <= timedelta(0):
        raise InvalidPolicyError(f"{name} must be a positive timedelta, not {value!r}")


@dataclass(frozen=True, slots=True)
class Backoff:
    """The delays between the attempts of a kind's item: exponential, capped, jittered.

    The delay before retry ``n`` (``n`` failures so far, the last included) is
    ``min(cap, initial * multiplier ** (n - 1))``, less a random share of it of at
    most ``jitter``: with the defaults 3.75-5 s, 7.5-10 s, 15-20 s, ... up to 45-60
    min. The jitter spreads items that failed together (a partner down for all of
    them) so that they do not all come back at once.

    :param initial: the delay before the first retry, at most (positive).
    :param multiplier: how much each delay grows over the one before (at least 1).
    :param cap: the longest delay (at least ``initial``).
    :param jitter: the largest share of a delay taken off at random (0 to 1; 0:
        every delay as computed).
    :raises InvalidPolicyError: if a parameter is out of its range.
    """

    initial: timedelta = timedelta(seconds=5)
    multiplier: float = 2.0
    cap: timedelta = timedelta(hours=1)
    jitter: float = 0.25

    def __post_init__(self) -> None:
        _positive_delay("backoff initial", self.initial)
        _positive_delay("backoff cap", self.cap)
        if isinstance(self.multiplier, bool) or not isinstance(self.multiplier, int | float):
            raise InvalidPolicyError(
                f"backoff multiplier must be a number, not {type(self.multiplier).__name__}"
            )
        if not self.multiplier >= 1:
            raise InvalidPolicyError(
                f"backoff multiplier must be at least 1, not {self.multiplier!r}"
            )
        if self.cap < self.initial:
            raise InvalidPolicyError(
                f"backoff cap must be at least its initial delay ({self.initial}), not {self.cap}"
            )
        if isinstance(self.jitter, bool) or not isinstance(self.jitter, int | float):
            raise InvalidPolicyError(
                f"backoff jitter must be a number, not {type(self.jitter).__name__}"
            )
        if not 0 <= self.jitter <= 1:
            raise InvalidPolicyError(f"backoff jitter must be from 0 to 1, not {self.jitter!r}")

    def delay(self, failures: int, draw: float) -> timedelta:
        """The delay before the retry that follows the ``failures``-th failure.

        :param failures: the failures so far, the one just now included (1 or more).
        :param draw: a random number from 0 to 1 (the caller's, so tests choose it).
        """
        ceiling = self.cap.total_seconds()
        try:
            seconds = min(ceiling, self.initial.total_seconds() * self.multiplier ** (failures - 1))
        except OverflowError:  # a float power past 1e308: far past any cap
            seconds = ceiling
        return timedelta(seconds=seconds * (1 - self.jitter * draw))


DEFAULT_BACKOFF = Backoff()
"""The backoff of a kind that declares none (used only once it allows a retry)."""


@dataclass(frozen=True, slots=True)
class KindPolicy:
    """How the runs of one kind's items are judged and bounded (see the module's docstring).

    :param max_attempts: how many times an item's handler may fail before the item
        fails (1, the default: no retry).
    :param backoff: the delays between those attempts.
    :param max_snoozes: how many times an item may snooze; one more fails it.
    :param max_running: at most this many of the kind's items run at once across
        every worker (a fleet-wide cap, docs/adr/0035), or None (the default) for no
        cap. A worker writes it to the store as it starts, unless an operator set
        the kind's cap (``workqueue cap``).
    :raises InvalidPolicyError: if a field is out of its range.
    """

    max_attempts: int = 1
    backoff: Backoff = field(default=DEFAULT_BACKOFF)
    max_snoozes: int = DEFAULT_MAX_SNOOZES
    max_running: int | None = None

    def __post_init__(self) -> None:
        _count("max_attempts", self.max_attempts, least=1)
        if not isinstance(self.backoff, Backoff):
            raise InvalidPolicyError(
                f"backoff must be a Backoff, not {type(self.backoff).__name__}"
            )
        _count("max_snoozes", self.max_snoozes, least=0)
        if self.max_running is not None:
            _count("max_running", self.max_running, least=1)
            if self.max_running > MAX_CAP:
                raise InvalidPolicyError(
                    f"max_running must be at most {MAX_CAP}, not {self.max_running}"
                )

    def retry_at(self, failures: int, now: datetime, draw: float) -> datetime | None:
        """When an item that has failed ``failures`` times (this one included) runs
        again, or None when that was its last attempt.

        :param draw: a random number from 0 to 1, for the backoff's jitter.
        """
        if failures >= self.max_attempts:
            return None
        return now + self.backoff.delay(failures, draw)


def _count(name: str, value: int, *, least: int) -> None:
    if type(value) is not int:
        raise InvalidPolicyError(f"{name} must be an integer, not {type(value).__name__}")
    if value < least:
        raise InvalidPolicyError(f"{name} must be at least {least}, not {value}")


DEFAULT_POLICY = KindPolicy()
"""The policy of a kind whose handler declares none."""
