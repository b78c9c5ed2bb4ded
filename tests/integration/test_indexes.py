"""The indexes keep heartbeats HOT and claims fast next to a million finished rows."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from typing import Any

import asyncpg
import pytest

from workqueue.adapters.postgres import (
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from workqueue.adapters.postgres.channel import CHANNEL
from workqueue.adapters.postgres.sql import load_statements
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, ContractKind

HEARTBEAT_COLUMNS = ("heartbeat_at", "lease_expires_at", "progress")
FINISHED_ROWS = 1_000_000
WAITING_ROWS = 1_000_000
LEASE = timedelta(seconds=60)
STORE_SQL = load_statements("store.sql")
QUEUE_SQL = load_statements("queue.sql")


async def columns_each_index_reads(url: str) -> dict[str, set[str]]:
    # Columns an index depends on: its keys, its expressions and its predicate.
    connection = await asyncpg.connect(url)
    try:
        rows = await connection.fetch(
            """
            SELECT i.relname AS index, a.attname AS column
            FROM pg_index AS x
            JOIN pg_class AS i ON i.oid = x.indexrelid
            JOIN pg_attribute AS a ON a.attrelid = x.indrelid AND a.attnum > 0
            WHERE x.indrelid = 'work_items'::regclass
              AND (a.attnum = ANY (x.indkey)
                   OR pg_get_expr(x.indexprs, x.indrelid) ~ ('\\m' || a.attname || '\\M')
                   OR pg_get_expr(x.indpred, x.indrelid) ~ ('\\m' || a.attname || '\\M'))
            """
        )
    finally:
        await connection.close()
    columns: dict[str, set[str]] = {}
    for row in rows:
        columns.setdefault(row["index"], set()).add(row["column"])
    return columns


async def test_no_index_reads_a_column_that_heartbeats_write(database_url: str) -> None:
    columns = await columns_each_index_reads(database_url)

    assert "work_items_claim" in columns  # the query sees the indexes at all
    assert {
        index: sorted(read & set(HEARTBEAT_COLUMNS))
        for index, read in columns.items()
        if read & set(HEARTBEAT_COLUMNS)
    } == {}


async def hot_updates_of_work_items(pool: asyncpg.Pool) -> int:
    async with pool.acquire() as connection:
        # Make this backend publish its pending statistics now, not in a second.
        await connection.execute("SELECT pg_stat_force_next_flush()")
    count: int = await pool.fetchval(
        "SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'work_items'"
    )
    return count


async def test_a_heartbeat_is_a_hot_update(database_url: str) -> None:
    # One connection, so the statistics flushed are those of the heartbeats.
    pool = await create_pool(database_url, min_size=1, max_size=1)
    try:
        clock = FakeClock()
        store = PostgresWorkStore(pool, clock)
        await PostgresWorkQueue(pool, clock).enqueue(AlphaJob(number=1))
        item = await store.claim([ContractKind.ALPHA], worker_id="w", lease_duration=LEASE)
        assert item is not None
        hot_before = await hot_updates_of_work_items(pool)

        for step in range(5):
            await clock.advance(2)
            assert await store.heartbeat(item.lease, progress={"step": step}, lease_duration=LEASE)

        assert await hot_updates_of_work_items(pool) == hot_before + 5
    finally:
        await close_pool(pool)


async def waiting_ids(pool: asyncpg.Pool) -> list[int]:
    """The queued items kept out of the claim index (``delayed``), by id."""
    rows = await pool.fetch("SELECT id FROM work_items WHERE status = 'queued' AND delayed")
    return sorted(row["id"] for row in rows)


@pytest.mark.parametrize("many", [False, True], ids=["one-claim", "claim-many"])
async def test_the_due_items_a_claim_leaves_move_into_the_claim_index(
    database_url: str, many: bool
) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        clock = FakeClock()
        store = PostgresWorkStore(pool, clock)
        queue = PostgresWorkQueue(pool, clock)
        due = [(await queue.enqueue(AlphaJob(number=n), delay=LEASE)).id for n in range(4)]
        later = (await queue.enqueue(AlphaJob(number=9), delay=3 * LEASE)).id
        assert await waiting_ids(pool) == [*due, later]
        await clock.advance(LEASE.total_seconds())

        if many:
            first = await store.claim([ContractKind.ALPHA], worker_id="w", lease_duration=LEASE)
            assert first is not None
            await store.complete_and_claim_many(
                [(first.lease, None)],
                kinds=[ContractKind.ALPHA],
                worker_id="w",
                lease_duration=LEASE,
            )
        else:
            assert await store.claim([ContractKind.ALPHA], worker_id="w", lease_duration=LEASE)

        # The items still due wait no longer: the next claims read them from the claim
        # index, not from the due probe. The one still to come keeps waiting.
        assert await waiting_ids(pool) == [later]
    finally:
        await close_pool(pool)


async def fill_with_finished_items(url: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(
            """
            INSERT INTO work_items (kind, payload, status, attempt, enqueued_at, started_at,
                                    finished_at)
            SELECT $1, '{}', CASE WHEN n % 10 = 0 THEN 'failed' ELSE 'succeeded' END, 1,
                   $2::timestamptz, $2::timestamptz, $2::timestamptz + n * interval '1 millisecond'
            FROM generate_series(1, $3::integer) AS n
            """,
            ContractKind.ALPHA.value,
            FakeClock().now() - timedelta(days=60),
            FINISHED_ROWS,
        )
        # Waiting ahead of everything: the highest priority, due tomorrow.
        await connection.execute(
            """
            INSERT INTO work_items (kind, payload, status, attempt, enqueued_at, priority, run_at,
                                    delayed)
            SELECT $1, '{}', 'queued', 0, $2::timestamptz, 100, $2::timestamptz + interval '1 day',
                   true
            FROM generate_series(1, $3::integer) AS n
            """,
            ContractKind.GAMMA.value,
            FakeClock().now(),
            WAITING_ROWS,
        )
        await connection.execute("VACUUM ANALYZE work_items")
    finally:
        await connection.close()


@pytest.fixture(scope="module")
def crowded_database_url(
    migrated_database_factory: Callable[[str], str],
    run_in_fresh_loop: Callable[[Callable[[], Awaitable[None]]], None],
) -> str:
    """A migrated database holding a million finished items and a million waiting for their
    run_at (of another kind, at the highest priority), shared by this module's tests.

    The tests only read it, or write inside transactions they roll back.
    """
    url = migrated_database_factory("workqueue_crowded")
    run_in_fresh_loop(lambda: fill_with_finished_items(url))
    return url


async def explain(
    url: str,
    statement: str,
    *arguments: Any,
    queued_kind: str = ContractKind.ALPHA.value,
    capped: str | None = None,
) -> dict[str, Any]:
    """The executed plan of ``statement``, run inside a transaction that is rolled back.

    One queued item of ``queued_kind`` is inserted first, so a claim finds something;
    and the kind ``capped``, if any, is capped at 2, with one queued item too.
    """
    connection = await asyncpg.connect(url)
    try:
        transaction = connection.transaction()
        await transaction.start()
        try:
            await connection.execute(
                "INSERT INTO work_items (kind, payload, status, enqueued_at) "
                "VALUES ($1, '{}', 'queued', $2)",
                queued_kind,
                FakeClock().now(),
            )
            if capped is not None:
                await connection.execute(
                    "INSERT INTO work_items (kind, payload, status, enqueued_at) "
                    "VALUES ($1, '{}', 'queued', $2)",
                    capped,
                    FakeClock().now(),
                )
                await connection.execute(
                    "INSERT INTO work_kind_controls (kind, max_running, cap_source, cap_set_at) "
                    "VALUES ($1, 2, 'operator', $2)",
                    capped,
                    FakeClock().now(),
                )
                await connection.execute(
                    "INSERT INTO work_kind_slots (kind, slot) VALUES ($1, 1), ($1, 2)", capped
                )
            text = await connection.fetchval(
                f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {statement}", *arguments
            )
        finally:
            await transaction.rollback()
    finally:
        await connection.close()
    plan: dict[str, Any] = json.loads(text)[0]["Plan"]
    return plan


def nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def scans(plan: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [
        (node["Node Type"], node.get("Index Name"))
        for node in nodes(plan)
        if "Scan" in node["Node Type"] and "Relation Name" in node
    ]


def work_items_scans(plan: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The scans of ``plan`` but those of ``work_kind_controls`` and ``work_kind_slots``: the
    paused and capped kinds and their slots, a handful of rows (docs/adr/0034, 0035)."""
    return [
        (node["Node Type"], node.get("Index Name"))
        for node in nodes(plan)
        if "Scan" in node["Node Type"] and node.get("Relation Name") == "work_items"
    ]


def relations_read(plan: dict[str, Any]) -> set[str]:
    return {node["Relation Name"] for node in nodes(plan) if "Relation Name" in node}


def pages_touched(plan: dict[str, Any]) -> int:
    return int(plan["Shared Hit Blocks"] + plan["Shared Read Blocks"])


async def test_a_claim_reads_the_claim_index_and_few_pages_beside_a_million_finished_items(
    crowded_database_url: str,
) -> None:
    # ... and a million items of a kind it serves waiting ahead of it, due tomorrow.
    now = FakeClock().now()
    plan = await explain(
        crowded_database_url,
        STORE_SQL["claim"],
        [ContractKind.ALPHA.value, ContractKind.BETA.value, ContractKind.GAMMA.value],
        "worker",
        now,
        now + LEASE,
        None,  # no lease to complete first
        None,
        None,
    )

    assert ("Index Scan", "work_items_claim") in scans(plan)
    assert ("Index Scan", "work_items_due") in scans(plan)
    assert not any(node_type == "Seq Scan" for node_type, _ in work_items_scans(plan))
    assert relations_read(plan) == {"work_items", "work_kind_controls"}
    # The table has tens of thousands of pages; a claim touches a handful.
    assert pages_touched(plan) < 100


async def test_a_claim_beside_a_capped_kind_probes_each_kind_s_claim_index_and_few_pages(
    crowded_database_url: str,
) -> None:
    # Beta capped at 2: the claim takes a free slot of it, and probes alpha's and
    # beta's queued items each on their own, past the million waiting and finished.
    now = FakeClock().now()
    plan = await explain(
        crowded_database_url,
        STORE_SQL["complete_and_claim_capped"].replace("$8", "4"),
        [ContractKind.ALPHA.value, ContractKind.BETA.value, ContractKind.GAMMA.value],
        "worker",
        now,
        now + LEASE,
        [],
        [],
        [],
        capped=ContractKind.BETA.value,
    )

    claim_scans = set(work_items_scans(plan))
    assert ("Index Scan", "work_items_claim_by_kind") in claim_scans
    assert ("Index Scan", "work_items_due") in claim_scans
    assert not any(node_type == "Seq Scan" for node_type, _ in claim_scans)
    assert relations_read(plan) == {"work_items", "work_kind_controls", "work_kind_slots"}
    assert pages_touched(plan) < 100


async def test_next_run_at_reads_one_index_probe_per_kind_beside_a_million_waiting_items(
    crowded_database_url: str,
) -> None:
    plan = await explain(
        crowded_database_url,
        STORE_SQL["next_run_at"],
        [ContractKind.ALPHA.value, ContractKind.GAMMA.value],
        FakeClock().now(),
    )

    assert set(work_items_scans(plan)) == {("Index Only Scan", "work_items_delayed")}
    assert relations_read(plan) == {"work_items", "work_kind_controls"}
    assert pages_touched(plan) < 100


async def test_lease_recovery_reads_only_the_running_items(crowded_database_url: str) -> None:
    plan = await explain(crowded_database_url, STORE_SQL["recover_expired"], FakeClock().now(), 3)

    assert not any(node_type == "Seq Scan" for node_type, _ in scans(plan))
    assert pages_touched(plan) < 100


async def test_a_due_periodic_enqueue_reads_each_due_index_and_few_pages(
    crowded_database_url: str,
) -> None:
    # Nothing of alpha queued or running, and its million finished items are old:
    # every check runs (none short-circuits), and the item is inserted.
    now = FakeClock().now()
    plan = await explain(
        crowded_database_url,
        QUEUE_SQL["enqueue_if_due"],
        ContractKind.ALPHA.value,
        '{"number": 1}',
        now,
        CHANNEL,
        "periodic",
        now - timedelta(days=1),
        queued_kind=ContractKind.BETA.value,
    )

    # One index probe per check: queued, running, and finished recently.
    assert len(scans(plan)) == 3
    assert all(node_type.startswith("Index") for node_type, _ in scans(plan))
    assert {"work_items_running", "work_items_newest_finished"} <= {
        index for _, index in scans(plan)
    }
    assert plan["Actual Rows"] == 1
    assert pages_touched(plan) < 100


async def test_the_periodic_lock_reads_no_table(crowded_database_url: str) -> None:
    plan = await explain(
        crowded_database_url, QUEUE_SQL["lock_periodic_kind"], ContractKind.ALPHA.value
    )

    assert scans(plan) == []


async def test_a_purge_batch_reads_the_oldest_finished_items_from_an_index(
    crowded_database_url: str,
) -> None:
    plan = await explain(crowded_database_url, STORE_SQL["purge_finished"], FakeClock().now(), 1000)

    assert ("Index Scan", "work_items_retention") in scans(plan)
    assert not any(node_type == "Seq Scan" for node_type, _ in scans(plan))
