"""``workqueue worker --kinds``: a real process on a real PostgreSQL claims the kinds it is
given and leaves the others queued; told a kind no handler serves, it does not start."""

from __future__ import annotations

import asyncio
import signal

import pytest
from e2e_support import Spawner, cli_argv, eventually, run_cli, work_items, worker_env

from workqueue.domain import TokenCleanup, WorkItemRetention, WorkKind, kind_name

pytestmark = pytest.mark.e2e

RETENTION = WorkItemRetention.kind.value
TOKEN_CLEANUP = TokenCleanup.kind.value
BUILT_IN = sorted(kind_name(kind) for kind in WorkKind)


async def test_a_worker_for_one_kind_runs_its_items_and_leaves_the_others_queued(
    database_url: str, spawn: Spawner
) -> None:
    env = worker_env(database_url)
    for kind in (TOKEN_CLEANUP, RETENTION):
        enqueued = run_cli(cli_argv("enqueue", kind), env)
        assert enqueued.returncode == 0, enqueued.stderr
    worker = spawn(cli_argv("worker", "--kinds", RETENTION), env)

    async def retention_ran() -> bool:
        items = await work_items(database_url)
        return any(i["kind"] == RETENTION and i["status"] == "succeeded" for i in items)

    await eventually(retention_ran, within=20, what="a succeeded retention", context=worker.output)
    # Only waiting shows that nothing more happens: 1.5 s is several poll cycles (0.2 s).
    await asyncio.sleep(1.5)

    items = await work_items(database_url)
    assert [(i["kind"], i["status"]) for i in items] == [
        (TOKEN_CLEANUP, "queued"),
        (RETENTION, "succeeded"),
    ]
    assert f"started for kinds {RETENTION}" in worker.output()
    worker.send(signal.SIGTERM)
    assert await worker.exit_status() == 0, worker.output()


def test_a_worker_told_a_kind_no_handler_serves_exits_2_with_one_line() -> None:
    # A port nothing listens on: the kinds are refused before any database is reached.
    env = worker_env("postgresql://nobody@127.0.0.1:1/none", WORKQUEUE_CONNECT_ATTEMPTS="1")

    run = run_cli(cli_argv("worker", "--kinds", f"{RETENTION},send_digest"), env)

    assert run.returncode == 2
    assert run.stderr == (
        "workqueue: invalid setting WORKQUEUE_KINDS: no handler serves 'send_digest' "
        f"(the kinds served: {', '.join(BUILT_IN)})\n"
    )
