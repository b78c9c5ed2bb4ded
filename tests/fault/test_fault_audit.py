"""The write audit the fault tests rely on does see a stale write: their zero is not vacuous."""

from __future__ import annotations

import asyncpg
import pytest
from fault_database import audit, enqueue_chores
from fault_fleet import with_application_name
from fault_kinds import Chore

pytestmark = [pytest.mark.fault, pytest.mark.postgres]


async def test_a_write_by_a_worker_that_does_not_hold_the_lease_is_counted_as_stale(
    fault_database: str,
) -> None:
    (item_id,) = await enqueue_chores(fault_database, [Chore()])
    holder = await asyncpg.connect(with_application_name(fault_database, "holder"))
    intruder = await asyncpg.connect(with_application_name(fault_database, "intruder"))
    try:
        await holder.execute(
            "UPDATE work_items SET status = 'running', attempt = 1, worker_id = 'holder',"
            " started_at = now(), lease_expires_at = now() + interval '1 minute' WHERE id = $1",
            item_id,
        )
        await holder.execute(
            "UPDATE work_items SET heartbeat_at = now() WHERE id = $1 AND attempt = 1", item_id
        )
        await intruder.execute(
            "UPDATE work_items SET heartbeat_at = now() WHERE id = $1 AND attempt = 1", item_id
        )
        await holder.execute(
            "UPDATE work_items SET status = 'succeeded', finished_at = now() WHERE id = $1",
            item_id,
        )
        await intruder.execute("UPDATE work_items SET progress = '{}' WHERE id = $1", item_id)
    finally:
        await holder.close()
        await intruder.close()

    result = await audit(fault_database, enqueued={item_id}, max_stalls=3)

    assert [(w["writer"], w["old_status"]) for w in result.stale_writes] == [
        ("intruder", "running"),
        ("intruder", "succeeded"),
    ]
    assert any("stale writes" in problem for problem in result.problems)


async def test_a_failure_the_row_keeps_of_an_attempt_that_never_failed_is_a_problem(
    fault_database: str,
) -> None:
    (item_id,) = await enqueue_chores(fault_database, [Chore()])
    connection = await asyncpg.connect(with_application_name(fault_database, "holder"))
    try:
        await connection.execute(
            "INSERT INTO fault_runs (item_id, attempt, worker, ended_at)"
            " VALUES ($1, 1, 'holder', now()), ($1, 2, 'holder', now())",
            item_id,
        )
        await connection.execute(
            "UPDATE work_items SET status = 'running', attempt = 2, worker_id = 'holder',"
            " started_at = now(), lease_expires_at = now() + interval '1 minute' WHERE id = $1",
            item_id,
        )
        await connection.execute(
            "UPDATE work_items SET status = 'succeeded', finished_at = now(),"
            " failures = jsonb_build_array(jsonb_build_object("
            "'attempt', 1, 'at', now(), 'error', 'made up')) WHERE id = $1",
            item_id,
        )
    finally:
        await connection.close()

    result = await audit(fault_database, enqueued={item_id}, max_stalls=3)

    assert result.problems == [
        f"item {item_id} keeps failures of attempts [1], but its handler failed only in attempts []"
    ]
