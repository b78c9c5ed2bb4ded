"""The worker's side: a :class:`~workqueue.entrypoints.worker.app.WorkQueueApp` of the task queues.

``workqueue worker --app workqueue.django`` (with ``DJANGO_SETTINGS_MODULE`` set,
and ``WORKQUEUE_DATABASE_URL`` naming the database the tasks are enqueued in)
sets Django up and serves one kind per queue of every ``WorkQueueBackend`` in
``TASKS`` (``--kinds django.emails`` serves that queue alone). A queue named by
two backends is served with the first one's policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from workqueue.entrypoints.django.backend import WorkQueueBackend
from workqueue.entrypoints.django.kinds import payload_model
from workqueue.entrypoints.worker.app import AppLoadError, WorkerResources, WorkQueueApp
from workqueue.entrypoints.worker.handlers.django_tasks import TaskHandler, task_handler

__all__ = ["app_for", "worker_app"]


def _handler(queue_name: str, backend: WorkQueueBackend, resources: WorkerResources) -> TaskHandler:
    return task_handler(
        queue_name, backend.policy(queue_name), backend.alias, resources.settings.worker_id
    )


def app_for(backends: Sequence[Any]) -> WorkQueueApp:
    """The application serving every queue of the ``WorkQueueBackend`` among ``backends``.

    :raises AppLoadError: if none of them is a ``WorkQueueBackend``, or one names no queue.
    """
    served: dict[str, WorkQueueBackend] = {}
    for backend in backends:
        if not isinstance(backend, WorkQueueBackend):
            continue
        if not backend.queues:
            raise AppLoadError(
                f"the TASKS backend {backend.alias!r} names no QUEUES: "
                "a worker serves the queues it is told of"
            )
        for queue_name in sorted(backend.queues):
            served.setdefault(queue_name, backend)
    if not served:
        raise AppLoadError("no TASKS backend is a workqueue.django.WorkQueueBackend")
    payloads = [payload_model(queue_name) for queue_name in served]
    return WorkQueueApp(
        kinds=[payload.kind for payload in payloads],
        payloads=payloads,
        handlers=[partial(_handler, queue_name, backend) for queue_name, backend in served.items()],
        token_cleanup=False,
    )


def worker_app() -> WorkQueueApp:  # pragma: no mutate block
    """Set Django up (``DJANGO_SETTINGS_MODULE``) and serve its workqueue task backends.

    :raises AppLoadError: if Django cannot be set up, or has no such backend.
    """
    import django
    from django.core.exceptions import ImproperlyConfigured

    from workqueue.entrypoints.django.tasks_api import task_backends

    try:
        django.setup()
        backends = task_backends.all()
    except ImproperlyConfigured as error:
        raise AppLoadError(f"cannot set Django up: {error}") from None
    return app_for(backends)
