"""The application's own kind of work: welcoming a new account."""

from __future__ import annotations

from enum import StrEnum

import asyncpg

from workqueue.application import KindRegistry
from workqueue.domain import Clock, WorkContext, WorkHandler, WorkPayload


class SignupKind(StrEnum):
    WELCOME = "signups.welcome"


class Welcome(WorkPayload):
    """Welcome a new account (here: stamp ``welcomed_at``, where a mail would go out)."""

    kind = SignupKind.WELCOME

    account_id: int


class WelcomeHandler(WorkHandler[Welcome]):
    def __init__(self, pool: asyncpg.Pool, clock: Clock) -> None:
        self._pool = pool
        self._clock = clock

    async def handle(self, payload: Welcome, ctx: WorkContext) -> None:
        await self._pool.execute(
            "UPDATE accounts SET welcomed_at = $2 WHERE id = $1 AND welcomed_at IS NULL",
            payload.account_id,
            self._clock.now(),
        )


def signup_registry(pool: asyncpg.Pool, clock: Clock) -> KindRegistry[SignupKind]:
    """What a worker for the signups runs."""
    return KindRegistry(SignupKind, [Welcome], [WelcomeHandler(pool, clock)])
