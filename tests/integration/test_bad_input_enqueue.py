"""Bad enqueues on PostgreSQL: a typed error before anything is written.

The properties of tests/unit/bad_input/test_bad_input_enqueue.py, on the real
queue, plus the same mistakes typed at ``workqueue enqueue``. What the queue
wrote is read back with SQL of this module's own, not through the adapter.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import Iterator
from unittest import mock

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unit.bad_input.bad_payloads import (
    UNUSABLE_DEDUP_KEYS,
    USABLE_DEDUP_KEYS,
    Parcel,
    mistyped_parcels,
    parcels_with_unstorable,
    payloads_with_numbers_json_cannot_hold,
    valid_parcels,
)
from workqueue.adapters.postgres import PostgresWorkQueue
from workqueue.adapters.testing import FakeClock
from workqueue.domain import (
    MAX_DEDUP_KEY_LENGTH,
    EnqueueRequest,
    InvalidDedupKeyError,
    InvalidPayloadError,
    WorkPayload,
)
from workqueue.entrypoints.cli import main

# Each example is a round trip to the server; the fixture's pool serves them all.
ON_POSTGRES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

_ROWS = "SELECT count(*) FROM work_items"
_ROW = "SELECT kind, payload::text AS payload, dedup_key FROM work_items WHERE id = $1"


async def rows(pool: asyncpg.Pool) -> int:
    count: int = await pool.fetchval(_ROWS)
    return count


@ON_POSTGRES
@given(bad=mistyped_parcels())
async def test_a_payload_that_fails_its_model_is_refused_naming_kind_and_field(
    migrated_pool: asyncpg.Pool, bad: tuple[Parcel, str]
) -> None:
    parcel, field = bad

    with pytest.raises(InvalidPayloadError) as raised:
        await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue(parcel)

    assert raised.value.kind == "bad_input_parcel"
    assert field in raised.value.detail
    assert await rows(migrated_pool) == 0


@ON_POSTGRES
@given(bad=parcels_with_unstorable())
async def test_text_postgresql_cannot_hold_is_refused_naming_the_field(
    migrated_pool: asyncpg.Pool, bad: tuple[Parcel, str]
) -> None:
    parcel, field = bad

    with pytest.raises(InvalidPayloadError) as raised:
        await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue(parcel)

    assert field in raised.value.detail
    assert await rows(migrated_pool) == 0


@ON_POSTGRES
@given(bad=payloads_with_numbers_json_cannot_hold())
async def test_a_number_json_cannot_hold_is_refused_before_the_callers_transaction_sees_it(
    migrated_pool: asyncpg.Pool, bad: tuple[WorkPayload, str]
) -> None:
    payload, path = bad
    async with migrated_pool.acquire() as connection, connection.transaction():
        with pytest.raises(InvalidPayloadError) as raised:
            await PostgresWorkQueue(connection, FakeClock()).enqueue(payload)
        # Nothing was sent: the caller's transaction goes on.
        assert await connection.fetchval("SELECT 1") == 1

    assert raised.value.detail.startswith(f"{path}: ")
    assert await rows(migrated_pool) == 0


async def test_ten_megabytes_of_payload_are_refused_before_anything_is_sent(
    migrated_pool: asyncpg.Pool,
) -> None:
    queue = PostgresWorkQueue(migrated_pool, FakeClock())

    with pytest.raises(InvalidPayloadError, match="more than the 1048576 its model takes"):
        await queue.enqueue(Parcel(label="x" * 10_000_000))
    with pytest.raises(InvalidPayloadError, match="more than the 1048576 its model takes"):
        await queue.enqueue_many(
            [EnqueueRequest(Parcel()), EnqueueRequest(Parcel(notes={"big": "y" * 2_000_000}))]
        )

    assert await rows(migrated_pool) == 0


@ON_POSTGRES
@given(key=UNUSABLE_DEDUP_KEYS)
async def test_an_unusable_dedup_key_is_refused_before_anything_is_written(
    migrated_pool: asyncpg.Pool, key: str
) -> None:
    with pytest.raises(InvalidDedupKeyError):
        await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue(Parcel(), dedup_key=key)

    assert await rows(migrated_pool) == 0


@ON_POSTGRES
@given(good=st.lists(valid_parcels(), min_size=1, max_size=4), bad=mistyped_parcels())
async def test_one_bad_request_leaves_its_whole_batch_unwritten(
    migrated_pool: asyncpg.Pool, good: list[Parcel], bad: tuple[Parcel, str]
) -> None:
    requests = [EnqueueRequest(parcel) for parcel in good]

    with pytest.raises(InvalidPayloadError):
        await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue_many(
            [*requests, EnqueueRequest(bad[0])]
        )

    assert await rows(migrated_pool) == 0


@ON_POSTGRES
@given(parcel=valid_parcels(), key=USABLE_DEDUP_KEYS)
async def test_a_valid_payload_and_key_are_stored_as_validated_and_read_back_whole(
    migrated_pool: asyncpg.Pool, parcel: Parcel, key: str
) -> None:
    result = await PostgresWorkQueue(migrated_pool, FakeClock()).enqueue(parcel, dedup_key=key)

    row = await migrated_pool.fetchrow(_ROW, result.id)
    await migrated_pool.execute("DELETE FROM work_items")
    assert (row["kind"], row["dedup_key"]) == ("bad_input_parcel", key)
    # Compared through the model: jsonb keeps numbers as exact decimals, so a large
    # float may read back as an int that converts to that same float.
    assert Parcel.model_validate(json.loads(row["payload"])) == parcel


@pytest.fixture
def clean_environment(database_url: str) -> Iterator[str]:
    """The CLI's environment pointing at ``database_url`` (tests/conftest.py puts the root
    logger back after every test)."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("WORKQUEUE_")}
    with mock.patch.dict(os.environ, {**kept, "WORKQUEUE_DATABASE_URL": database_url}, clear=True):
        yield database_url


async def count_rows(url: str) -> int:
    connection = await asyncpg.connect(url)
    try:
        count: int = await connection.fetchval(_ROWS)
    finally:
        await connection.close()
    return count


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["invoice_run"], "unknown kind 'invoice_run' (known kinds: token_cleanup,"),
        (
            ["work_item_retention", "--payload", '{"retention_days": "soon"}'],
            "invalid payload for kind 'work_item_retention': retention_days:",
        ),
        (
            ["work_item_retention", "--payload", '{"retention_days": 1, "extra": 2}'],
            "invalid payload for kind 'work_item_retention': extra: Extra inputs",
        ),
        (["token_cleanup", "--payload", "[1, 2]"], "invalid payload for kind 'token_cleanup'"),
        (["token_cleanup", "--dedup-key", ""], "dedup key must not be empty or blank"),
        (
            ["token_cleanup", "--dedup-key", "k" * (MAX_DEDUP_KEY_LENGTH + 1)],
            f"the limit is {MAX_DEDUP_KEY_LENGTH}",
        ),
        (["token_cleanup", "--priority", "101"], "priority must be from -100 to 100, not 101"),
        (["token_cleanup", "--priority", "-101"], "priority must be from -100 to 100, not -101"),
        (
            ["token_cleanup", "--run-at", "2030-01-01T09:00:00"],
            "run_at must have a time zone, not the naive time 2030-01-01T09:00:00",
        ),
        (
            ["token_cleanup", "--run-at", "next tuesday"],
            "--run-at 'next tuesday' is not an ISO 8601 time",
        ),
        (["token_cleanup", "--delay=-5m"], "delay must not be negative, not -300 seconds"),
        (["token_cleanup", "--delay", "soon"], "--delay 'soon': expected a duration like 30s"),
        (
            ["work_item_retention", "--payload", '{"retention_days": NaN}'],
            "retention_days: Input should be a finite number",
        ),
        (
            ["work_item_retention", "--payload", '{"retention_days": 1e400}'],
            "retention_days: Input should be a finite number",
        ),
    ],
)
def test_bad_input_at_the_command_line_is_one_line_exit_two_and_nothing_written(
    clean_environment: str, argv: list[str], message: str
) -> None:
    out, err = io.StringIO(), io.StringIO()

    status = main(["enqueue", *argv], out=out, err=err)

    assert status == 2
    assert out.getvalue() == ""
    assert err.getvalue().startswith("workqueue: ")
    assert message in err.getvalue()
    assert err.getvalue().count("\n") == 1
    assert asyncio.run(count_rows(clean_environment)) == 0


async def read_timing(url: str, item_id: int) -> tuple[int, float]:
    connection = await asyncpg.connect(url)
    try:
        row = await connection.fetchrow(
            "SELECT priority, extract(epoch FROM run_at - enqueued_at) AS wait"
            " FROM work_items WHERE id = $1",
            item_id,
        )
    finally:
        await connection.close()
    assert row is not None
    return row["priority"], float(row["wait"])


@pytest.mark.parametrize(
    ("argv", "priority", "wait"),
    [
        (["--priority", "-100"], -100, 0.0),
        (["--priority", "100", "--delay", "90"], 100, 90.0),
        (["--delay", "2h"], 0, 7200.0),
        (["--delay", "PT5M"], 0, 300.0),
    ],
)
def test_an_enqueue_at_the_command_line_takes_a_priority_and_a_delay(
    clean_environment: str, argv: list[str], priority: int, wait: float
) -> None:
    out, err = io.StringIO(), io.StringIO()

    status = main(["enqueue", "token_cleanup", *argv], out=out, err=err)

    assert (status, err.getvalue()) == (0, "")
    item_id = int(out.getvalue().split()[2])
    assert asyncio.run(read_timing(clean_environment, item_id)) == (priority, wait)


def test_an_enqueue_at_the_command_line_takes_a_run_at_with_its_time_zone(
    clean_environment: str,
) -> None:
    out, err = io.StringIO(), io.StringIO()

    status = main(
        ["enqueue", "token_cleanup", "--run-at", "2099-12-24T18:00:00+01:00"], out=out, err=err
    )

    assert (status, err.getvalue()) == (0, "")
    item_id = int(out.getvalue().split()[2])

    async def run_at() -> object:
        connection = await asyncpg.connect(clean_environment)
        try:
            return await connection.fetchval(
                "SELECT run_at = '2099-12-24T17:00:00Z' FROM work_items WHERE id = $1", item_id
            )
        finally:
            await connection.close()

    assert asyncio.run(run_at()) is True
