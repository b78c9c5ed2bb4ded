"""The in-memory back door, which the contract kit now ships: kept importable from here."""

from __future__ import annotations

from workqueue.adapters.testing.contract import MemoryBackdoor

__all__ = ["MemoryBackdoor"]
