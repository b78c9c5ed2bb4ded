"""The RefreshTokenStore port: what TokenCleanup needs."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

__all__ = ["RefreshTokenStore"]


class RefreshTokenStore(Protocol):
    async def delete_expired_and_revoked(self, *, now: datetime, limit: int) -> int:
        """Delete at most ``limit`` tokens that expired before ``now`` or were revoked.

        Returns how many were deleted; callers loop until fewer than ``limit`` are.
        """
        ...
