"""How many rows a maintenance handler deletes per statement, unless told otherwise."""

from __future__ import annotations

__all__ = ["DEFAULT_DELETE_BATCH_SIZE"]

DEFAULT_DELETE_BATCH_SIZE = 1000
"""Rows per statement: enough to keep up, few enough that each statement is short.

The default of ``WORKQUEUE_RETENTION_BATCH_SIZE`` and
``WORKQUEUE_TOKEN_CLEANUP_BATCH_SIZE``.
"""
