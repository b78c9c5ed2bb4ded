"""What the combined complete-and-claim path writes of progress, for both items it touches."""

from __future__ import annotations

import asyncio

from service_bench import Bench

from domain import WorkContext, WorkStatus


async def test_a_success_completed_with_the_next_claim_keeps_the_progress_it_reported(
    bench: Bench,
) -> None:
    first = await bench.enqueue("a")
    await bench.enqueue("b")

    async def report(ctx: WorkContext) -> None:
        ctx.report_progress({"done": 1})

    bench.script.on("a", report)
    executor = bench.executor()

    await executor.run_next(claim_next=True)

    item = await bench.item(first)
    assert (item.status, item.progress) == (WorkStatus.SUCCEEDED, {"done": 1})
    assert executor.holding is True


async def test_a_held_item_handed_back_keeps_the_progress_of_its_earlier_attempt(
    bench: Bench,
) -> None:
    await bench.enqueue("a")
    second = await bench.enqueue("b")
    first_lease = (await bench.claim_as_dead_worker()).lease
    second_lease = (await bench.claim_as_dead_worker()).lease
    await bench.store.release(second_lease, progress={"step": 2})
    await bench.store.release(first_lease, progress=None)
    executor = bench.executor()
    await executor.run_next(claim_next=True)
    assert executor.holding is True

    await executor.release_held()

    item = await bench.item(second)
    assert (item.status, item.progress) == (WorkStatus.QUEUED, {"step": 2})


async def test_a_caller_cancelled_after_its_handler_returned_completes_and_claims_nothing_along(
    bench: Bench,
) -> None:
    first = await bench.enqueue("a")
    second = await bench.enqueue("b")
    executor = bench.executor()
    run: asyncio.Task[object] | None = None

    async def cancel_the_caller_then_return(ctx: WorkContext) -> None:
        assert run is not None
        run.cancel()

    bench.script.on("a", cancel_the_caller_then_return)
    run = asyncio.create_task(executor.run_next(claim_next=True))
    await bench.clock.settle()

    assert run.cancelled()
    assert (await bench.item(first)).status is WorkStatus.SUCCEEDED
    assert (await bench.item(second)).status is WorkStatus.QUEUED
    assert executor.holding is False
