"""Migrations apply in order, each once, also when two migrators start together."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from workqueue.adapters.postgres import (
    MigrationError,
    SchemaNotCurrentError,
    available_migrations,
    check_schema_current,
    migrate,
    pending,
)
from workqueue.adapters.postgres import migrations as migrations_module
from workqueue.adapters.postgres.migrations import Migration

ALL_NAMES = [migration.name for migration in available_migrations()]


async def applied_rows(url: str) -> list[tuple[int, str]]:
    connection = await asyncpg.connect(url)
    try:
        rows = await connection.fetch(
            "SELECT version, name FROM workqueue_migrations ORDER BY version"
        )
    finally:
        await connection.close()
    return [(row["version"], row["name"]) for row in rows]


async def table_exists(url: str, table: str) -> bool:
    connection = await asyncpg.connect(url)
    try:
        return bool(await connection.fetchval("SELECT to_regclass($1) IS NOT NULL", table))
    finally:
        await connection.close()


def test_the_migrations_shipped_are_numbered_from_one_without_gaps() -> None:
    versions = [migration.version for migration in available_migrations()]

    assert versions == list(range(1, len(versions) + 1))
    assert ALL_NAMES[:2] == ["0001_work_items", "0002_refresh_tokens"]


async def test_migrating_an_empty_database_applies_every_migration_in_order(
    empty_database_url: str,
) -> None:
    applied = await migrate(empty_database_url)

    assert applied == ALL_NAMES
    assert await applied_rows(empty_database_url) == [
        (migration.version, migration.name) for migration in available_migrations()
    ]
    assert await table_exists(empty_database_url, "work_items")
    assert await table_exists(empty_database_url, "refresh_tokens")


async def test_migrating_again_applies_nothing(empty_database_url: str) -> None:
    await migrate(empty_database_url)

    assert await migrate(empty_database_url) == []
    assert len(await applied_rows(empty_database_url)) == len(ALL_NAMES)


async def test_pending_lists_what_a_database_lacks_until_it_is_migrated(
    empty_database_url: str,
) -> None:
    assert await pending(empty_database_url) == ALL_NAMES

    await migrate(empty_database_url)

    assert await pending(empty_database_url) == []


async def test_two_migrators_starting_together_apply_each_migration_once(
    empty_database_url: str,
) -> None:
    first, second = await asyncio.gather(migrate(empty_database_url), migrate(empty_database_url))

    # One of them took the lock first and did everything; the other found it done.
    assert sorted([first, second], key=len) == [[], ALL_NAMES]
    assert [name for _, name in await applied_rows(empty_database_url)] == ALL_NAMES


async def test_migrate_accepts_a_pool_and_a_connection(empty_database_url: str) -> None:
    pool = await asyncpg.create_pool(empty_database_url, min_size=1, max_size=1)
    try:
        assert await migrate(pool) == ALL_NAMES
    finally:
        await pool.close()
    connection = await asyncpg.connect(empty_database_url)
    try:
        assert await migrate(connection) == []
    finally:
        await connection.close()


async def test_a_failing_migration_names_itself_and_applies_nothing(
    empty_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = Migration(
        version=len(ALL_NAMES) + 1, name="9999_broken", sql="ALTER TABLE no_such_table ADD x int"
    )
    monkeypatch.setattr(
        migrations_module, "available_migrations", lambda: (*available_migrations(), broken)
    )

    with pytest.raises(MigrationError, match="9999_broken"):
        await migrate(empty_database_url)

    # All pending migrations run in one transaction: the good ones rolled back too.
    assert not await table_exists(empty_database_url, "work_items")
    assert not await table_exists(empty_database_url, "workqueue_migrations")


async def test_a_database_without_the_migrations_fails_the_schema_check_clearly(
    empty_database_url: str,
) -> None:
    with pytest.raises(SchemaNotCurrentError) as raised:
        await check_schema_current(empty_database_url)

    assert raised.value.missing == ALL_NAMES
    assert str(raised.value).startswith(
        "database is not migrated: run `workqueue migrate` (missing: 0001_work_items, "
    )


async def test_a_migrated_database_passes_the_schema_check(database_url: str) -> None:
    await check_schema_current(database_url)


async def test_a_database_migrated_by_newer_code_fails_the_schema_check(
    database_url: str,
) -> None:
    connection = await asyncpg.connect(database_url)
    try:
        await connection.execute(
            "INSERT INTO workqueue_migrations (version, name) VALUES (9999, '9999_from_the_future')"
        )
    finally:
        await connection.close()

    with pytest.raises(SchemaNotCurrentError) as raised:
        await check_schema_current(database_url)

    assert raised.value.unknown == ["9999_from_the_future"]
    assert raised.value.missing == []
