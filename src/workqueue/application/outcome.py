"""The outcome writer: how a claimed item ended, written once, fenced by its lease.

Completing, failing, cancelling and releasing an item are one write with one shape
(:meth:`OutcomeWriter.write`): the store's one fenced call,
:meth:`~workqueue.domain.WorkStore.finish`, with the verdict's
:class:`~workqueue.domain.RunOutcome`, retried with backoff while the
store is unreachable, whose answer makes the outcome. True: the outcome is what
was written. False: the lease was lost, and nothing is written. No answer before
the lease would run out (or, in a hurry, after a few tries): abandoned, and lease
recovery requeues the item. :meth:`OutcomeWriter.lease_lost` is the outcome of a
lease the heartbeat found lost, when nothing is written at all.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any

from pydantic import JsonValue

from workqueue.application.claim import Claim, Claimer
from workqueue.application.execution import ExecutionOutcome, ExecutionStatus
from workqueue.application.verdict import Verdict
from workqueue.domain import (
    Clock,
    ProgressSnapshot,
    RunEnding,
    RunOutcome,
    StoreUnavailableError,
    WorkStore,
)

__all__ = ["OutcomeWriter"]

logger = logging.getLogger("workqueue.executor")

# Backoff of an outcome write while the store is unreachable.
_FIRST_RETRY_DELAY = 0.05
_MAX_RETRY_DELAY = 1.0
# A write in a hurry (the worker stopping, its caller cancelled) should not linger:
# it tries this many times, then leaves the item to lease recovery.
_ATTEMPTS_IN_A_HURRY = 3


@dataclass(frozen=True, slots=True)
class _Write:
    """One kind of outcome write: the store's outcome, its verb, its log line once written."""

    outcome: Callable[[JsonValue | ProgressSnapshot, Verdict], RunOutcome]
    """The :class:`~workqueue.domain.RunOutcome` to write, given the progress and the verdict."""
    verb: str
    """What the write does, as in "could not complete ..."."""
    lost: str
    """The reason given when it finds the lease no longer held."""
    level: int
    line: str
    """The line logged once written, formatted with the outcome's fields."""


_WRITES = {
    # DEBUG: the table records every success, and the worker logs a count of them at
    # INFO; a line per success would cost a drain of short items a third of its pace.
    ExecutionStatus.SUCCEEDED: _Write(
        lambda progress, ended: RunOutcome.succeeded(progress, ended.result),
        "complete",
        "completing it found the lease no longer held",
        logging.DEBUG,
        "%(kind)s item %(item_id)d succeeded in %(duration).3f s (attempt %(attempt)d)",
    ),
    ExecutionStatus.FAILED: _Write(
        lambda progress, ended: RunOutcome.failed(ended.error, progress),
        "fail",
        "failing it found the lease no longer held",
        logging.WARNING,
        "%(kind)s item %(item_id)d failed (attempt %(attempt)d): %(error)s",
    ),
    ExecutionStatus.RETRIED: _Write(
        lambda progress, ended: RunOutcome(RunEnding.RETRIED, progress, ended.error, ended.run_at),
        "retry",
        "retrying it found the lease no longer held",
        logging.WARNING,
        "%(kind)s item %(item_id)d failed (attempt %(attempt)d), to run again: %(error)s",
    ),
    ExecutionStatus.SNOOZED: _Write(
        lambda progress, ended: RunOutcome(RunEnding.SNOOZED, progress, run_at=ended.run_at),
        "snooze",
        "snoozing it found the lease no longer held",
        logging.INFO,
        "%(kind)s item %(item_id)d snoozed (attempt %(attempt)d)",
    ),
    ExecutionStatus.CANCELLED: _Write(
        lambda progress, _: RunOutcome.cancelled(progress),
        "mark cancelled",
        "marking it cancelled found the lease no longer held",
        logging.WARNING,
        "%(kind)s item %(item_id)d cancelled on request (attempt %(attempt)d)",
    ),
    ExecutionStatus.RELEASED: _Write(
        lambda progress, _: RunOutcome.released(progress),
        "release",
        "releasing it found the lease no longer held",
        logging.INFO,
        "%(kind)s item %(item_id)d released on shutdown (attempt %(attempt)d)",
    ),
}


class OutcomeWriter:
    """Writes the outcome of each claimed item of one executor, one write at a time.

    :param store: where outcomes are written.
    :param clock: what backoff and durations are measured on.
    :param claimer: claims the next item along with a completion, when asked to.
    """

    __slots__ = ("_claimer", "_clock", "_hurried", "_store")

    _hurried: bool
    """Whether the write in progress gives up after a few tries: set by each write, and
    by :meth:`hurry`."""

    def __init__(self, store: WorkStore, clock: Clock, claimer: Claimer) -> None:
        self._store = store
        self._clock = clock
        self._claimer = claimer

    def hurry(self) -> None:
        """Make the write in progress, if any, give up after a few tries.

        For a worker that starts to stop while a write is being retried: the stop
        must not wait for the store for as long as the lease lasts.
        """
        self._hurried = True

    async def write(
        self,
        claim: Claim,
        verdict: Verdict,
        progress: JsonValue | ProgressSnapshot,
        *,
        hurried: bool = False,
    ) -> ExecutionOutcome:
        """Record ``verdict`` for ``claim`` with ``progress``, fenced by its lease.

        :param verdict: succeeded (complete the item, and claim the next one in the
            same store call if the verdict says so; the claimer holds it), failed
            (fail it with the verdict's error), cancelled (mark it cancelled: a cancel
            was requested) or released (put it back in queued without a stall).
            Only the first try claims along: one that failed may have claimed
            before it failed, so a retry completes only.
        :param hurried: give up after a few tries, not only when the lease would run
            out (:meth:`hurry` makes a write in progress hurried too).
        :returns: the outcome: the verdict's status, or lease lost when the write
            found the lease no longer held, or abandoned when the store stayed
            unreachable.
        """
        status = verdict.status
        kind = _WRITES[status]
        again = partial(self._store.finish, claim.item.lease, kind.outcome(progress, verdict))
        first: Callable[[], Awaitable[bool]] = again
        if verdict.claim_next:
            first = partial(self._claimer.complete_and_claim, claim, progress)
        self._hurried = hurried
        written = await self._retried(claim, kind.verb, first, again)
        if written is None:
            return self._outcome(claim, ExecutionStatus.ABANDONED, "the store was unreachable")
        if not written:
            return self.lease_lost(claim, kind.lost)
        outcome = self._outcome(claim, status, verdict.error or None)
        if logger.isEnabledFor(kind.level):
            logger.log(kind.level, kind.line, _fields(outcome), extra=claim.log_extra)
        return outcome

    def lease_lost(self, claim: Claim, reason: str) -> ExecutionOutcome:
        """The outcome of ``claim`` whose lease was lost, for ``reason``; nothing is written."""
        outcome = self._outcome(claim, ExecutionStatus.LEASE_LOST, reason)
        logger.warning(
            "%s item %d lost its lease (attempt %d): %s; recording nothing",
            outcome.kind,
            outcome.item_id,
            outcome.attempt,
            reason,
            extra=claim.log_extra,
        )
        return outcome

    async def _retried(
        self,
        claim: Claim,
        verb: str,
        first: Callable[[], Awaitable[bool]],
        again: Callable[[], Awaitable[bool]],
    ) -> bool | None:
        """``first()``, then ``again()`` while the store is unreachable, backing off.

        Returns the store's answer, or None after giving up: when the lease would
        have run out before the next try (lease recovery requeues the item then), or
        after a few tries when hurried.
        """
        write = first
        delay = _FIRST_RETRY_DELAY
        attempts = 0
        while True:
            attempts += 1
            try:
                return await write()
            except StoreUnavailableError as error:
                out_of_lease = self._clock.now() + timedelta(seconds=delay) >= claim.secured_until
                if out_of_lease or (self._hurried and attempts >= _ATTEMPTS_IN_A_HURRY):
                    logger.error(
                        "could not %s %s item %d after %d tries: %s; "
                        "lease recovery will requeue it",
                        verb,
                        claim.item.kind,
                        claim.item.id,
                        attempts,
                        error,
                        extra=claim.log_extra,
                    )
                    return None
                logger.debug(
                    "could not %s %s item %d: %s; retrying in %.2f s",
                    verb,
                    claim.item.kind,
                    claim.item.id,
                    error,
                    delay,
                    extra=claim.log_extra,
                )
            await self._clock.sleep(delay)
            delay = min(delay * 2, _MAX_RETRY_DELAY)
            write = again

    def _outcome(
        self, claim: Claim, status: ExecutionStatus, error: str | None = None
    ) -> ExecutionOutcome:
        item = claim.item
        return ExecutionOutcome(
            item_id=item.id,
            kind=item.kind,
            attempt=item.attempt,
            status=status,
            duration=(self._clock.now() - claim.claimed_at).total_seconds(),
            error=error,
        )


def _fields(outcome: ExecutionOutcome) -> dict[str, Any]:
    """The fields an outcome's log line is formatted with."""
    return {
        "kind": outcome.kind,
        "item_id": outcome.item_id,
        "attempt": outcome.attempt,
        "duration": outcome.duration,
        "error": outcome.error,
    }
