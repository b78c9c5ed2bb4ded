"""The rules of an item's columns hold in the database, whoever writes the row.

A status outside the five, a negative attempt, stall or snooze count, a priority
out of -100..100 or failures that are not a JSON array are refused by PostgreSQL
itself (``check_violation``), as an application's own SQL or a person at psql
would meet them. Since migration 0015 the rules are domains of the columns
(docs/adr/0042): upgrading a database that holds items keeps every item as it was.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
import pytest

from workqueue.adapters.postgres import available_migrations, migrate
from workqueue.adapters.postgres import migrations as migrations_module

_INSERT = """
INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at, priority, failures)
VALUES ('noop', '{}', $1, $2, $3, $4, $5, $6::text::jsonb)
RETURNING id
"""
_READ = """
SELECT status::text, attempt::int, stalls::int, snoozes::int, priority::int, failures::text
FROM work_items ORDER BY id
"""
_NOW = datetime(2026, 12, 8, tzinfo=UTC)
_AS_INSERTED = {
    "status": "queued",
    "attempt": "0",
    "stalls": "0",
    "snoozes": "0",
    "priority": "0",
    "failures": "[]",
}


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(database_url)
    try:
        yield connection
    finally:
        await connection.close()


@pytest.mark.parametrize(
    ("column", "bad_value"),
    [
        ("status", "'paused'"),
        ("attempt", "-1"),
        ("stalls", "-1"),
        ("snoozes", "-1"),
        ("priority", "101"),
        ("priority", "-101"),
        ("failures", "'{}'::jsonb"),
    ],
)
async def test_a_value_breaking_a_columns_rule_is_refused_by_the_database(
    connection: asyncpg.Connection, column: str, bad_value: str
) -> None:
    item = await connection.fetchval(_INSERT, "queued", 0, 0, _NOW, 0, "[]")

    with pytest.raises(asyncpg.CheckViolationError):
        await connection.execute(
            f"UPDATE work_items SET {column} = {bad_value} WHERE id = $1", item
        )

    left = await connection.fetchval(f"SELECT {column}::text FROM work_items WHERE id = $1", item)
    assert left == _AS_INSERTED[column]


async def test_an_item_inserted_with_a_status_outside_the_five_is_refused(
    connection: asyncpg.Connection,
) -> None:
    with pytest.raises(asyncpg.CheckViolationError):
        await connection.fetchval(_INSERT, "paused", 0, 0, _NOW, 0, "[]")

    assert await connection.fetchval("SELECT count(*) FROM work_items") == 0


async def test_every_value_the_rules_allow_is_written(connection: asyncpg.Connection) -> None:
    for status in ("queued", "running", "succeeded", "failed", "cancelled"):
        await connection.fetchval(_INSERT, status, 0, 0, _NOW, 0, "[]")
    await connection.fetchval(_INSERT, "failed", 3, 2, _NOW, 100, json.dumps([{"attempt": 1}]))
    await connection.fetchval(_INSERT, "queued", 0, 0, _NOW, -100, "[]")

    assert await connection.fetchval("SELECT count(*) FROM work_items") == 7


async def test_upgrading_a_database_that_holds_items_keeps_every_item_as_it_was(
    empty_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = available_migrations()
    before = tuple(m for m in every if m.name < "0015_checks_as_domains")
    assert len(before) == len(every) - 1, "this test upgrades from the migration before 0015"
    monkeypatch.setattr(migrations_module, "available_migrations", lambda: before)
    await migrate(empty_database_url)
    connection = await asyncpg.connect(empty_database_url)
    try:
        await connection.fetchval(_INSERT, "queued", 0, 0, _NOW, 7, "[]")
        await connection.fetchval(
            _INSERT, "failed", 2, 1, _NOW, -3, json.dumps([{"attempt": 1, "error": "boom"}])
        )
        await connection.execute("UPDATE work_items SET snoozes = 4 WHERE status = 'failed'")
        items_before = [tuple(row) for row in await connection.fetch(_READ)]

        monkeypatch.setattr(migrations_module, "available_migrations", lambda: every)
        assert await migrate(empty_database_url) == ["0015_checks_as_domains"]

        assert [tuple(row) for row in await connection.fetch(_READ)] == items_before
        with pytest.raises(asyncpg.CheckViolationError):
            await connection.execute("UPDATE work_items SET priority = 101")
    finally:
        await connection.close()
