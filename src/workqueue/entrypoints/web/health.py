"""``/healthz``: can this process show the queue? The database answers, the schema is current.

Healthy means three things, checked in order, each needed by the next:

1. the database answers (else ``database: unreachable``);
2. ``work_items`` can be read, as the view reads it (else ``database: unreadable``,
   e.g. the role lacks ``SELECT``);
3. every migration this code ships is applied, and no unknown one (else
   ``schema: not current``, or ``schema: unknown`` when the migrations table
   cannot be read).

The reason given never holds the database URL: it is the error's type and the
database's own message, with any URL password masked.
"""

from __future__ import annotations

from dataclasses import dataclass

from workqueue.adapters.postgres import SchemaNotCurrentError
from workqueue.domain import StoreUnavailableError, WorkMonitor
from workqueue.entrypoints.worker.log_format import mask_url_passwords
from workqueue.entrypoints.worker.schema import Schema

__all__ = ["Health", "check_health", "health_document"]


@dataclass(frozen=True, slots=True)
class Health:
    """The outcome of one check; ``reason`` says what failed, None when healthy."""

    database: str
    schema: str
    reason: str | None = None

    def healthy(self) -> bool:
        """True when the database is readable and the schema current."""
        return self.reason is None


def _reason(error: Exception) -> str:
    return mask_url_passwords(" ".join(f"{type(error).__name__}: {error}".split()))


async def check_health(monitor: WorkMonitor, schema: Schema) -> Health:
    """Check the database and the schema; never raises for what it checks."""
    try:
        # The cheapest read of the table there is: the running items are few.
        await monitor.running()
    except StoreUnavailableError:
        # Its message names the host and port: say less.
        return Health("unreachable", "unknown", "the database does not answer")
    except Exception as error:
        return Health("unreadable", "unknown", f"cannot read work_items: {_reason(error)}")
    try:
        await schema.check_current()
    except StoreUnavailableError:
        return Health("unreachable", "unknown", "the database does not answer")
    except SchemaNotCurrentError as error:
        return Health("reachable", "not current", str(error))
    except Exception as error:
        return Health("reachable", "unknown", f"cannot check the migrations: {_reason(error)}")
    return Health("reachable", "current")


def health_document(health: Health) -> dict[str, str | None]:
    """The JSON body of ``/healthz``."""
    return {
        "status": "ok" if health.healthy() else "unavailable",
        "database": health.database,
        "schema": health.schema,
        "reason": health.reason,
    }
