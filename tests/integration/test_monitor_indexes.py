"""Every read of the admin view runs on an index beside half a million finished rows."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from typing import Any

import asyncpg
import pytest

from workqueue.adapters.postgres.sql import load_statements
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import ContractKind

MONITOR_SQL = load_statements("monitor.sql")
STORE_SQL = load_statements("store.sql")
FINISHED_ROWS = 500_000
# A backlog a fifth of the history's size: enough for PostgreSQL to expect a
# queued item of any kind a few rows into a walk of the primary key, where every
# queued id comes after every finished one.
QUEUED_ROWS = 100_000
NOW = FakeClock().now()
ALPHA, BETA = ContractKind.ALPHA.value, ContractKind.BETA.value


async def fill(url: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        # Finished over 30 days, one in 50 failed, one in 500 stalled once.
        await connection.execute(
            """
            INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at,
                                    started_at, heartbeat_at, finished_at, error)
            SELECT CASE WHEN n % 2 = 0 THEN $1 ELSE $2 END, '{}',
                   CASE WHEN n % 50 = 0 THEN 'failed' ELSE 'succeeded' END, 1,
                   CASE WHEN n % 500 = 0 THEN 1 ELSE 0 END,
                   t, t, t, t + interval '1 second',
                   CASE WHEN n % 50 = 0 THEN 'RuntimeError: boom' END
            FROM generate_series(1, $3::integer) AS n,
                 LATERAL (SELECT $4::timestamptz - interval '30 days'
                                 + n * interval '5 seconds' AS t) AS moment
            """,
            ALPHA,
            BETA,
            FINISHED_ROWS,
            NOW,
        )
        await connection.execute(
            """
            INSERT INTO work_items (kind, payload, status, enqueued_at)
            SELECT CASE WHEN n % 2 = 0 THEN $1 ELSE $2 END, '{}', 'queued',
                   $4::timestamptz - interval '1 hour' + n * interval '10 milliseconds'
            FROM generate_series(1, $3::integer) AS n
            """,
            ALPHA,
            BETA,
            QUEUED_ROWS,
            NOW,
        )
        await connection.execute(
            """
            INSERT INTO work_items (kind, payload, status, attempt, stalls, enqueued_at,
                                    started_at, heartbeat_at, lease_expires_at, worker_id)
            SELECT $1, '{}', 'running', 1, n % 2, $2, $2, $2, $2::timestamptz + interval '60 s',
                   'w-' || n
            FROM generate_series(1, 4) AS n
            """,
            ALPHA,
            NOW,
        )
        await connection.execute("VACUUM ANALYZE work_items")
    finally:
        await connection.close()


@pytest.fixture(scope="module")
def crowded_database_url(
    migrated_database_factory: Callable[[str], str],
    run_in_fresh_loop: Callable[[Callable[[], Awaitable[None]]], None],
) -> str:
    """A migrated database with a long history and a backlog, read by this module's tests."""
    url = migrated_database_factory("workqueue_monitored")
    run_in_fresh_loop(lambda: fill(url))
    return url


async def explain(url: str, statement: str, *arguments: Any) -> dict[str, Any]:
    """The executed plan of ``statement`` (read-only, so nothing to roll back)."""
    connection = await asyncpg.connect(url)
    try:
        text = await connection.fetchval(
            f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {statement}", *arguments
        )
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
        if "Relation Name" in node
    ]


def indexes_read(plan: dict[str, Any]) -> set[str | None]:
    """The indexes the plan reads the table through (a heap scan behind a bitmap is
    the bitmap's index, which its child node names)."""
    read = {index for node_type, index in scans(plan) if node_type != "Bitmap Heap Scan"}
    read |= {node["Index Name"] for node in nodes(plan) if node["Node Type"] == "Bitmap Index Scan"}
    return read


def pages_touched(plan: dict[str, Any]) -> int:
    return int(plan["Shared Hit Blocks"] + plan["Shared Read Blocks"])


def reads_only_indexes(plan: dict[str, Any]) -> bool:
    return bool(scans(plan)) and all(
        node_type in {"Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Bitmap Index Scan"}
        for node_type, _ in scans(plan)
    )


def heap_fetches(plan: dict[str, Any]) -> int:
    return sum(int(node.get("Heap Fetches", 0)) for node in nodes(plan))


async def test_live_counts_read_the_queued_and_running_indexes(crowded_database_url: str) -> None:
    plan = await explain(crowded_database_url, MONITOR_SQL["count_live"])

    assert reads_only_indexes(plan)
    assert indexes_read(plan) == {"work_items_queued_by_kind", "work_items_running"}


async def test_finished_counts_read_their_index_alone(crowded_database_url: str) -> None:
    plan = await explain(crowded_database_url, MONITOR_SQL["count_finished"])

    assert scans(plan) == [("Index Only Scan", "work_items_finished_by_kind")]
    # Vacuumed finished rows are all-visible: the table itself is not read.
    assert heap_fetches(plan) == 0


async def test_the_oldest_queued_items_cost_a_few_pages_per_kind(
    crowded_database_url: str,
) -> None:
    plan = await explain(crowded_database_url, MONITOR_SQL["oldest_queued"])

    assert reads_only_indexes(plan)
    # The kinds, and each kind's first id, come from the kind index; that item's
    # row by its key, not by a walk of the key from the oldest finished row.
    assert indexes_read(plan) == {"work_items_queued_by_kind", "work_items_pkey"}
    assert plan["Actual Rows"] == 2
    assert pages_touched(plan) < 100


async def test_the_running_items_are_read_from_their_index(crowded_database_url: str) -> None:
    plan = await explain(crowded_database_url, MONITOR_SQL["running"])

    assert reads_only_indexes(plan)
    assert indexes_read(plan) == {"work_items_running"}
    assert plan["Actual Rows"] == 4
    assert pages_touched(plan) < 100


@pytest.mark.parametrize("after_id", [0, FINISHED_ROWS + QUEUED_ROWS - 100])
async def test_a_page_of_queued_items_costs_the_same_at_any_depth(
    crowded_database_url: str, after_id: int
) -> None:
    plan = await explain(crowded_database_url, MONITOR_SQL["queued"], after_id, 50)

    # Each kind's page comes from the kind index, the kinds from a skip scan of it.
    assert reads_only_indexes(plan)
    assert indexes_read(plan) == {"work_items_queued_by_kind"}
    assert plan["Actual Rows"] == 50
    assert pages_touched(plan) < 100


@pytest.mark.parametrize(
    "kind", [BETA, ContractKind.GAMMA.value], ids=["half-the-backlog", "none-queued"]
)
async def test_a_page_of_queued_items_of_one_kind_costs_a_few_pages(
    crowded_database_url: str, kind: str
) -> None:
    plan = await explain(
        crowded_database_url, MONITOR_SQL["queued_of_kind"], kind, FINISHED_ROWS + 5000, 50
    )

    # A rare kind needs the kind index; a common one, deep in the backlog, is as
    # quick to find in the narrow range of ids past the page before.
    assert reads_only_indexes(plan)
    assert indexes_read(plan) <= {"work_items_queued_by_kind", "work_items_pkey"}
    assert pages_touched(plan) < 100


async def test_the_recent_unsuccessful_items_are_read_backwards_from_their_index(
    crowded_database_url: str,
) -> None:
    plan = await explain(crowded_database_url, MONITOR_SQL["recent_unsuccessful"], 20)

    assert scans(plan) == [("Index Scan Backward", "work_items_unsuccessful")] or scans(plan) == [
        ("Index Scan", "work_items_unsuccessful")
    ]
    assert plan["Actual Rows"] == 20
    assert pages_touched(plan) < 100


async def test_unsuccessful_items_of_the_last_hour_are_a_range_of_their_index(
    crowded_database_url: str,
) -> None:
    plan = await explain(
        crowded_database_url, MONITOR_SQL["count_unsuccessful_since"], NOW - timedelta(hours=1)
    )

    assert reads_only_indexes(plan)
    assert indexes_read(plan) <= {"work_items_unsuccessful"}
    assert pages_touched(plan) < 100


async def test_stalls_of_the_last_hour_read_only_the_items_that_stalled(
    crowded_database_url: str,
) -> None:
    plan = await explain(
        crowded_database_url, MONITOR_SQL["stalls_since"], NOW - timedelta(hours=1)
    )

    assert reads_only_indexes(plan)
    assert indexes_read(plan) <= {"work_items_stalled"}
    # A thousand stalled items among half a million.
    assert pages_touched(plan) < 2000


async def test_one_item_is_read_by_its_key(crowded_database_url: str) -> None:
    plan = await explain(crowded_database_url, MONITOR_SQL["item"], 12345)

    assert scans(plan) == [("Index Scan", "work_items_pkey")]


async def test_what_each_schedule_came_to_costs_a_few_pages_per_kind(
    crowded_database_url: str,
) -> None:
    # Two kinds with a long history and one with none: the probe of a kind with no
    # finished item must not walk the history of the others.
    plan = await explain(
        crowded_database_url, MONITOR_SQL["schedule_turns"], [ALPHA, BETA, "never_ran"]
    )

    assert reads_only_indexes(plan), scans(plan)
    assert plan["Actual Rows"] == 3
    assert pages_touched(plan) < 100, scans(plan)


ACTIVITY_SQL = load_statements("activity.sql")
CHARTED_KINDS = 10
MINUTE = timedelta(minutes=1)


@pytest.fixture(scope="module")
def charted_database_url(
    crowded_database_url: str,
    run_in_fresh_loop: Callable[[Callable[[], Awaitable[None]]], None],
) -> str:
    """The crowded database with two days of activity by minute of ten kinds (docs/adr/0040)."""

    async def chart() -> None:
        connection = await asyncpg.connect(crowded_database_url)
        try:
            await connection.execute(
                """
                INSERT INTO work_activity (minute, kind, succeeded, failed, retried)
                SELECT date_trunc('minute', $1::timestamptz) - m * interval '1 minute',
                       'kind_' || k, 100 + k, m % 3, m % 2
                FROM generate_series(0, 2 * 1440 - 1) AS m, generate_series(1, $2::integer) AS k
                ON CONFLICT DO NOTHING
                """,
                NOW,
                CHARTED_KINDS,
            )
            await connection.execute(
                """
                INSERT INTO work_depth (minute, kind, queued, delayed, running)
                SELECT date_trunc('minute', $1::timestamptz) - m * interval '1 minute',
                       k, 1000, 10, 4
                FROM generate_series(0, 2 * 1440 - 1) AS m,
                     unnest(ARRAY['', 'kind_1', 'kind_2']) AS k
                ON CONFLICT DO NOTHING
                """,
                NOW,
            )
            await connection.execute("VACUUM ANALYZE work_activity, work_depth")
        finally:
            await connection.close()

    run_in_fresh_loop(chart)
    return crowded_database_url


async def explain_and_undo(url: str, statement: str, *arguments: Any) -> dict[str, Any]:
    """The executed plan of ``statement``, whose writes are rolled back."""
    connection = await asyncpg.connect(url)
    try:
        transaction = connection.transaction()
        await transaction.start()
        try:
            text = await connection.fetchval(
                f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {statement}", *arguments
            )
        finally:
            await transaction.rollback()
    finally:
        await connection.close()
    plan: dict[str, Any] = json.loads(text)[0]["Plan"]
    return plan


@pytest.mark.parametrize("kind", [None, "kind_1"], ids=["every kind", "one kind"])
async def test_an_hour_of_the_charts_reads_its_minutes_on_the_primary_keys(
    charted_database_url: str, kind: str | None
) -> None:
    since = NOW - timedelta(hours=1)
    plan = await explain(charted_database_url, ACTIVITY_SQL["activity"], since, kind)

    assert reads_only_indexes(plan), scans(plan)
    assert indexes_read(plan) == {"work_activity_pkey", "work_depth_pkey"}
    assert pages_touched(plan) < 100


@pytest.mark.parametrize("kind", [None, "kind_1"], ids=["every kind", "one kind"])
async def test_a_day_of_the_charts_reads_the_minutes_alone_never_the_items(
    charted_database_url: str, kind: str | None
) -> None:
    # A day is half of what the tables ever hold (two days: ACTIVITY_KEPT), so
    # PostgreSQL may read them whole rather than through their keys: some 200
    # pages for ten kinds, whatever the number of items that finished.
    since = NOW - timedelta(days=1)
    plan = await explain(charted_database_url, ACTIVITY_SQL["activity"], since, kind)

    assert {node["Relation Name"] for node in nodes(plan) if "Relation Name" in node} == {
        "work_activity",
        "work_depth",
    }
    assert pages_touched(plan) < 400


async def test_a_depth_sample_counts_the_live_items_on_their_partial_indexes(
    charted_database_url: str,
) -> None:
    minute = NOW.replace(second=0, microsecond=0) + MINUTE
    plan = await explain_and_undo(
        charted_database_url, ACTIVITY_SQL["sample_depth"], minute, minute - timedelta(days=2)
    )

    items = {index for node_type, index in scans(plan) if index and index.startswith("work_items")}
    assert items == {"work_items_queued_by_kind", "work_items_delayed", "work_items_running"}
    assert all(
        node_type == "Index Only Scan"
        for node_type, index in scans(plan)
        if index is not None and index.startswith("work_items")
    )
    assert heap_fetches(plan) < 100


async def test_a_minute_already_sampled_counts_nothing(charted_database_url: str) -> None:
    minute = NOW.replace(second=0, microsecond=0)
    plan = await explain_and_undo(
        charted_database_url, ACTIVITY_SQL["sample_depth"], minute, minute - timedelta(days=2)
    )

    counted = [node for node in nodes(plan) if node.get("Relation Name") == "work_items"]
    assert counted
    assert all(node["Actual Loops"] == 0 for node in counted)


KEYED_ROWS = 20_000
KEYS = 10_000


@pytest.fixture(scope="module")
def keyed_database_url(
    crowded_database_url: str,
    run_in_fresh_loop: Callable[[Callable[[], Awaitable[None]]], None],
) -> str:
    """The crowded database with a few finished items under dedup keys, two per key."""

    async def key() -> None:
        connection = await asyncpg.connect(crowded_database_url)
        try:
            await connection.execute(
                """
                INSERT INTO work_items (kind, payload, status, attempt, dedup_key, enqueued_at,
                                        started_at, heartbeat_at, finished_at)
                SELECT $1, '{}', 'succeeded', 1, 'invoice-' || (n % $3::integer),
                       t, t, t, t + interval '1 second'
                FROM generate_series(1, $2::integer) AS n,
                     LATERAL (SELECT $4::timestamptz - interval '20 days'
                                     + n * interval '1 minute' AS t) AS moment
                """,
                BETA,
                KEYED_ROWS,
                KEYS,
                NOW,
            )
            await connection.execute("VACUUM ANALYZE work_items")
        finally:
            await connection.close()

    run_in_fresh_loop(key)
    return crowded_database_url


@pytest.mark.parametrize(("key", "found"), [("invoice-42", 2), ("no-such-key", 0)])
async def test_items_by_dedup_key_are_a_range_of_their_index_beside_the_history(
    keyed_database_url: str, key: str, found: int
) -> None:
    plan = await explain(keyed_database_url, MONITOR_SQL["items_by_dedup_key"], key, 50)

    assert reads_only_indexes(plan), scans(plan)
    assert indexes_read(plan) == {"work_items_by_dedup_key"}
    assert plan["Actual Rows"] == found
    assert pages_touched(plan) < 20


async def test_the_dedup_key_index_holds_only_the_items_with_a_key(
    keyed_database_url: str,
) -> None:
    connection = await asyncpg.connect(keyed_database_url)
    try:
        keyed, every = await connection.fetchrow(
            "SELECT pg_relation_size('work_items_by_dedup_key'),"
            " pg_relation_size('work_items_pkey')"
        )
    finally:
        await connection.close()

    # Half a million finished items and the backlog have no key, hence no entry:
    # an entry of every row would make it larger than the primary key, whose
    # entries are smaller (an id alone); the keyed thirtieth of the rows keeps it
    # a small part of it.
    assert keyed < every / 5


@pytest.mark.parametrize(
    ("action", "index"),
    [
        ("bulk_scope_requeue_failed", "work_items_to_requeue"),
        ("bulk_scope_cancel_queued", "work_items_queued_by_kind"),
    ],
)
async def test_what_a_bulk_action_would_take_is_counted_on_its_index_alone(
    crowded_database_url: str, action: str, index: str
) -> None:
    plan = await explain(crowded_database_url, MONITOR_SQL[action], ALPHA)

    assert reads_only_indexes(plan), scans(plan)
    assert indexes_read(plan) == {index}
    assert heap_fetches(plan) == 0


@pytest.mark.parametrize(
    ("statement", "index", "extra"),
    [
        ("take_failed", "work_items_to_requeue", ()),
        ("cancel_queued", "work_items_queued_by_kind", (NOW, "no longer wanted")),
    ],
)
async def test_a_bulk_batch_reads_a_range_of_its_index_beside_the_history(
    crowded_database_url: str, statement: str, index: str, extra: tuple[Any, ...]
) -> None:
    arguments = (ALPHA, 0, 10**15, 50, *extra)
    plan = await explain_and_undo(crowded_database_url, STORE_SQL[statement], *arguments)

    [taking] = [node for node in nodes(plan) if node.get("Index Name") == index]
    assert ("Seq Scan", "work_items") not in scans(plan)
    # Its 50 entries and rows: a walk of the primary key through the history
    # to the first queued or failed item of the kind touches over ten thousand.
    assert pages_touched(taking) < 100
