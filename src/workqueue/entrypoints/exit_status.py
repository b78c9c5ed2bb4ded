"""The CLI's exit statuses, and which errors end a command with which.

- 0: done.
- 1: a runtime failure: the database is unreachable or not migrated, the
  embedded PostgreSQL cannot start, the kind registry is incomplete, the web
  view cannot listen on its address, an extra the command needs is not
  installed. Also ``cancel`` and ``requeue`` when they found nothing to do
  (an unknown id, a finished item, one not failed or cancelled).
- 2: bad usage or input: unknown command or option, bad settings, an unknown
  kind, a payload, dedup key, priority, run_at or delay, a cancel or pause reason
  or a cap that does not validate, an application (``--app``) that cannot be
  imported or declares no kinds. Nothing was written.
- 128 + the signal's number: interrupted, as a shell reports it; 130 for Ctrl-C
  (SIGINT), also 143 for a worker's start-up that SIGTERM cut short.
"""

from __future__ import annotations

import signal
from enum import IntEnum

from workqueue.adapters.postgres import MigrationError, SchemaNotCurrentError
from workqueue.domain import (
    InvalidCancelReasonError,
    InvalidCapError,
    InvalidDedupKeyError,
    InvalidPauseError,
    InvalidPayloadError,
    InvalidPolicyError,
    InvalidPriorityError,
    InvalidRunAtError,
    InvalidScheduleError,
    KindRegistryError,
    StoreUnavailableError,
    UnknownKindError,
)
from workqueue.entrypoints.extras import MissingExtraError
from workqueue.entrypoints.web.listen import ListenError
from workqueue.entrypoints.worker.app import AppLoadError
from workqueue.entrypoints.worker.database import DatabaseUnreachableError
from workqueue.entrypoints.worker.embedded import EmbeddedDatabaseError
from workqueue.entrypoints.worker.settings import SettingsError

__all__ = ["ExitStatus", "exit_status_for", "interrupted_status"]


class ExitStatus(IntEnum):
    OK = 0
    FAILURE = 1
    USAGE = 2


_USAGE_ERRORS: tuple[type[Exception], ...] = (
    AppLoadError,
    SettingsError,
    UnknownKindError,
    InvalidPayloadError,
    InvalidDedupKeyError,
    InvalidPolicyError,
    InvalidScheduleError,
    InvalidPriorityError,
    InvalidRunAtError,
    InvalidCancelReasonError,
    InvalidPauseError,
    InvalidCapError,
)
_FAILURES: tuple[type[Exception], ...] = (
    DatabaseUnreachableError,
    EmbeddedDatabaseError,
    KindRegistryError,
    ListenError,
    MigrationError,
    MissingExtraError,
    SchemaNotCurrentError,
    StoreUnavailableError,
)


def exit_status_for(error: BaseException) -> ExitStatus | None:
    """The status a command ends with when ``error`` stops it; None for an unexpected error."""
    if isinstance(error, _USAGE_ERRORS):
        return ExitStatus.USAGE
    if isinstance(error, _FAILURES):
        return ExitStatus.FAILURE
    return None


def interrupted_status(signum: signal.Signals) -> int:
    """The status a command ends with when ``signum`` interrupted it: 128 + its number."""
    return 128 + signum.value
