"""A worker connected as a least-privilege role works, and that role can do no more.

The role is the one the README documents: DML on the queue's two tables,
USAGE on the identity sequence enqueue draws ids from, SELECT on the migration
bookkeeping for the start-up check, the cron schedules' turns, and what claims read
and write of the kinds' controls and slots (docs/adr/0034, 0035). It owns nothing
and may create nothing; the migrations are applied by another role (here, the
test's superuser).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from fault_fleet import FAULT_SETTINGS, FleetWorker, eventually

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

GRANTS = """
GRANT SELECT, INSERT, UPDATE, DELETE ON work_items TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON refresh_tokens TO {role};
GRANT USAGE ON SEQUENCE work_items_id_seq TO {role};
GRANT SELECT ON workqueue_migrations TO {role};
GRANT SELECT, INSERT, UPDATE ON work_schedules TO {role};
GRANT SELECT ON work_kind_controls, work_kind_pauses TO {role};
GRANT SELECT, UPDATE ON work_kind_slots TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON work_activity, work_depth TO {role};
"""


# Passwords in both places a URL can carry one. The test server trusts local
# connections, so they are never checked, but they must never be shown either.
SECRET_IN_USERINFO = "pw-in-userinfo-never-shown"
SECRET_IN_QUERY = "pw-in-query-never-shown"


def as_role(url: str, role: str, *, with_passwords: bool = False) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    if not with_passwords:
        return urlunsplit((parts.scheme, f"{role}@{host}", parts.path, parts.query, ""))
    query = "&".join(filter(None, [parts.query, f"password={SECRET_IN_QUERY}"]))
    return urlunsplit((parts.scheme, f"{role}:{SECRET_IN_USERINFO}@{host}", parts.path, query, ""))


@pytest.fixture
async def worker_role(database_url: str, postgres_admin_url: str) -> AsyncIterator[str]:
    """A login role with the documented grants on ``database_url``; dropped afterwards."""
    role = f"workqueue_worker_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(postgres_admin_url)
    await admin.execute(f"CREATE ROLE {role} LOGIN")
    owner = await asyncpg.connect(database_url)
    try:
        await owner.execute(GRANTS.format(role=role))
        yield role
    finally:
        await owner.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", role
        )
        await owner.execute(f"DROP OWNED BY {role}")
        await owner.close()
        await admin.execute(f"DROP ROLE {role}")
        await admin.close()


async def test_a_worker_connected_as_the_least_privilege_role_runs_both_periodic_kinds(
    database_url: str, worker_role: str, tmp_path: Path
) -> None:
    owner = await asyncpg.connect(database_url)
    long_ago = datetime.now(UTC) - timedelta(days=90)
    await owner.execute(
        "INSERT INTO refresh_tokens (user_id, token_hash, created_at, expires_at)"
        " VALUES (1, 'expired', $1, $1)",
        long_ago,
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("WORKQUEUE_")},
        **FAULT_SETTINGS,
        "WORKQUEUE_DATABASE_URL": as_role(database_url, worker_role, with_passwords=True),
        # One kind on a calendar: its turns are written to work_schedules.
        "WORKQUEUE_RETENTION_CRON": "@yearly",
    }
    worker = FleetWorker(
        "least-privilege",
        [sys.executable, "-m", "workqueue.entrypoints.cli", "worker"],
        env,
        tmp_path / "worker.log",
    )
    try:

        async def both_succeeded() -> bool:
            rows = await owner.fetch("SELECT kind, status FROM work_items ORDER BY kind")
            return [(row["kind"], row["status"]) for row in rows] == [
                ("token_cleanup", "succeeded"),
                ("work_item_retention", "succeeded"),
            ]

        await eventually(
            both_succeeded, within=30, what="both periodic kinds done", context=worker.output
        )
        tokens_left = await owner.fetchval("SELECT count(*) FROM refresh_tokens")
        status = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "workqueue.entrypoints.cli", "status", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        schedules = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "workqueue.entrypoints.cli", "schedules", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        worker.send(signal.SIGTERM)
        assert await worker.exit_status() == 0, worker.output()
        charted = await owner.fetchval("SELECT sum(succeeded) FROM work_activity")
        sampled = await owner.fetchval("SELECT count(*) FROM work_depth WHERE kind = ''")
    finally:
        worker.close()
        await owner.close()

    assert tokens_left == 0
    assert "ERROR" not in worker.output()
    assert "WARNING" not in worker.output()
    assert (charted, sampled >= 1) == (2, True)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["counts"]["token_cleanup"]["succeeded"] == 1
    assert schedules.returncode == 0, schedules.stderr
    retention = json.loads(schedules.stdout)["schedules"][1]
    assert (retention["kind"], retention["cron"]) == ("work_item_retention", "@yearly")
    assert retention["last_fire_at"] is not None
    for shown in (worker.output(), status.stdout, status.stderr):
        assert SECRET_IN_USERINFO not in shown
        assert SECRET_IN_QUERY not in shown
    assert "password=***" in status.stdout


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE TABLE intruder (id int)",
        "TRUNCATE work_items",
        "DROP TABLE work_items",
        "ALTER TABLE work_items ADD COLUMN extra int",
        "DELETE FROM workqueue_migrations",
        "CREATE SCHEMA elsewhere",
    ],
)
async def test_the_least_privilege_role_can_change_no_schema_and_write_nothing_else(
    database_url: str, worker_role: str, statement: str
) -> None:
    connection = await asyncpg.connect(as_role(database_url, worker_role))
    try:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await connection.execute(statement)
    finally:
        await connection.close()
