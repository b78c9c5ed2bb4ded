"""The signup endpoint: an account, its welcome and a seat of its plan, all or nothing.

Run it with ``uvicorn --factory signups.app:create_app`` and
``SIGNUPS_DATABASE_URL`` set to a database migrated with ``workqueue migrate``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.resources import files

import asyncpg
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from signups.work import Welcome
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkQueue

_SCHEMA = files("signups").joinpath("schema.sql").read_text(encoding="utf-8")


class NoSeatLeft(Exception):
    """The plan is full: the whole signup is undone."""


async def sign_up(request: Request) -> JSONResponse:
    """``POST /signups`` with ``{"email": address, "plan": name}``.

    201 with the account's id and its welcome's work item; 409 when the plan has
    no seat left, and then neither the account nor its welcome exists.
    """
    wanted = await request.json()
    pool: asyncpg.Pool = request.app.state.pool
    try:
        async with pool.acquire() as connection, connection.transaction():
            account_id: int = await connection.fetchval(
                "INSERT INTO accounts (email, plan) VALUES ($1, $2) RETURNING id",
                wanted["email"],
                wanted["plan"],
            )
            # On the request's connection: the welcome commits with the account.
            welcome = await PostgresWorkQueue(connection, SystemClock()).enqueue(
                Welcome(account_id=account_id), dedup_key=f"welcome:{account_id}"
            )
            taken = await connection.execute(
                "UPDATE plans SET seats_left = seats_left - 1 WHERE name = $1 AND seats_left > 0",
                wanted["plan"],
            )
            if taken == "UPDATE 0":
                raise NoSeatLeft
    except NoSeatLeft:
        return JSONResponse({"error": f"plan {wanted['plan']} is full"}, status_code=409)
    return JSONResponse({"account": account_id, "welcome": welcome.id}, status_code=201)


def create_app(database_url: str | None = None) -> Starlette:
    """The application, on ``database_url`` (default ``SIGNUPS_DATABASE_URL``)."""
    url = database_url or os.environ["SIGNUPS_DATABASE_URL"]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # The application's own pool: PostgresWorkQueue needs no codecs of its own.
        app.state.pool = await asyncpg.create_pool(url, min_size=1, max_size=4)
        try:
            await app.state.pool.execute(_SCHEMA)
            yield
        finally:
            await app.state.pool.close()

    return Starlette(routes=[Route("/signups", sign_up, methods=["POST"])], lifespan=lifespan)
