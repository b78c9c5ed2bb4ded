"""Which extra of the distribution brings which third-party package, and the error that says so.

The base install holds what producing and the ``workqueue`` command need. The
embedded server, uvloop, the sync producer and the admin view each come with an
extra (ADR 0017, 0025); whatever finds its extra missing says in one line which
one to install, instead of a traceback.
"""

from __future__ import annotations

from workqueue.domain import WorkQueueError

__all__ = ["DISTRIBUTION", "MissingExtraError", "extra_for", "missing_extra"]

DISTRIBUTION = "workqueue-pg"
"""What this project is installed as (``pip install workqueue-pg``); it imports as ``workqueue``."""

_EXTRA_OF_PACKAGE = {
    "pgserver": "embedded",
    "uvloop": "uvloop",
    "psycopg": "psycopg",
    "psycopg_pool": "psycopg",
    "starlette": "web",
    "jinja2": "web",
    "uvicorn": "web",
    "prometheus_client": "web",
}


class MissingExtraError(WorkQueueError, ImportError):
    """A part of workqueue was used whose extra is not installed; the line names the extra."""


def extra_for(package: str | None) -> str | None:
    """The extra that installs ``package`` (a module name; its top-level package counts)."""
    if package is None:
        return None
    return _EXTRA_OF_PACKAGE.get(package.partition(".")[0])


def missing_extra(error: ModuleNotFoundError, needed_by: str) -> MissingExtraError | None:
    """The one-line error for ``error`` when an extra of ours would fix it, else None.

    :param needed_by: what could not be used, as the line should name it
        (``"workqueue web"``, ``"PsycopgWorkQueue"``).
    """
    extra = extra_for(error.name)
    if extra is None:
        return None
    return MissingExtraError(
        f"{needed_by} needs the '{extra}' extra ({error.name} is not installed): "
        f"pip install '{DISTRIBUTION}[{extra}]'"
    )
