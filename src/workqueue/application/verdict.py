"""What a claimed item comes to once its handler is done and its lease still held.

One rule, in one place: a handler that returned has succeeded; one that raised has
failed, with its error as the item's; a handler that was cancelled, or that raised
while the worker stops (most likely turning the worker's cancellation into an
error of its own), hands its item back: released, without a stall. A handler
cancelled by something other than this worker fails its item. An item whose
cancel was requested (a heartbeat said so) is cancelled, however its handler ended.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from workqueue.application.claim import Claim
from workqueue.application.execution import ExecutionStatus, error_text

__all__ = [
    "CANCEL",
    "RELEASE",
    "SELF_CANCELLED",
    "SUCCESS",
    "SUCCESS_CLAIMING_NEXT",
    "Verdict",
    "verdict",
]

logger = logging.getLogger("workqueue.executor")

SELF_CANCELLED = "CancelledError: the handler was cancelled, not by this worker"
"""The error of an item whose handler was cancelled by something other than this worker."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What to record for a claimed item.

    :param status: succeeded, failed, cancelled or released.
    :param error: the error stored with a failure ("" for the other statuses).
    :param claim_next: with a success, claim the next item in the same store call.
    """

    status: ExecutionStatus
    error: str = ""
    claim_next: bool = False


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
    handler: asyncio.Task[None],
    *,
    stopping: bool,
    claim_next: bool,
    max_error_length: int,
) -> Verdict:
    """What to record for ``claim``, whose ``handler`` is done.

    :param stopping: whether the worker is stopping (or its caller cancelled): a
        cancelled or failed handler then releases its item instead of failing it.
    :param claim_next: whether a success claims the next item with it.
    :param max_error_length: the longest error text stored.
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
        return SUCCESS_CLAIMING_NEXT if claim_next else SUCCESS
    if stopping:
        return RELEASE
    if logger.isEnabledFor(logging.DEBUG):
        item = claim.item
        logger.debug("traceback of %s item %d", item.kind, item.id, exc_info=error)
    return Verdict(ExecutionStatus.FAILED, error_text(error, max_error_length))
