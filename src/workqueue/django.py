"""workqueue for Django's Tasks framework: the backend, and the application a worker serves.

Install the ``django`` extra (``pip install "workqueue-pg[django]"``)::

    # settings.py
    TASKS = {"default": {"BACKEND": "workqueue.django.WorkQueueBackend"}}

and run the tasks with ``workqueue worker --app workqueue.django`` (Django set up
from ``DJANGO_SETTINGS_MODULE``). Each name is loaded on first use: reading
``app`` sets Django up (see :mod:`workqueue.entrypoints.django`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workqueue.entrypoints.django.backend import WorkQueueBackend
    from workqueue.entrypoints.worker.app import WorkQueueApp

    app: WorkQueueApp

__all__ = ["WorkQueueBackend", "app"]


def __getattr__(name: str) -> Any:
    if name == "WorkQueueBackend":
        from workqueue.entrypoints.django.backend import WorkQueueBackend

        return WorkQueueBackend
    if name == "app":
        from workqueue.entrypoints.django.worker import worker_app

        return worker_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
