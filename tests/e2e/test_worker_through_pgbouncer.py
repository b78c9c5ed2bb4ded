"""Workers through a real PgBouncer in transaction mode: claim, heartbeat, recover, schedule.

The worker's database URL is the pgbouncer's (``WORKQUEUE_TRANSACTION_POOLING``):
no statement cache, and LISTEN only on ``WORKQUEUE_LISTEN_DATABASE_URL``, a
direct connection, or none at all (then it polls).
"""

from __future__ import annotations

import asyncio
import signal
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from e2e_support import Spawner, cli_argv, eventually, run_cli, script_argv, work_items, worker_env

from workqueue.adapters.testing.postgres.pgbouncer import PgBouncer

pytestmark = pytest.mark.e2e


def pooled_env(pgbouncer: PgBouncer, database_url: str, **extra: str) -> dict[str, str]:
    return worker_env(
        pgbouncer.url_for(database_url), WORKQUEUE_TRANSACTION_POOLING="true", **extra
    )


async def server_connections(database_url: str) -> int:
    """Connections to the test database other than this one: the pgbouncer's, here."""
    connection = await asyncpg.connect(database_url)
    try:
        count: int = await connection.fetchval(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    finally:
        await connection.close()
    return count


async def test_workers_of_lanes_run_heartbeat_recover_and_schedule_through_pgbouncer(
    database_url: str, pgbouncer: PgBouncer, spawn: Spawner
) -> None:
    env = pooled_env(pgbouncer, database_url, WORKQUEUE_LEASE_DURATION="2")
    for _ in range(12):
        enqueued = run_cli(script_argv("enqueue", "e2e_nap", "--payload", '{"seconds": 3}'), env)
        assert enqueued.returncode == 0, enqueued.stderr + pgbouncer.log()
    # A dead worker's item, its lease long run out: recovery requeues it.
    connection = await asyncpg.connect(database_url)
    try:
        await connection.execute(
            "UPDATE work_items SET status = 'running', attempt = 1, worker_id = 'dead',"
            " started_at = $1, lease_expires_at = $1 WHERE id = 1",
            datetime.now(UTC) - timedelta(minutes=5),
        )
    finally:
        await connection.close()
    workers = [spawn(script_argv("worker", "--concurrency", "4"), env) for _ in range(2)]

    async def all_succeeded() -> bool:
        items = await work_items(database_url)
        return [i["status"] for i in items] == ["succeeded"] * 12

    def outputs() -> str:
        return "\n".join(worker.output() for worker in workers) + pgbouncer.log()[-2000:]

    await eventually(all_succeeded, within=40, what="twelve naps succeeded", context=outputs)
    items = await work_items(database_url)
    # Each nap outlived its 2 s lease: only heartbeats through pgbouncer kept it.
    assert [(i["attempt"], i["stalls"]) for i in items] == [(2, 1)] + [(1, 0)] * 11
    assert await server_connections(database_url) <= pgbouncer.pool_size
    for worker in workers:
        worker.send(signal.SIGTERM)
    for worker in workers:
        assert await worker.exit_status() == 0, worker.output()
        assert "polling" in worker.output()


async def test_the_scheduler_enqueues_the_periodic_kinds_once_through_pgbouncer(
    database_url: str, pgbouncer: PgBouncer, spawn: Spawner
) -> None:
    env = pooled_env(pgbouncer, database_url)
    workers = [spawn(cli_argv("worker", "--concurrency", "3"), env) for _ in range(2)]

    async def both_succeeded() -> bool:
        items = await work_items(database_url)
        return sorted((i["kind"], i["status"]) for i in items) == [
            ("token_cleanup", "succeeded"),
            ("work_item_retention", "succeeded"),
        ]

    await eventually(
        both_succeeded, within=20, what="two periodic items", context=workers[0].output
    )
    # Several poll cycles (0.2 s) of both workers, none finding a kind due again.
    await asyncio.sleep(1.0)
    assert await both_succeeded()
    for worker in workers:
        worker.send(signal.SIGTERM)
        assert await worker.exit_status() == 0, worker.output()


async def test_a_pooled_worker_listens_on_the_direct_url_and_is_woken_before_its_poll(
    database_url: str, pgbouncer: PgBouncer, spawn: Spawner
) -> None:
    env = pooled_env(
        pgbouncer,
        database_url,
        WORKQUEUE_LISTEN_DATABASE_URL=database_url,
        WORKQUEUE_POLL_INTERVAL="60",
    )
    worker = spawn(script_argv("worker", "--concurrency", "2"), env)
    await worker.wait_for_output("worker started")
    # The first cycle has run and the worker idles for a minute, listening.
    await asyncio.sleep(1.0)

    enqueued = run_cli(script_argv("enqueue", "e2e_nap", "--payload", '{"seconds": 0}'), env)
    assert enqueued.returncode == 0, enqueued.stderr

    async def succeeded() -> bool:
        items = await work_items(database_url)
        return [i["status"] for i in items] == ["succeeded"]

    await eventually(succeeded, within=15, what="the notified nap succeeded", context=worker.output)
    worker.send(signal.SIGTERM)
    assert await worker.exit_status() == 0, worker.output()
    assert "polling" not in worker.output()
