"""A database the commands cannot use: one line naming the cause, exit 1, nothing written.

The worker's own start-up failures run as real processes in tests/e2e; these run
the other commands in-process against the real server: a port nobody listens on,
a database that does not exist, and a database without the migrations.
"""

from __future__ import annotations

import asyncio
import io
import os
from unittest import mock
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from workqueue.entrypoints.cli import main

SECRET = "never-shown-pw"
COMMANDS = [["status"], ["status", "--json"], ["enqueue", "token_cleanup"], ["migrate"]]


def run(command: list[str], database_url: str) -> tuple[int, str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith("WORKQUEUE_")}
    env = {**kept, "WORKQUEUE_DATABASE_URL": database_url, "WORKQUEUE_CONNECT_ATTEMPTS": "1"}
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, env, clear=True):
        status = main(command, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def with_password(url: str, database: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or "postgres"
    return urlunsplit((parts.scheme, f"{user}:{SECRET}@{host}", f"/{database}", parts.query, ""))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_port_nobody_listens_on_is_one_line_naming_the_database_without_its_password(
    command: list[str],
) -> None:
    status, out, err = run(command, f"postgresql://app:{SECRET}@127.0.0.1:1/queue")

    assert status == 1
    assert out == ""
    assert err.startswith("workqueue: cannot reach the database postgresql://app:***@127.0.0.1:1/")
    assert err.count("\n") == 1
    assert SECRET not in err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_database_that_does_not_exist_is_one_line_naming_it(
    postgres_admin_url: str, command: list[str]
) -> None:
    status, _, err = run(command, with_password(postgres_admin_url, "no_such_queue_db"))

    assert status == 1
    assert err.startswith("workqueue: cannot reach the database ")
    assert 'database "no_such_queue_db" does not exist' in err
    assert err.count("\n") == 1
    assert SECRET not in err


async def tables(url: str) -> list[str]:
    connection = await asyncpg.connect(url)
    try:
        rows = await connection.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
    finally:
        await connection.close()
    return [row["tablename"] for row in rows]


@pytest.mark.parametrize("command", [["status"], ["enqueue", "token_cleanup"]])
def test_a_database_without_the_migrations_says_what_to_do_and_creates_nothing(
    empty_database_url: str, command: list[str]
) -> None:
    status, out, err = run(command, empty_database_url)

    assert status == 1
    assert out == ""
    assert err.startswith("workqueue: database is not migrated: run `workqueue migrate` (missing: ")
    assert err.count("\n") == 1
    assert asyncio.run(tables(empty_database_url)) == []
