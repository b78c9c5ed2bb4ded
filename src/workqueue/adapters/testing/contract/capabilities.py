"""What an adapter under the kit declares it lacks: the contract for it is skipped, visibly."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

__all__ = ["StoreCapabilities", "skip_unless_refresh_tokens"]


@dataclass(frozen=True, slots=True)
class StoreCapabilities:
    """The parts of the contract an adapter takes part in; the ``capabilities`` fixture gives it.

    - ``refresh_tokens``: the adapter has a :class:`~workqueue.domain.RefreshTokenStore`
      (and its back door reads and writes refresh tokens). An application that
      runs without the ``token_cleanup`` kind has none: declare
      ``StoreCapabilities(refresh_tokens=False)`` and every refresh-token test is
      reported as skipped, with the reason, instead of run. Its fixtures need
      not provide ``token_store`` then.

    Everything else in the contract applies to every store: there is no way to
    opt out of a semantic of the queue.
    """

    refresh_tokens: bool = True


def skip_unless_refresh_tokens(capabilities: StoreCapabilities) -> None:
    """Skip the calling test, saying why, when the adapter declares no refresh tokens.

    :raises pytest.skip.Exception: when ``capabilities.refresh_tokens`` is False.
    """
    if not capabilities.refresh_tokens:
        pytest.skip(
            "the adapter declares no refresh tokens "
            "(StoreCapabilities(refresh_tokens=False)): the refresh-token contract does not apply"
        )
