"""Contract: the token cleanup deletes expired and revoked refresh tokens, nothing else."""

from __future__ import annotations

from datetime import timedelta

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.capabilities import (
    StoreCapabilities,
    skip_unless_refresh_tokens,
)
from workqueue.domain import RefreshTokenStore

__all__ = ["RefreshTokenContract"]

DAY = timedelta(days=1)


async def add_token(
    backdoor: Backdoor,
    clock: FakeClock,
    token_hash: str,
    *,
    expires_in: timedelta,
    revoked: bool = False,
) -> None:
    """Insert a token of user 7 expiring ``expires_in`` from now, revoked a day ago if asked."""
    await backdoor.insert_refresh_token(
        user_id=7,
        token_hash=token_hash,
        created_at=clock.now() - 10 * DAY,
        expires_at=clock.now() + expires_in,
        revoked_at=clock.now() - DAY if revoked else None,
    )


class RefreshTokenContract:
    """A token goes when ``expires_at < now`` or ``revoked_at`` is set.

    Skipped, with the reason, for an adapter that declares
    ``StoreCapabilities(refresh_tokens=False)``.
    """

    @pytest.fixture
    def contract_token_store(
        self, capabilities: StoreCapabilities, request: pytest.FixtureRequest
    ) -> RefreshTokenStore:
        """The adapter's ``token_store``, asked for only when it declares refresh tokens."""
        skip_unless_refresh_tokens(capabilities)
        token_store: RefreshTokenStore = request.getfixturevalue("token_store")
        return token_store

    async def test_expired_and_revoked_tokens_are_deleted_and_valid_ones_kept(
        self, contract_token_store: RefreshTokenStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await add_token(backdoor, clock, "expired", expires_in=-DAY)
        await add_token(backdoor, clock, "revoked", expires_in=DAY, revoked=True)
        await add_token(backdoor, clock, "expired-and-revoked", expires_in=-DAY, revoked=True)
        await add_token(backdoor, clock, "valid", expires_in=DAY)
        await add_token(backdoor, clock, "expires-now", expires_in=timedelta(0))

        deleted = await contract_token_store.delete_expired_and_revoked(now=clock.now(), limit=100)

        assert deleted == 3
        assert await backdoor.refresh_token_hashes() == {"valid", "expires-now"}

    async def test_a_second_cleanup_deletes_nothing(
        self, contract_token_store: RefreshTokenStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await add_token(backdoor, clock, "expired", expires_in=-DAY)
        await add_token(backdoor, clock, "valid", expires_in=DAY)
        await contract_token_store.delete_expired_and_revoked(now=clock.now(), limit=100)

        assert (
            await contract_token_store.delete_expired_and_revoked(now=clock.now(), limit=100) == 0
        )
        assert await backdoor.refresh_token_hashes() == {"valid"}

    async def test_a_cleanup_deletes_at_most_the_limit(
        self, contract_token_store: RefreshTokenStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        for n in range(5):
            await add_token(backdoor, clock, f"expired-{n}", expires_in=-DAY)

        assert await contract_token_store.delete_expired_and_revoked(now=clock.now(), limit=1) == 1
        assert await contract_token_store.delete_expired_and_revoked(now=clock.now(), limit=2) == 2
        assert await contract_token_store.delete_expired_and_revoked(now=clock.now(), limit=2) == 2
        assert await contract_token_store.delete_expired_and_revoked(now=clock.now(), limit=2) == 0
        assert await backdoor.refresh_token_hashes() == set()

    async def test_the_cleanup_judges_expiry_by_the_now_it_is_given(
        self, contract_token_store: RefreshTokenStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        await add_token(backdoor, clock, "expires-tomorrow", expires_in=DAY)

        assert await contract_token_store.delete_expired_and_revoked(now=clock.now(), limit=10) == 0
        later = clock.now() + 2 * DAY
        assert await contract_token_store.delete_expired_and_revoked(now=later, limit=10) == 1
