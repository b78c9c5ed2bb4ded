"""The lease keeper starts only for a handler that outlives its first step."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest
from service_bench import Bench, StoreSpy

from application.claim import Claim
from application.context import ExecutionContext
from application.heartbeat import LeaseKeeper
from domain import WorkContext, WorkItem, WorkStatus

LEASE = timedelta(seconds=60)
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ITEM = WorkItem(
    id=1,
    kind="alpha",
    payload={},
    status=WorkStatus.RUNNING,
    attempt=1,
    stalls=0,
    dedup_key=None,
    enqueued_at=T0,
    started_at=T0,
    heartbeat_at=T0,
    lease_expires_at=T0 + LEASE,
    finished_at=None,
    worker_id="worker-1",
    progress=None,
    error=None,
)


def keeper_for(
    bench: Bench,
    handler: asyncio.Task[None],
    spy: StoreSpy,
    *,
    secured_for: timedelta = LEASE,
) -> tuple[Claim, LeaseKeeper]:
    """A keeper of a claim's lease, secured for ``secured_for`` from now (negative: run out)."""
    claim = Claim(ITEM, bench.clock.now(), secured_for)
    return claim, LeaseKeeper(
        spy,  # type: ignore[arg-type]
        bench.clock,
        claim,
        handler=handler,
        context=ExecutionContext(item_id=1, attempt=1, kind="alpha"),
        interval=timedelta(seconds=2),
        lease_duration=LEASE,
    )


async def test_a_handler_done_in_its_first_step_gets_no_keeper(bench: Bench) -> None:
    async def instant() -> None:
        return None

    handler = asyncio.create_task(instant())
    _, keeper = keeper_for(bench, handler, StoreSpy(bench.store))

    keeper.start()
    await bench.clock.settle()

    assert handler.done()
    assert bench.clock.sleepers == 0


async def test_a_handler_still_running_after_its_first_step_gets_a_keeper(bench: Bench) -> None:
    handler = asyncio.create_task(asyncio.Event().wait())
    spy = StoreSpy(bench.store)
    _, keeper = keeper_for(bench, handler, spy)

    keeper.start()
    await bench.clock.settle()
    sleeping = bench.clock.sleepers
    keeper.stop()
    await bench.clock.settle()
    handler.cancel()

    assert sleeping == 1
    assert bench.clock.sleepers == 0
    assert spy.calls == []


async def test_a_keeper_stopped_before_the_loop_turns_never_starts(bench: Bench) -> None:
    handler = asyncio.create_task(asyncio.Event().wait())
    _, keeper = keeper_for(bench, handler, StoreSpy(bench.store))

    keeper.start()
    keeper.stop()
    await bench.clock.settle()
    handler.cancel()

    assert bench.clock.sleepers == 0


async def test_a_short_item_leaves_no_sleeper_and_a_long_one_heartbeats(bench: Bench) -> None:
    await bench.enqueue("short")
    await bench.enqueue("long")

    async def long(ctx: WorkContext) -> None:
        await bench.clock.sleep(5)

    bench.script.on("long", long)
    spy = StoreSpy(bench.store)
    executor = bench.executor(store=spy)

    await executor.run_next()
    after_short = bench.clock.sleepers
    run = asyncio.create_task(executor.run_next())
    await bench.clock.advance(5)
    await run

    assert after_short == 0
    assert spy.count("heartbeat") == 2
    assert bench.clock.sleepers == 0


async def test_a_cancelled_run_leaves_no_callback_error_behind(
    bench: Bench, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="asyncio")
    item_id = await bench.enqueue("a")
    bench.script.block("a")
    run = asyncio.create_task(bench.executor().run_next())
    await bench.clock.settle()

    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    await bench.clock.settle()

    assert bench.script.cancelled == ["a"]
    assert (await bench.item(item_id)).status.value == "queued"
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


async def test_a_lease_run_out_after_the_handler_returned_is_left_to_the_outcome_write(
    bench: Bench,
) -> None:
    async def instant() -> None:
        return None

    handler = asyncio.create_task(instant())
    await asyncio.wait((handler,))
    claim, keeper = keeper_for(
        bench, handler, StoreSpy(bench.store), secured_for=-timedelta(seconds=1)
    )

    await keeper.keep()

    assert claim.lost is None
    assert not handler.cancelled()


async def test_a_lease_run_out_while_the_handler_runs_is_lost_and_cancels_it(
    bench: Bench,
) -> None:
    handler = asyncio.create_task(asyncio.Event().wait())
    claim, keeper = keeper_for(
        bench, handler, StoreSpy(bench.store), secured_for=-timedelta(seconds=1)
    )

    await keeper.keep()
    await asyncio.gather(handler, return_exceptions=True)

    assert claim.lost == "its lease ran out before a heartbeat could renew it"
    assert handler.cancelled()
