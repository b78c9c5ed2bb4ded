"""The WorkHandler implementations: the only place in src/ that defines one."""

from __future__ import annotations

from workqueue.entrypoints.worker.handlers.batches import DEFAULT_DELETE_BATCH_SIZE
from workqueue.entrypoints.worker.handlers.token_cleanup import TokenCleanupHandler
from workqueue.entrypoints.worker.handlers.work_item_retention import WorkItemRetentionHandler

__all__ = ["DEFAULT_DELETE_BATCH_SIZE", "TokenCleanupHandler", "WorkItemRetentionHandler"]
