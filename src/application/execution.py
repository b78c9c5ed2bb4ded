"""What one execution of a claimed item is tuned by, and what it came to.

:class:`ExecutorSettings` holds the executor's knobs, :class:`ExecutionOutcome`
reports how one claimed item ended, and :func:`error_text` turns a handler's
exception into the bounded text stored in ``work_items.error``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from domain import spelled_out

__all__ = [
    "DEFAULT_EXECUTOR_SETTINGS",
    "TRUNCATION_MARKER",
    "ExecutionOutcome",
    "ExecutionStatus",
    "ExecutorSettings",
    "bound_error",
    "error_text",
]

TRUNCATION_MARKER = "... [truncated]"
"""Ends an error text that was cut to ``max_error_length``, so a reader knows it was."""


@dataclass(frozen=True, slots=True)
class ExecutorSettings:
    """How a :class:`~application.executor.WorkExecutor` keeps leases and bounds what it writes.

    :param heartbeat_interval: seconds between heartbeats while a handler runs.
    :param lease_duration: seconds each claim and heartbeat secures the item for.
        Lease recovery requeues an item whose lease ran out, so it must outlast
        several heartbeat intervals.
    :param max_error_length: the longest error text written to an item, in characters.
    :param max_progress_bytes: the largest progress snapshot a handler may report, in
        bytes of UTF-8 JSON.
    :raises ValueError: if a value is not positive, or the heartbeat interval is not
        shorter than the lease. The message names the setting.
    """

    heartbeat_interval: float = 2.0
    lease_duration: float = 60.0
    max_error_length: int = 4000
    max_progress_bytes: int = 65536

    def __post_init__(self) -> None:
        for name in ("heartbeat_interval", "lease_duration", "max_error_length"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{name} must be positive, not {value!r}")
        if not self.max_progress_bytes > 0:
            raise ValueError(
                f"max_progress_bytes must be positive, not {self.max_progress_bytes!r}"
            )
        if self.heartbeat_interval >= self.lease_duration:
            # A lease that runs out before the next heartbeat would be lost between beats.
            raise ValueError(
                f"heartbeat_interval ({self.heartbeat_interval} s) must be shorter than "
                f"lease_duration ({self.lease_duration} s)"
            )


DEFAULT_EXECUTOR_SETTINGS = ExecutorSettings()
"""The settings of an executor given none: a heartbeat every 2 s keeping a 60 s lease."""


class ExecutionStatus(StrEnum):
    """How the executor left a claimed item.

    - ``succeeded``: the handler returned; the item was completed.
    - ``failed``: the handler raised, or the payload did not decode; the item was failed.
    - ``lease_lost``: the lease was taken or ran out; this worker wrote nothing more.
    - ``released``: the worker stopped; the item went back to queued without a stall.
    - ``abandoned``: the store stayed unreachable until the lease would have run out;
      nothing was recorded and lease recovery will requeue the item.
    """

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    LEASE_LOST = "lease_lost"
    RELEASED = "released"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class ExecutionOutcome:
    """What one :meth:`~application.executor.WorkExecutor.run_next` did with its item.

    ``duration`` runs from the claim to the recorded outcome, in seconds of the
    executor's clock. ``error`` is the text written to a failed item (or the reason
    for a lost lease or an abandoned item), else None.
    """

    item_id: int
    kind: str
    attempt: int
    status: ExecutionStatus
    duration: float
    error: str | None = None


def bound_error(text: str, limit: int) -> str:
    """``text`` as a store can hold it, cut to at most ``limit`` characters.

    What no store can hold (a NUL character, a lone surrogate) is spelled out as an
    escape first; a text that was cut ends in :data:`TRUNCATION_MARKER`.
    """
    text = spelled_out(text)
    if len(text) <= limit:
        return text
    if limit <= len(TRUNCATION_MARKER):
        return text[:limit]
    return text[: limit - len(TRUNCATION_MARKER)] + TRUNCATION_MARKER


def error_text(error: BaseException, limit: int) -> str:
    """The error stored for a handler that raised ``error``: ``"<Type>: <message>"``, bounded.

    An exception without a message is stored as its type name alone.
    """
    message = str(error)
    name = type(error).__name__
    return bound_error(f"{name}: {message}" if message else name, limit)
