"""A batch's payloads travel as one JSON array, and land as separate enqueues would store them.

``enqueue_many`` checks a whole batch at once and sends its kinds and payloads as one
JSON text each, expanded by the statement. Each row must still hold exactly the
jsonb a single enqueue of that payload stores, and a bad batch must still be
refused with the error separate checks in request order would raise first.
"""

from __future__ import annotations

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

from unit.bad_input.bad_payloads import USABLE_DEDUP_KEYS, Parcel, valid_parcels
from workqueue.adapters.postgres import PostgresWorkQueue
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob
from workqueue.domain import (
    EnqueueRequest,
    InvalidDedupKeyError,
    InvalidPayloadError,
    WorkPayload,
    checked_payload_json,
)

pytestmark = pytest.mark.postgres

ON_POSTGRES = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

# True for a row that holds the jsonb a single enqueue stores: the payload's own
# checked JSON text, cast by itself.
_STORED_ALONE = """
    SELECT kind = $2 AND payload = $3::text::jsonb AND status = 'queued' AND attempt = 0
    FROM work_items WHERE id = $1
"""


async def stored_as_alone(pool: asyncpg.Pool, item_id: int, payload: WorkPayload) -> bool:
    alone = to_json(checked_payload_json(payload)).decode()
    held: bool = await pool.fetchval(_STORED_ALONE, item_id, payload.kind_name(), alone)
    return held


async def rows(pool: asyncpg.Pool) -> int:
    count: int = await pool.fetchval("SELECT count(*) FROM work_items")
    return count


@ON_POSTGRES
@given(payloads=st.lists(valid_parcels(), min_size=1, max_size=5))
async def test_a_keyless_batch_stores_each_payload_as_a_single_enqueue_would(
    migrated_pool: asyncpg.Pool, payloads: list[Parcel]
) -> None:
    batch: list[WorkPayload] = [AlphaJob(number=1), *payloads, BetaJob(label='"quoted" \\ é 😀')]

    results = await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue_many(
        [EnqueueRequest(payload) for payload in batch]
    )

    assert [result.id for result in results] == sorted(result.id for result in results)
    for result, payload in zip(results, batch, strict=True):
        assert await stored_as_alone(migrated_pool, result.id, payload)


@ON_POSTGRES
@given(payloads=st.lists(valid_parcels(), min_size=1, max_size=4), key=USABLE_DEDUP_KEYS)
async def test_a_batch_with_dedup_keys_stores_each_payload_as_a_single_enqueue_would(
    migrated_pool: asyncpg.Pool, payloads: list[Parcel], key: str
) -> None:
    # The first request with the key creates; the second is absorbed by it.
    requests = [
        EnqueueRequest(payloads[0], dedup_key=key),
        *(EnqueueRequest(payload) for payload in payloads[1:]),
        EnqueueRequest(AlphaJob(number=2), dedup_key=key),
        EnqueueRequest(payloads[-1], dedup_key=key),
    ]

    await migrated_pool.execute("DELETE FROM work_items")  # what earlier examples left

    results = await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue_many(requests)

    assert results[-1].id == results[0].id
    assert results[-1].absorbed
    assert await rows(migrated_pool) == len(requests) - 1
    for result, request in zip(results[:-1], requests[:-1], strict=True):
        assert await stored_as_alone(migrated_pool, result.id, request.payload)


@pytest.mark.parametrize(
    "bad_payload",
    [
        Parcel(label="nul \x00"),
        Parcel(notes={"\udcff": "a lone surrogate key"}),
        Parcel.model_construct(count="many"),  # type: ignore[arg-type]
    ],
)
async def test_a_bad_payload_leaves_its_whole_batch_unwritten(
    migrated_pool: asyncpg.Pool, bad_payload: Parcel
) -> None:
    requests = [EnqueueRequest(AlphaJob(number=n)) for n in range(3)]

    with pytest.raises(InvalidPayloadError) as refused:
        await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue_many(
            [*requests, EnqueueRequest(bad_payload), *requests]
        )

    with pytest.raises(InvalidPayloadError) as alone:
        checked_payload_json(bad_payload)
    assert str(refused.value) == str(alone.value)
    assert await rows(migrated_pool) == 0


async def test_a_bad_payload_before_a_bad_dedup_key_is_the_one_reported(
    migrated_pool: asyncpg.Pool,
) -> None:
    with pytest.raises(InvalidPayloadError) as refused:
        await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue_many(
            [
                EnqueueRequest(AlphaJob(number=1), dedup_key="fine"),
                EnqueueRequest(Parcel(label="nul \x00")),
                EnqueueRequest(AlphaJob(number=2), dedup_key=" "),
            ]
        )

    assert refused.value.detail == "label: text holds a NUL character"
    assert await rows(migrated_pool) == 0


async def test_a_bad_dedup_key_before_a_bad_payload_is_the_one_reported(
    migrated_pool: asyncpg.Pool,
) -> None:
    with pytest.raises(InvalidDedupKeyError, match=r"^dedup key must not be empty or blank$"):
        await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue_many(
            [
                EnqueueRequest(AlphaJob(number=1), dedup_key=" "),
                EnqueueRequest(Parcel(label="nul \x00")),
            ]
        )

    assert await rows(migrated_pool) == 0
