"""A batch without dedup keys takes its own statement: it notifies, and keeps request order."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from workqueue.adapters.postgres import CHANNEL, PostgresWorkQueue
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob
from workqueue.domain import EnqueueRequest

pytestmark = pytest.mark.postgres

PATIENCE = 10.0


async def test_a_keyless_batch_notifies_once_per_kind_at_commit(
    migrated_pool: asyncpg.Pool, database_url: str
) -> None:
    heard: list[str] = []
    both = asyncio.Event()

    def hear(connection: object, pid: int, channel: str, kind: str) -> None:
        heard.append(kind)
        if len(heard) == 2:
            both.set()

    listener = await asyncpg.connect(database_url)
    try:
        await listener.add_listener(CHANNEL, hear)
        queue = PostgresWorkQueue(migrated_pool, FakeClock())

        await queue.enqueue_many(
            [EnqueueRequest(AlphaJob(number=n)) for n in range(3)]
            + [EnqueueRequest(BetaJob(label="b"))]
        )
        await asyncio.wait_for(both.wait(), PATIENCE)
        # Anything more would have come in the same commit's delivery.
        await asyncio.sleep(0.2)
    finally:
        await listener.close()

    assert sorted(heard) == ["contract_alpha", "contract_beta"]


async def test_a_keyless_batch_answers_each_request_with_its_own_item(
    migrated_pool: asyncpg.Pool,
) -> None:
    queue = PostgresWorkQueue(migrated_pool, FakeClock())
    payloads = [AlphaJob(number=n) if n % 2 else BetaJob(label=str(n)) for n in range(50)]

    results = await queue.enqueue_many([EnqueueRequest(payload) for payload in payloads])

    assert all(result.created for result in results)
    rows = await migrated_pool.fetch(
        "SELECT id, kind, payload FROM work_items WHERE id = ANY ($1::bigint[])",
        [result.id for result in results],
    )
    by_id = {row["id"]: (row["kind"], row["payload"]) for row in rows}
    assert [by_id[result.id] for result in results] == [
        (payload.kind_name(), payload.to_json()) for payload in payloads
    ]
