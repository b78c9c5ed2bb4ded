"""The async endpoint (examples/starlette_signups): an account and its welcome, all or nothing.

A real Starlette application served by uvicorn on 127.0.0.1, called over HTTP by
httpx, on a real PostgreSQL: the endpoint inserts the account and enqueues its
welcome with PostgresWorkQueue on the request's own connection, in one
transaction, and takes a seat of the plan last. A WorkExecutor over the
application's registry runs the committed welcome, as its worker would.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest_asyncio
import uvicorn
from signups.app import create_app
from signups.work import SignupKind, signup_registry

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkNotifications, PostgresWorkStore
from workqueue.application import ExecutionStatus, WorkExecutor

PATIENCE = 10.0


@pytest_asyncio.fixture
async def signups(database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The application served on a free port of 127.0.0.1, and a client for it."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(database_url), log_level="warning", lifespan="on")
    )
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        for _ in range(int(PATIENCE / 0.01)):
            if server.started:
                break
            await asyncio.sleep(0.01)
        assert server.started, "uvicorn did not start"
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            yield client
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, PATIENCE)
        listening.close()


async def plans(database_url: str, **seats: int) -> None:
    connection = await asyncpg.connect(database_url)
    try:
        await connection.executemany(
            "INSERT INTO plans (name, seats_left) VALUES ($1, $2)", list(seats.items())
        )
    finally:
        await connection.close()


async def rows(database_url: str, query: str) -> list[asyncpg.Record]:
    connection = await asyncpg.connect(database_url)
    try:
        return await connection.fetch(query)
    finally:
        await connection.close()


async def test_an_account_and_its_welcome_commit_together_and_a_worker_runs_it(
    signups: httpx.AsyncClient, database_url: str, migrated_pool: asyncpg.Pool
) -> None:
    await plans(database_url, team=5)
    async with PostgresWorkNotifications(database_url) as notifications:
        await asyncio.wait_for(notifications.listening(), PATIENCE)
        woken = asyncio.ensure_future(notifications.wait_for_work({SignupKind.WELCOME}))
        await asyncio.sleep(0)

        response = await signups.post("/signups", json={"email": "ada@example.com", "plan": "team"})

        assert response.status_code == 201
        await asyncio.wait_for(woken, PATIENCE)
    body = response.json()
    items = await rows(database_url, "SELECT id, kind, status, dedup_key FROM work_items")
    assert [tuple(item) for item in items] == [
        (body["welcome"], "signups.welcome", "queued", f"welcome:{body['account']}")
    ]

    clock = SystemClock()
    store = PostgresWorkStore(migrated_pool, clock)
    executor = WorkExecutor(store, signup_registry(migrated_pool, clock), clock, worker_id="w")
    outcome = await executor.run_next()
    await store.close()

    assert outcome is not None
    assert (outcome.item_id, outcome.status) == (body["welcome"], ExecutionStatus.SUCCEEDED)
    accounts = await rows(
        database_url, "SELECT id, welcomed_at IS NOT NULL AS welcomed FROM accounts"
    )
    assert [tuple(account) for account in accounts] == [(body["account"], True)]


async def test_a_full_plan_rolls_back_the_account_and_its_welcome(
    signups: httpx.AsyncClient, database_url: str
) -> None:
    await plans(database_url, solo=1)

    first = await signups.post("/signups", json={"email": "ada@example.com", "plan": "solo"})
    second = await signups.post("/signups", json={"email": "bob@example.com", "plan": "solo"})

    assert first.status_code == 201
    assert (second.status_code, second.json()) == (409, {"error": "plan solo is full"})
    accounts = await rows(database_url, "SELECT email FROM accounts")
    assert [account["email"] for account in accounts] == ["ada@example.com"]
    items = await rows(database_url, "SELECT id FROM work_items")
    assert [item["id"] for item in items] == [first.json()["welcome"]]
