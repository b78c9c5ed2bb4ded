"""Cancel with real worker processes: a running item stops within a heartbeat, a dead
worker's item ends cancelled after its lease, and nothing else is disturbed.

The cancel is the production command, ``workqueue cancel ID`` (through
fault_worker_script.py, on the fault database), as an operator would type it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

import asyncpg
import pytest
from fault_database import enqueue_chores, item_row, run_of
from fault_figures import report_figures
from fault_fleet import FAULT_SETTINGS, SCRIPT, Fleet, eventually, with_application_name
from fault_kinds import Chore

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

HEARTBEAT = float(FAULT_SETTINGS["WORKQUEUE_HEARTBEAT_INTERVAL"])
LEASE = float(FAULT_SETTINGS["WORKQUEUE_LEASE_DURATION"])
POLL = float(FAULT_SETTINGS["WORKQUEUE_POLL_INTERVAL"])
REASON = "stopped by the fault test"


async def cancel_command(url: str, item_id: int) -> tuple[int, str]:
    """Run ``workqueue cancel ID --reason ...`` as a process; its exit status and output."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("WORKQUEUE_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SCRIPT),
        "cancel",
        str(item_id),
        "--reason",
        REASON,
        env={
            **inherited,
            "WORKQUEUE_DATABASE_URL": with_application_name(url, "fault-operator"),
        },
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None
    return process.returncode, output.decode()


async def status_of(connection: asyncpg.Connection, item_id: int) -> str:
    return (await item_row(connection, item_id)).status


async def running_on(connection: asyncpg.Connection, item_id: int) -> str | None:
    """The worker running ``item_id`` once its handler has started, else None."""
    item = await item_row(connection, item_id)
    if item.status != "running" or await run_of(connection, item_id, item.attempt) is None:
        return None
    return item.worker_id


async def test_a_running_item_is_cancelled_within_a_heartbeat_and_others_run_on(
    fault_database: str, fleet: Fleet
) -> None:
    doomed, neighbour, *rest = await enqueue_chores(
        fault_database, [Chore(naps=(60,)), Chore(naps=(4,))] + [Chore(naps=(0.2,))] * 10
    )
    for worker in [fleet.start(), fleet.start()]:
        await worker.wait_for_output("worker started", within=60)
    connection = await asyncpg.connect(fault_database)
    try:

        async def both_running() -> bool:
            return (
                await running_on(connection, doomed) is not None
                and await running_on(connection, neighbour) is not None
            )

        await eventually(both_running, within=30, what="both long chores running")
        holder = await running_on(connection, doomed)
        neighbour_holder = await running_on(connection, neighbour)
        assert holder != neighbour_holder

        status, output = await cancel_command(fault_database, doomed)
        requested_at = time.monotonic()
        assert (status, output.strip()) == (
            0,
            f"cancel of item {doomed} requested: it is running, and its worker cancels it "
            "at its next heartbeat (or lease recovery does, if the worker is gone)",
        )

        async def cancelled() -> bool:
            return await status_of(connection, doomed) == "cancelled"

        await eventually(cancelled, within=HEARTBEAT + 5, what="the cancelled row", every=0.02)
        took = time.monotonic() - requested_at

        row = await item_row(connection, doomed)
        assert (row.error, row.attempt, row.stalls, row.worker_id) == (REASON, 1, 0, holder)
        run = await run_of(connection, doomed, 1)
        assert run is not None
        assert run["ended_at"] is None, "the handler was cancelled mid-nap"
        assert took <= HEARTBEAT + 1, f"cancelled {took:.2f} s after the request"

        async def all_done() -> bool:
            statuses = [await status_of(connection, item) for item in (neighbour, *rest)]
            return all(status == "succeeded" for status in statuses)

        await eventually(all_done, within=60, what="every other item succeeded")
        neighbour_row = await item_row(connection, neighbour)
        assert (neighbour_row.attempt, neighbour_row.stalls) == (1, 0)
        neighbour_run = await run_of(connection, neighbour, 1)
        assert neighbour_run is not None
        assert neighbour_run["ended_at"] is not None, "the neighbour ran to its end"
        # The worker that held the cancelled item went on to other items.
        holder_runs = await connection.fetchval(
            "SELECT count(*) FROM fault_runs WHERE worker = $1 AND item_id <> $2", holder, doomed
        )
        assert holder_runs > 0
    finally:
        await connection.close()
    assert set((await fleet.stop_all()).values()) == {0}
    report_figures(
        "cancel_running",
        heartbeat_interval_s=HEARTBEAT,
        cancelled_after_s=round(took, 3),
        bound_s=HEARTBEAT + 1,
    )


async def test_a_killed_workers_item_ends_cancelled_after_its_lease_and_never_runs_again(
    fault_database: str, fleet: Fleet
) -> None:
    (doomed,) = await enqueue_chores(fault_database, [Chore(naps=(60,))])
    victim = fleet.start()
    await victim.wait_for_output("worker started", within=60)
    connection = await asyncpg.connect(fault_database)
    try:

        async def running() -> bool:
            return await running_on(connection, doomed) is not None

        await eventually(running, within=30, what="the chore running")
        victim.kill()
        killed_at = time.monotonic()
        # The dead worker's last renewal: up to a heartbeat before the kill, so its
        # lease can run out a little sooner than a lease after the kill.
        lease_ran_out_at = (await item_row(connection, doomed)).lease_expires_at
        assert lease_ran_out_at is not None

        status, output = await cancel_command(fault_database, doomed)
        assert status == 0, output
        assert "requested" in output
        survivor = fleet.start()
        await survivor.wait_for_output("worker started", within=60)

        async def cancelled() -> bool:
            return await status_of(connection, doomed) == "cancelled"

        await eventually(cancelled, within=LEASE + POLL + 20, what="the cancelled row")
        took = time.monotonic() - killed_at

        row = await item_row(connection, doomed)
        assert (row.status, row.error, row.attempt, row.stalls) == ("cancelled", REASON, 1, 0)
        await asyncio.sleep(LEASE + POLL)  # time enough for a wrong requeue to be claimed
        assert (await item_row(connection, doomed)).attempt == 1
        assert await run_of(connection, doomed, 2) is None, "it never ran again"
        assert row.finished_at is not None
        assert row.finished_at >= lease_ran_out_at, "nothing ended it before its lease ran out"
    finally:
        await connection.close()
    assert set((await fleet.stop_all()).values()) == {0}
    report_figures("cancel_dead_holder", lease_s=LEASE, cancelled_after_kill_s=round(took, 3))
