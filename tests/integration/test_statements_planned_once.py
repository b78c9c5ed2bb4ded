"""The statements a worker runs for every item are planned once a connection, not on every call.

PostgreSQL plans a prepared statement for each of its first five calls, then
keeps one plan for every call (a generic plan) unless that plan looks dearer
than the ones made for each call's values. The claim and completion statements
cost more to plan than to run (bench/README.md, "Planned once"): planned on
every call, they halved a worker's throughput. Nothing here is timed: the
server counts, for each statement a connection prepared, how often it planned it
for a call and how often it used the plan it keeps.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import asyncpg
import pytest

from workqueue.adapters.postgres import (
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, ContractKind
from workqueue.domain import EnqueueRequest, RunOutcome, WorkItem

LEASE = timedelta(seconds=60)
KINDS = [ContractKind.ALPHA]
CALLS = 12
BACKLOG = 5_000
# The calls PostgreSQL plans for their own values before it weighs keeping one plan.
FIRST_CALLS_PLANNED = 5


async def plans_of_each_statement(pool: asyncpg.Pool) -> dict[str, tuple[int, int]]:
    """Each statement the pool's connection prepared: (calls planned, calls on the kept plan)."""
    async with pool.acquire() as connection:
        rows = await connection.fetch(
            "SELECT statement, custom_plans, generic_plans FROM pg_prepared_statements"
        )
    return {row["statement"]: (row["custom_plans"], row["generic_plans"]) for row in rows}


def first_line(statement: str) -> str:
    return next(line for line in statement.splitlines() if line.strip())


async def run_every_way_an_item_ends(
    store: PostgresWorkStore, queue: PostgresWorkQueue, clock: FakeClock
) -> None:
    """Each ending of a run, then completions of two lanes together, CALLS times each."""

    async def claimed() -> WorkItem:
        item = await store.claim(KINDS, worker_id="w", lease_duration=LEASE)
        assert item is not None
        return item

    endings: list[Callable[[], RunOutcome]] = [
        RunOutcome.succeeded,
        lambda: RunOutcome.failed("boom"),
        RunOutcome.released,
        lambda: RunOutcome.retried("boom", clock.now()),
        lambda: RunOutcome.snoozed(clock.now()),
    ]
    for _ in range(len(endings) * CALLS + 2):
        await queue.enqueue(AlphaJob(number=0))
    for ending in endings:
        for _ in range(CALLS):
            item = await claimed()
            assert await store.heartbeat_many([(item.lease, None)], lease_duration=LEASE)
            assert await store.finish(item.lease, ending())
    leases = [(await claimed()).lease, (await claimed()).lease]
    for _ in range(CALLS):
        answers = await store.complete_and_claim_many(
            [(lease, None) for lease in leases], kinds=KINDS, worker_id="w", lease_duration=LEASE
        )
        leases = [item.lease for held, item in answers if held and item is not None]
        assert len(leases) == 2


@pytest.mark.parametrize("cap", [None, 1_000], ids=["uncapped", "under a cap that never binds"])
async def test_every_statement_of_an_items_run_keeps_one_plan_after_its_first_calls(
    database_url: str, cap: int | None
) -> None:
    pool = await create_pool(database_url, min_size=1, max_size=1)
    try:
        clock = FakeClock()
        if cap is not None:
            # Its claims are then complete_and_claim_capped's (docs/adr/0035).
            await PostgresWorkStore(pool, clock).cap_kind(ContractKind.ALPHA.value, cap)
        # A backlog, as the server's statistics see it: what a plan kept for every
        # call must not look dearer than one made for a call's values.
        await PostgresWorkQueue(pool, clock).enqueue_many(
            [EnqueueRequest(AlphaJob(number=n)) for n in range(BACKLOG)]
        )
        await pool.execute("ANALYZE work_items")
        await run_every_way_an_item_ends(
            PostgresWorkStore(pool, clock), PostgresWorkQueue(pool, clock), clock
        )
        plans = await plans_of_each_statement(pool)
    finally:
        await close_pool(pool)
    called_often = {
        statement: counts for statement, counts in plans.items() if sum(counts) >= CALLS
    }
    # The enqueue, the claim, the heartbeat of many, the finish, the completion of many.
    assert len(called_often) >= 5, sorted(map(first_line, called_often))
    # Under a cap, the claims and completions were the capped statement's.
    assert any("work_kind_slots" in statement for statement in called_often) is (cap is not None)
    planned_every_call = {
        first_line(statement): custom
        for statement, (custom, _) in called_often.items()
        if custom > FIRST_CALLS_PLANNED
    }
    assert planned_every_call == {}
