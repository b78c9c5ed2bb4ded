"""The worker's composition: settings, container, handlers, database and run loop.

Import what you need from the modules (``workqueue.entrypoints.worker.container``,
``workqueue.entrypoints.worker.settings``, ...); this package face imports nothing, so
importing one piece never drags in pgserver or the database driver.
"""

from __future__ import annotations

__all__: list[str] = []
