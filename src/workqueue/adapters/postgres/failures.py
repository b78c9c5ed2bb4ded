"""How the PostgreSQL adapters word a lost database and a refused statement.

The asyncpg adapter and the psycopg one classify their drivers' errors each in
its own way (``unavailable.py`` here, ``adapters/psycopg/unavailable.py``) and
report them in the same words, so a caller sees the same error, with the same
message, from either queue.
"""

from __future__ import annotations

from workqueue.domain import EnqueueFailedError, StoreUnavailableError

__all__ = ["refused", "unavailable"]


def unavailable(error: BaseException) -> StoreUnavailableError:
    """The error that reports ``error``, a lost or unreachable database."""
    return StoreUnavailableError(f"PostgreSQL is unavailable: {type(error).__name__}: {error}")


def refused(error: BaseException, sqlstate: str | None) -> EnqueueFailedError:
    """The error that reports ``error``, an enqueue's statement refused with ``sqlstate``."""
    answer = f"{type(error).__name__}: {error}"
    if sqlstate is not None:
        answer += f" (SQLSTATE {sqlstate})"
    return EnqueueFailedError(f"PostgreSQL refused the enqueue: {answer}", sqlstate=sqlstate)
