"""PostgreSQL restarted under running workers: they say so, wait it out, and carry on.

The server is this module's own (restartable_postgres.py): never the one the other
tests share. Each outage lasts longer than a lease, so the items that were running
when it began come back with a stall: their workers could not renew the leases,
gave them up on their own clocks, and lease recovery requeued them once the
database was back. A quarter of the attempts fail on purpose, so retries (and
their outcome writes) cross the outages too.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from fault_database import audit, enqueue_chores, install_side_tables, unfinished_count
from fault_figures import FaultSize, report_figures
from fault_fleet import FAULT_SETTINGS, LANES, Fleet, eventually
from fault_kinds import Chore
from restartable_postgres import RestartablePostgres

from workqueue.adapters.postgres import migrate

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

LEASE = float(FAULT_SETTINGS["WORKQUEUE_LEASE_DURATION"])
POLL = float(FAULT_SETTINGS["WORKQUEUE_POLL_INTERVAL"])
MAX_STALLS = int(FAULT_SETTINGS["WORKQUEUE_MAX_STALLS"])
OUTAGE = LEASE + 1.5
RESTARTS = 2
# Back within the outage plus one poll interval (the worker's retry period), give
# or take process scheduling.
RECONNECT_TOLERANCE = 2.0
_BACK_AFTER = re.compile(r"store reachable again after ([0-9.]+) s")


@pytest.fixture(scope="module")
def server() -> Iterator[RestartablePostgres]:
    server = RestartablePostgres.create()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
async def restartable_database(server: RestartablePostgres) -> str:
    admin = await asyncpg.connect(server.admin_url)
    try:
        await admin.execute("DROP DATABASE IF EXISTS workqueue_restart WITH (FORCE)")
        await admin.execute("CREATE DATABASE workqueue_restart")
    finally:
        await admin.close()
    url = server.url("workqueue_restart")
    await migrate(url)
    await install_side_tables(url)
    return url


@pytest.mark.parametrize("lanes", LANES, ids=lambda n: f"lanes{n}")
async def test_workers_ride_out_database_restarts_and_lose_nothing(
    server: RestartablePostgres,
    restartable_database: str,
    tmp_path: Path,
    size: FaultSize,
    lanes: int,
) -> None:
    url = restartable_database
    items = max(size.items // 2, 50)
    chore = Chore(naps=(0.2,), jitter=0.3, fail_rate=0.25)
    enqueued = set(await enqueue_chores(url, [chore] * items))
    fleet = Fleet(url, tmp_path, WORKQUEUE_CONCURRENCY=str(lanes))
    try:
        workers = [fleet.start() for _ in range(size.workers)]
        for worker in workers:
            await worker.wait_for_output("worker started")
        started = time.monotonic()
        running_at_outage: list[set[int]] = []
        for _ in range(RESTARTS):
            await asyncio.sleep(1.5)
            running_at_outage.append(await running_now(url))
            server.stop("fast")
            await asyncio.sleep(OUTAGE)
            server.start()

        async def drained() -> bool:
            connection = await asyncpg.connect(url)
            try:
                return await unfinished_count(connection) == 0
            finally:
                await connection.close()

        await eventually(
            drained, within=60 + items * 0.2, what="a drained queue", context=fleet.outputs
        )
        elapsed = time.monotonic() - started
        exits = await fleet.stop_all()
        outputs = {worker.worker_id: worker.output() for worker in workers}
    finally:
        fleet.close()

    result = await audit(url, enqueued=enqueued, max_stalls=MAX_STALLS)
    back_after = [
        float(seconds) for output in outputs.values() for seconds in _BACK_AFTER.findall(output)
    ]
    stalled = {item.id for item in result.items if item.stalls}
    report_figures(
        "database_restart",
        lanes=lanes,
        items=items,
        workers=size.workers,
        restarts=RESTARTS,
        outage=f"{OUTAGE:.1f}s",
        stalls=result.total_stalls,
        stalled_out=len(result.stalled_out),
        retries=result.retries,
        failed_for_good=len(result.failed_for_good),
        lost=result.lost(enqueued),
        stale_writes=len(result.stale_writes),
        longest_outage_logged=f"{max(back_after, default=0.0):.1f}s",
        seconds=f"{elapsed:.1f}",
    )
    assert result.problems == [], "\n".join(result.problems[:20])
    assert result.retries > 0, "no attempt failed: the retry policy was never at work"
    assert set(exits.values()) == {0}, outputs
    for worker_id, output in outputs.items():
        assert output.count("store unavailable") >= RESTARTS, (worker_id, output)
        assert len(_BACK_AFTER.findall(output)) >= RESTARTS, (worker_id, output)
    assert max(back_after) <= OUTAGE + POLL + RECONNECT_TOLERANCE, back_after
    # Every outage caught items mid-run; their leases ran out, and they came back
    # with a stall (the audit checked each stall against the runs).
    assert all(running for running in running_at_outage), running_at_outage
    assert stalled, "no item was recovered with a stall"


async def running_now(url: str) -> set[int]:
    connection = await asyncpg.connect(url)
    try:
        rows = await connection.fetch("SELECT id FROM work_items WHERE status = 'running'")
    finally:
        await connection.close()
    return {row["id"] for row in rows}
