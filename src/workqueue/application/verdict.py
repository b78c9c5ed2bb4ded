"""What a claimed item comes to once its handler is done and its lease still held.

One rule, in one place: a handler that returned has succeeded, with what it
returned as the item's result (a result that is not JSON, or too large, fails
the item instead); one that raised has failed, with its error as the item's, or,
with attempts left in its kind's retry policy, goes back to queued to run again
after the policy's backoff (retried); one that raised
:class:`~workqueue.domain.Snooze` goes back to queued to run again after its
delay, without a failure, unless it has snoozed as often as its kind allows (then
it fails). A handler that was cancelled, or that raised while the worker stops
(most likely turning the worker's cancellation into an error of its own), hands
its item back: released, without a stall. A handler cancelled by something other
than this worker fails its item. An item whose cancel was requested (a heartbeat
said so) is cancelled, however its handler ended.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from pydantic import JsonValue

from workqueue.application.claim import Claim
from workqueue.application.context import checked_json
from workqueue.application.execution import ExecutionStatus, error_text
from workqueue.domain import Snooze, snoozed_out_error

__all__ = [
    "CANCEL",
    "RELEASE",
    "SELF_CANCELLED",
    "SUCCESS",
    "SUCCESS_CLAIMING_NEXT",
    "Verdict",
    "handler_error",
    "verdict",
]

logger = logging.getLogger("workqueue.executor")

SELF_CANCELLED = "CancelledError: the handler was cancelled, not by this worker"
"""The error of an item whose handler was cancelled by something other than this worker."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to record for a claimed item.

    :param status: succeeded, failed, retried, snoozed, cancelled or released.
    :param error: the error stored with a failure or a retry ("" for the other statuses).
    :param claim_next: with a success, claim the next item in the same store call.
    :param run_at: when a retried or snoozed item runs again (None for the others).
    :param result: what a succeeded handler returned (None for nothing).
    """

    status: ExecutionStatus
    error: str = ""
    claim_next: bool = False
    run_at: datetime | None = None
    result: JsonValue = None


SUCCESS = Verdict(ExecutionStatus.SUCCEEDED)
"""Complete the item."""

SUCCESS_CLAIMING_NEXT = Verdict(ExecutionStatus.SUCCEEDED, claim_next=True)
"""Complete the item and claim the next one with it."""

RELEASE = Verdict(ExecutionStatus.RELEASED)
"""Put the item back in queued without a stall."""

CANCEL = Verdict(ExecutionStatus.CANCELLED)
"""Mark the item cancelled: a cancel of it was requested."""


def verdict(
    claim: Claim,
    handler: asyncio.Task[JsonValue],
    *,
    stopping: bool,
    claim_next: bool,
    max_error_length: int,
    max_result_bytes: int,
    now: datetime,
    draw: float,
) -> Verdict:
    """What to record for ``claim``, whose ``handler`` is done.

    :param stopping: whether the worker is stopping (or its caller cancelled): a
        cancelled or failed handler then releases its item instead of failing it.
    :param claim_next: whether a success claims the next item with it (one with a
        result is written on its own: the claim along with a success carries none).
    :param max_error_length: the longest error text stored.
    :param max_result_bytes: the largest result stored, in bytes of UTF-8 JSON.
    :param now: the time a retry's or a snooze's delay runs from.
    :param draw: a random number from 0 to 1, for the jitter of a retry's backoff.
    """
    if claim.cancel_requested:
        # However the handler ended (cancelled, or swallowing the cancellation and
        # returning or raising), a cancelled item's outcome is cancelled. An error it
        # raised is observed all the same, or asyncio would report it as never
        # retrieved once the task is collected.
        if not handler.cancelled():
            handler.exception()
        return CANCEL
    if handler.cancelled():
        if stopping:
            return RELEASE
        return Verdict(ExecutionStatus.FAILED, SELF_CANCELLED)
    error = handler.exception()
    if error is None:
        return _success(handler.result(), claim_next, max_result_bytes)
    if stopping:
        return RELEASE
    item = claim.item
    if isinstance(error, Snooze):
        snoozes = item.snoozes + 1
        if snoozes > claim.policy.max_snoozes:
            return Verdict(
                ExecutionStatus.FAILED, snoozed_out_error(snoozes, claim.policy.max_snoozes)
            )
        return Verdict(ExecutionStatus.SNOOZED, run_at=now + error.delay)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("traceback of %s item %d", item.kind, item.id, exc_info=error)
    text = error_text(error, max_error_length)
    run_at = claim.policy.retry_at(len(item.failures) + 1, now, draw)
    if run_at is None:
        return Verdict(ExecutionStatus.FAILED, text)
    return Verdict(ExecutionStatus.RETRIED, text, run_at=run_at)


def handler_error(handler: asyncio.Task[JsonValue]) -> BaseException | None:
    """The exception ``handler`` failed with, for its attempt's span: None while it runs,
    when it was cancelled or returned, and for a :class:`~workqueue.domain.Snooze`,
    which is no failure."""
    if not handler.done() or handler.cancelled():
        return None
    error = handler.exception()
    return None if isinstance(error, Snooze) else error


def _success(result: JsonValue, claim_next: bool, max_result_bytes: int) -> Verdict:
    """A returned handler's verdict: its result, if it can be stored, else a failure."""
    if result is None:
        return SUCCESS_CLAIMING_NEXT if claim_next else SUCCESS
    try:
        checked_json(result, max_result_bytes, "result")
    except ValueError as error:
        return Verdict(ExecutionStatus.FAILED, f"the handler succeeded, but {error}")
    return Verdict(ExecutionStatus.SUCCEEDED, result=result)
