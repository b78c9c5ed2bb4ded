"""InMemoryRefreshTokenStore: the token cleanup's view of the in-memory state."""

from __future__ import annotations

from datetime import datetime

from workqueue.adapters.memory.state import InMemoryState

__all__ = ["InMemoryRefreshTokenStore"]


class InMemoryRefreshTokenStore:
    """A :class:`~workqueue.domain.RefreshTokenStore` over an :class:`InMemoryState`.

    A token is *expired* when ``expires_at < now`` (at the instant it expires it is
    still kept) and *revoked* when ``revoked_at`` is set, whenever that was. Tokens
    are deleted lowest id first. It needs no clock: the caller says what ``now`` is.

    :param state: the shared in-memory rows; tests add tokens to
        ``state.refresh_tokens`` directly.
    """

    def __init__(self, state: InMemoryState) -> None:
        self._state = state

    async def delete_expired_and_revoked(self, *, now: datetime, limit: int) -> int:
        """Delete at most ``limit`` tokens that expired before ``now`` or were revoked.

        :returns: how many were deleted.
        :raises ValueError: if ``limit`` is below 1.
        :raises StoreUnavailableError: if the state is marked unavailable.
        """
        if limit < 1:
            raise ValueError(f"token cleanup limit must be at least 1, not {limit}")
        self._state.check_available()
        doomed = [
            token.id
            for token in sorted(self._state.refresh_tokens.values(), key=lambda token: token.id)
            if token.revoked_at is not None or token.expires_at < now
        ][:limit]
        for token_id in doomed:
            del self._state.refresh_tokens[token_id]
        return len(doomed)
