"""How a run of a claimed item ends: the one fenced write of :meth:`WorkStore.finish`.

Every way a run ends is one :class:`RunOutcome`, made by one constructor per way
(:meth:`RunOutcome.succeeded`, :meth:`RunOutcome.failed`,
:meth:`RunOutcome.retried`, :meth:`RunOutcome.snoozed`,
:meth:`RunOutcome.cancelled`, :meth:`RunOutcome.released`), and written by one
store method, fenced by the lease like every write after a claim. What the row
then holds is decided here, once, for every store: :meth:`RunOutcome.ends_as`.

A released, retried or snoozed item goes back to ``queued`` (the one way back
to the queue, which lease recovery takes too; a retried or snoozed one with the
``run_at`` it is given), unless a cancel of it was requested (then it ends
``cancelled``) or a queued item with its kind and dedup key exists (then it
ends ``failed``, superseded by that twin: docs/adr/0004). A retried item keeps
its error; the others go back without one (ADR 0031).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import JsonValue

from workqueue.domain.cancel import DEFAULT_CANCEL_REASON
from workqueue.domain.items import Failure
from workqueue.domain.progress import ProgressSnapshot
from workqueue.domain.status import WorkStatus

__all__ = [
    "RETURNING_ENDINGS",
    "RunEnding",
    "RunOutcome",
    "snoozed_out_error",
    "stalled_error",
    "superseded_error",
]


class RunEnding(StrEnum):
    """The ways a run of a claimed item ends."""

    SUCCEEDED = "succeeded"
    """The handler returned: the item succeeded."""
    FAILED = "failed"
    """The handler raised (or the item stalled out): the item failed with an error."""
    RETRIED = "retried"
    """The handler raised with attempts left: back to queued with its error, to run at run_at."""
    SNOOZED = "snoozed"
    """The handler asked to run again later: back to queued, to run at run_at; no failure."""
    CANCELLED = "cancelled"
    """A cancel was requested and the holder stopped: the item is cancelled."""
    RELEASED = "released"
    """Handed back without a stall (the worker stops, or its lease expired): back to queued."""


RETURNING_ENDINGS = frozenset({RunEnding.RELEASED, RunEnding.RETRIED, RunEnding.SNOOZED})
"""The endings that put the item back to queued (unless a cancel or a queued twin wins)."""


_FAILING_ENDINGS = frozenset({RunEnding.FAILED, RunEnding.RETRIED})


def superseded_error(twin_id: int) -> str:
    """The error of a returning item failed because queued item ``twin_id`` has its kind and key."""
    return f"superseded by queued item {twin_id} with the same dedup key"


def stalled_error(stalls: int, max_stalls: int) -> str:
    """The error of an item failed because its lease expired ``stalls`` times."""
    return f"stalled: lease expired {stalls} times (max stalls {max_stalls})"


def snoozed_out_error(snoozes: int, max_snoozes: int) -> str:
    """The error of an item failed because it asked to snooze once more than its kind allows."""
    return f"snoozed {snoozes} times (max snoozes {max_snoozes})"


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How one run ends, and the progress to write with it.

    :param ending: which way it ends.
    :param progress: the latest progress snapshot, written with the ending.
    :param error: a failure's error text (a retry's too); for a cancel, the reason
        written when none was recorded with the request. None for the other endings.
    :param run_at: when a retried or snoozed item may run again; None for the
        other endings.
    :param result: what a succeeded handler returned (JSON; None for nothing, and
        for the other endings).
    """

    ending: RunEnding
    progress: JsonValue | ProgressSnapshot
    error: str | None = None
    run_at: datetime | None = None
    result: JsonValue = None

    @classmethod
    def succeeded(
        cls, progress: JsonValue | ProgressSnapshot = None, result: JsonValue = None
    ) -> RunOutcome:
        """The handler returned ``result`` (None when it returned nothing)."""
        return cls(RunEnding.SUCCEEDED, progress, result=result)

    @classmethod
    def failed(cls, error: str, progress: JsonValue | ProgressSnapshot = None) -> RunOutcome:
        """The handler raised ``error`` (its text as stored)."""
        return cls(RunEnding.FAILED, progress, error)

    @classmethod
    def retried(
        cls, error: str, run_at: datetime, progress: JsonValue | ProgressSnapshot = None
    ) -> RunOutcome:
        """The handler raised ``error`` with attempts left: run again at ``run_at``."""
        return cls(RunEnding.RETRIED, progress, error, run_at)

    @classmethod
    def snoozed(cls, run_at: datetime, progress: JsonValue | ProgressSnapshot = None) -> RunOutcome:
        """The handler asked to run again at ``run_at``, without a failure."""
        return cls(RunEnding.SNOOZED, progress, None, run_at)

    @classmethod
    def cancelled(cls, progress: JsonValue | ProgressSnapshot = None) -> RunOutcome:
        """A cancel was requested: the item ends cancelled, with the request's reason."""
        return cls(RunEnding.CANCELLED, progress, DEFAULT_CANCEL_REASON)

    @classmethod
    def released(cls, progress: JsonValue | ProgressSnapshot = None) -> RunOutcome:
        """Back to queued without a stall."""
        return cls(RunEnding.RELEASED, progress)

    def failure(self, attempt: int, at: datetime) -> Failure | None:
        """The failure this outcome adds to the item's failures, if it is one: a
        failure or a retry of ``attempt``, at ``at``, with its error."""
        if self.error is None or self.ending not in _FAILING_ENDINGS:
            return None
        return Failure(attempt, at, self.error)

    def ends_as(
        self, *, cancel_reason: str | None, queued_twin: int | None
    ) -> tuple[WorkStatus, str | None]:
        """The status and error the item has once this outcome is written.

        :param cancel_reason: the item's recorded cancel request, if any.
        :param queued_twin: the id of a queued item with the same kind and dedup
            key, if any (only an ending back to queued asks: :data:`RETURNING_ENDINGS`).
        """
        if self.ending is RunEnding.SUCCEEDED:
            return WorkStatus.SUCCEEDED, None
        if self.ending is RunEnding.FAILED:
            return WorkStatus.FAILED, self.error
        if cancel_reason is not None:
            # Cancelled, or handed back once its cancel was requested: the operator
            # wanted it stopped (docs/adr/0018).
            return WorkStatus.CANCELLED, cancel_reason
        if self.ending is RunEnding.CANCELLED:
            return WorkStatus.CANCELLED, self.error
        if queued_twin is not None:
            return WorkStatus.FAILED, superseded_error(queued_twin)
        if self.ending is RunEnding.RETRIED:
            return WorkStatus.QUEUED, self.error
        return WorkStatus.QUEUED, None
