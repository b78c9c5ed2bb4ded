"""The composition roots: the ``workqueue`` command line and the worker it runs.

``workqueue.entrypoints.cli`` is the console script; ``workqueue.entrypoints.worker`` holds the
container, the settings, the handlers and the embedded PostgreSQL. Nothing
outside this package builds production objects.
"""

from __future__ import annotations

__all__: list[str] = []
