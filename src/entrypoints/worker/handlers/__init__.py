"""The WorkHandler implementations: the only place in src/ that defines one."""

from __future__ import annotations

from entrypoints.worker.handlers.batches import DEFAULT_DELETE_BATCH_SIZE
from entrypoints.worker.handlers.token_cleanup import TokenCleanupHandler
from entrypoints.worker.handlers.work_item_retention import WorkItemRetentionHandler

__all__ = ["DEFAULT_DELETE_BATCH_SIZE", "TokenCleanupHandler", "WorkItemRetentionHandler"]
