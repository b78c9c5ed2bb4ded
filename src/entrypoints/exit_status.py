"""The CLI's exit statuses, and which errors end a command with which.

- 0: done.
- 1: a runtime failure: the database is unreachable or not migrated, the
  embedded PostgreSQL cannot start, the kind registry is incomplete, the web
  view cannot listen on its address. Also ``cancel`` and ``requeue`` when they
  found nothing to do (an unknown id, a finished item, one not failed or cancelled).
- 2: bad usage or input: unknown command or option, bad settings, an unknown
  kind, a payload or dedup key that does not validate, an application (``--app``)
  that cannot be imported or declares no kinds. Nothing was written.
"""

from __future__ import annotations

from enum import IntEnum

from adapters.postgres import MigrationError, SchemaNotCurrentError
from domain import (
    InvalidDedupKeyError,
    InvalidPayloadError,
    KindRegistryError,
    StoreUnavailableError,
    UnknownKindError,
)
from entrypoints.web.listen import ListenError
from entrypoints.worker.app import AppLoadError
from entrypoints.worker.database import DatabaseUnreachableError
from entrypoints.worker.embedded import EmbeddedDatabaseError
from entrypoints.worker.settings import SettingsError

__all__ = ["ExitStatus", "exit_status_for"]


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
)
_FAILURES: tuple[type[Exception], ...] = (
    DatabaseUnreachableError,
    EmbeddedDatabaseError,
    KindRegistryError,
    ListenError,
    MigrationError,
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
