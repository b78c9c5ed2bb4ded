"""What one execution of a claimed item is tuned by, and what it came to.

:class:`ExecutorSettings` holds the executor's knobs, :class:`ExecutionOutcome`
reports how one claimed item ended, and :func:`error_text` turns a handler's
exception into the bounded text stored in ``work_items.error``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from workqueue.application.context import DEFAULT_MAX_PROGRESS_BYTES
from workqueue.domain import spelled_out

__all__ = [
    "DEFAULT_EXECUTOR_SETTINGS",
    "TRUNCATION_MARKER",
    "ExecutionOutcome",
    "ExecutionStatus",
    "ExecutorSettings",
    "bound_error",
    "error_text",
    "seconds_text",
]

TRUNCATION_MARKER = "... [truncated]"
"""Ends an error text that was cut to ``max_error_length``, so a reader knows it was."""


@dataclass(frozen=True, slots=True)
class ExecutorSettings:
    """How a :class:`~workqueue.application.executor.WorkExecutor` keeps leases and bounds what it
    writes.

    The defaults here are the queue's defaults, defined nowhere else
    (:data:`DEFAULT_EXECUTOR_SETTINGS`).

    :param heartbeat_interval: how often a running item's lease is renewed.
    :param lease_duration: how long each claim and heartbeat secures the item for.
        Lease recovery requeues an item whose lease ran out, so it must outlast
        several heartbeat intervals.
    :param max_error_length: the longest error text written to an item, in characters.
    :param max_progress_bytes: the largest progress snapshot a handler may report, in
        bytes of UTF-8 JSON.
    :raises ValueError: if a value is not positive, or the heartbeat interval is not
        shorter than the lease. The message names the setting.
    :raises TypeError: if a duration is not a :class:`~datetime.timedelta`.
    """

    heartbeat_interval: timedelta = timedelta(seconds=2)
    lease_duration: timedelta = timedelta(seconds=60)
    max_error_length: int = 4000
    max_progress_bytes: int = DEFAULT_MAX_PROGRESS_BYTES

    def __post_init__(self) -> None:
        _check_settings(self)


def _check_settings(settings: ExecutorSettings) -> None:
    """Refuse settings that cannot work, naming the first setting at fault.

    :raises ValueError: as :class:`ExecutorSettings` says.
    :raises TypeError: as :class:`ExecutorSettings` says.
    """
    for name in ("heartbeat_interval", "lease_duration"):
        duration = getattr(settings, name)
        if not isinstance(duration, timedelta):
            raise TypeError(f"{name} must be a timedelta, not {duration!r}")
        if not duration > timedelta(0):
            raise ValueError(f"{name} must be positive, not {seconds_text(duration)}")
    for name in ("max_error_length", "max_progress_bytes"):
        count: int = getattr(settings, name)
        if not count > 0:
            raise ValueError(f"{name} must be positive, not {count!r}")
    if settings.heartbeat_interval >= settings.lease_duration:
        # A lease that runs out before the next heartbeat would be lost between beats.
        raise ValueError(
            f"heartbeat_interval ({seconds_text(settings.heartbeat_interval)}) must be "
            f"shorter than lease_duration ({seconds_text(settings.lease_duration)})"
        )


def seconds_text(duration: timedelta) -> str:
    """``duration`` as a reader of a message wants it: ``"2 s"``, ``"0.5 s"``."""
    return f"{duration.total_seconds():g} s"


DEFAULT_EXECUTOR_SETTINGS = ExecutorSettings()
"""The settings of an executor given none: a heartbeat every 2 s keeping a 60 s lease,
errors of at most 4000 characters, progress of at most 64 KiB of JSON."""


class ExecutionStatus(StrEnum):
    """How the executor left a claimed item.

    - ``succeeded``: the handler returned; the item was completed.
    - ``failed``: the handler raised, or the payload did not decode; the item was failed.
    - ``retried``: the handler raised with attempts left in its kind's policy; the
      item went back to queued, to run again after the backoff (docs/adr/0031).
    - ``snoozed``: the handler asked to run again later (:class:`~workqueue.domain.Snooze`);
      the item went back to queued without a failure.
    - ``lease_lost``: the lease was taken or ran out; this worker wrote nothing more.
    - ``released``: the worker stopped; the item went back to queued without a stall.
    - ``cancelled``: a cancel of the item was requested; its handler was cancelled
      and the item marked cancelled (docs/adr/0018).
    - ``abandoned``: the store stayed unreachable until the lease would have run out;
      nothing was recorded and lease recovery will requeue the item.
    """

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    RETRIED = "retried"
    SNOOZED = "snoozed"
    LEASE_LOST = "lease_lost"
    RELEASED = "released"
    CANCELLED = "cancelled"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class ExecutionOutcome:
    """What one :meth:`~workqueue.application.executor.WorkExecutor.run_next` did with its item.

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
