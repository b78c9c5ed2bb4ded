"""The PostgreSQL back door, which the contract kit now ships: kept importable from here."""

from __future__ import annotations

from workqueue.adapters.testing.postgres import PostgresBackdoor

__all__ = ["PostgresBackdoor"]
