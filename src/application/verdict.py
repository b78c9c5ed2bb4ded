"""What a claimed item comes to once its handler is done and its lease still held.

One rule, in one place: a handler that returned has succeeded; one that raised has
failed, with its error as the item's; a handler that was cancelled, or that raised
while the worker stops (most likely turning the worker's cancellation into an
error of its own), hands its item back: released, without a stall. A handler
cancelled by something other than this worker fails its item.
"""

from __future__ import annotations

import asyncio
import logging

from application.claim import Claim
from application.execution import ExecutionStatus, error_text

__all__ = ["SELF_CANCELLED", "verdict"]

logger = logging.getLogger("workqueue.executor")

SELF_CANCELLED = "CancelledError: the handler was cancelled, not by this worker"
"""The error of an item whose handler was cancelled by something other than this worker."""


def verdict(
    claim: Claim, handler: asyncio.Task[None], *, stopping: bool, max_error_length: int
) -> tuple[ExecutionStatus, str]:
    """The status to record for ``claim`` whose ``handler`` is done, and the error to store
    with it ("" for none).

    :param stopping: whether the worker is stopping (or its caller cancelled): a
        cancelled or failed handler then releases its item instead of failing it.
    :param max_error_length: the longest error text stored.
    """
    if handler.cancelled():
        if stopping:
            return ExecutionStatus.RELEASED, ""
        return ExecutionStatus.FAILED, SELF_CANCELLED
    error = handler.exception()
    if error is None:
        return ExecutionStatus.SUCCEEDED, ""
    if stopping:
        return ExecutionStatus.RELEASED, ""
    if logger.isEnabledFor(logging.DEBUG):
        item = claim.item
        logger.debug("traceback of %s item %d", item.kind, item.id, exc_info=error)
    return ExecutionStatus.FAILED, error_text(error, max_error_length)
