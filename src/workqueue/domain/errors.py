"""The domain's errors, and :class:`WorkQueueError`, the base of every error workqueue raises.

``except WorkQueueError`` catches anything the queue raises on purpose. The
errors of the model and the ports are here; the others live beside the code
that raises them and derive from :class:`WorkQueueError` all the same:

- ``workqueue.adapters.postgres``: :class:`~workqueue.adapters.postgres.MigrationError` (a migration
  file is malformed or failed), :class:`~workqueue.adapters.postgres.SchemaNotCurrentError`
  (the database lacks migrations, or has some this code does not know).
- ``workqueue.entrypoints.worker``: :class:`~workqueue.entrypoints.worker.settings.SettingsError`
  (a ``WORKQUEUE_*`` setting cannot be used),
  :class:`~workqueue.entrypoints.worker.app.AppLoadError` (``--app`` names no application
  with kinds),
  :class:`~workqueue.entrypoints.worker.database.DatabaseUnreachableError` (no answer within
  the connect attempts), :class:`~workqueue.entrypoints.worker.embedded.EmbeddedDatabaseError`
  (the embedded PostgreSQL cannot start here).
- ``workqueue.entrypoints.web``: :class:`~workqueue.entrypoints.web.listen.ListenError` (the admin
  view cannot listen on its host and port),
  :class:`~workqueue.entrypoints.web.reads.BadQueryError` (a query parameter of the admin
  view's API cannot be used; answered with a 400).
- ``workqueue.entrypoints.django``: :class:`~workqueue.entrypoints.django.failures.TaskRaised`
  (a Django task raised; the failure names its class and carries its traceback).
- ``workqueue.entrypoints.extras``: :class:`~workqueue.entrypoints.extras.MissingExtraError`
  (a part of workqueue was used whose extra is not installed; names the extra).
"""

from __future__ import annotations

__all__ = [
    "EnqueueFailedError",
    "InsideTransactionError",
    "InvalidCancelReasonError",
    "InvalidCapError",
    "InvalidDedupKeyError",
    "InvalidPauseError",
    "InvalidPayloadError",
    "InvalidPolicyError",
    "InvalidPriorityError",
    "InvalidRunAtError",
    "InvalidScheduleError",
    "KindRegistryError",
    "PayloadDefinitionError",
    "StoreUnavailableError",
    "UnknownKindError",
    "WorkQueueError",
]


class WorkQueueError(Exception):
    """Base class of every error workqueue raises on purpose, in any layer."""


class PayloadDefinitionError(WorkQueueError, TypeError):
    """A WorkPayload subclass was defined without a valid ``kind`` class attribute."""


class UnknownKindError(WorkQueueError, LookupError):
    """A kind name that no payload model (or no handler) is registered for."""

    def __init__(self, kind: str, known: list[str] | None = None) -> None:
        self.kind = kind
        self.known = sorted(known or [])
        hint = f" (known kinds: {', '.join(self.known)})" if self.known else ""
        super().__init__(f"unknown kind {kind!r}{hint}")


class InvalidPayloadError(WorkQueueError, ValueError):
    """A payload does not validate against its kind's model.

    Raised before anything is written (enqueue) or when a claimed row's payload
    no longer validates (the executor then fails the item with this message).
    """

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(f"invalid payload for kind {kind!r}: {detail}")


class InvalidDedupKeyError(WorkQueueError, ValueError):
    """A dedup key that is empty, too long, or not text."""


class InvalidPriorityError(WorkQueueError, ValueError):
    """A priority that is not an integer from -100 to 100 (``domain/timing.py``)."""


class InvalidPolicyError(WorkQueueError, ValueError):
    """A kind's policy that cannot hold: attempts below 1, a backoff out of range
    (``domain/policy.py``)."""


class InvalidScheduleError(WorkQueueError, ValueError):
    """A periodic kind's schedule that cannot hold: an interval that is not positive,
    a cron expression or time zone that cannot be read, both or neither given."""


class InvalidCancelReasonError(WorkQueueError, ValueError):
    """A cancel reason no store can hold (a NUL character, a lone surrogate) or longer
    than :data:`~workqueue.domain.MAX_CANCEL_REASON_LENGTH` (``domain/cancel.py``)."""


class InvalidCapError(WorkQueueError, ValueError):
    """A cap no store can hold: a blank kind or one with a NUL character or a lone
    surrogate, or a count that is not a whole number from 1 to
    :data:`~workqueue.domain.MAX_CAP` (``domain/caps.py``)."""


class InvalidPauseError(WorkQueueError, ValueError):
    """A pause no store can hold: a blank kind, a NUL character or a lone surrogate, or a
    reason longer than :data:`~workqueue.domain.MAX_PAUSE_REASON_LENGTH` (``domain/pauses.py``)."""


class InvalidRunAtError(WorkQueueError, ValueError):
    """A ``run_at`` without a time zone, a negative ``delay``, or both (``domain/timing.py``)."""


class KindRegistryError(WorkQueueError):
    """The registry cannot be built: a kind lacks, or has two of, a payload or a handler."""


class StoreUnavailableError(WorkQueueError):
    """The store could not be reached (connection lost, server restarting).

    Transient: callers retry at their next tick; nothing was written, or the write
    was fenced and is safe to repeat.
    """


class EnqueueFailedError(WorkQueueError):
    """The database refused an enqueue's statement, or the enqueue gave up on a race.

    Nothing was enqueued by the call. On a connection of the caller's, the
    caller's transaction is left as the database left it: after a refused
    statement PostgreSQL has aborted it, and the caller decides what follows (roll
    back, or roll back to a savepoint taken before the enqueue).

    :ivar sqlstate: the SQLSTATE the database answered with (``40001`` for a
        serialization failure under REPEATABLE READ or SERIALIZABLE, ``40P01`` for a
        deadlock, ``55P03`` for a lock timeout, ``25P02`` for a transaction already
        aborted), or None when the enqueue itself gave up.
    """

    def __init__(self, message: str, *, sqlstate: str | None = None) -> None:
        self.sqlstate = sqlstate
        super().__init__(message)


class InsideTransactionError(WorkQueueError):
    """An operation that needs a transaction of its own was called inside the caller's.

    ``enqueue_if_due`` on a connection that is inside a transaction: its due check
    relies on a READ COMMITTED transaction that ends right after it (docs/adr/0014).
    """
