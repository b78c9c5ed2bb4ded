"""The worker loop completes each item together with the next claim, and leaves none held."""

from __future__ import annotations

import asyncio
from typing import Any

from service_bench import Bench, StoreSpy

from application import LeaseRecovery, Worker, WorkScheduler
from domain import Lease, WorkContext, WorkStatus


def worker(bench: Bench, spy: StoreSpy) -> Worker:
    return Worker(
        executor=bench.executor(store=spy),
        scheduler=WorkScheduler(bench.queue, []),
        recovery=LeaseRecovery(bench.store),
        clock=bench.clock,
    )


async def test_a_cycle_claims_each_next_item_along_with_the_last_completion(
    bench: Bench,
) -> None:
    for label in ("a", "b", "c"):
        await bench.enqueue(label)
    spy = StoreSpy(bench.store)

    executed = await worker(bench, spy).run_cycle()

    assert executed == 3
    assert spy.calls == ["claim"] + ["complete_and_claim"] * 3 + ["claim"]
    assert bench.script.returned == ["a", "b", "c"]


async def test_a_stop_during_the_combined_call_releases_the_item_it_claimed(
    bench: Bench,
) -> None:
    first = await bench.enqueue("a")
    second = await bench.enqueue("b")
    spy = StoreSpy(bench.store)
    answer = asyncio.Event()

    async def slow(lease: Lease, **kwargs: Any) -> Any:
        await answer.wait()
        return await bench.store.complete_and_claim(lease, **kwargs)

    spy.complete_and_claim = slow  # type: ignore[method-assign]
    the_worker = worker(bench, spy)
    cycle = asyncio.create_task(the_worker.run_cycle())
    await bench.clock.settle()

    the_worker.stop()
    answer.set()
    executed = await cycle

    assert executed == 1
    assert (await bench.item(first)).status is WorkStatus.SUCCEEDED
    released = await bench.item(second)
    assert (released.status, released.attempt, released.stalls) == (WorkStatus.QUEUED, 1, 0)
    assert bench.script.started == ["a"]


async def test_a_cancelled_cycle_releases_the_item_it_held(bench: Bench) -> None:
    await bench.enqueue("a")
    second = await bench.enqueue("b")
    recovery_store = StoreSpy(bench.store)
    recovering = asyncio.Event()

    async def hang_after_the_first(*args: Any, **kwargs: Any) -> Any:
        if recovering.is_set():
            await asyncio.Event().wait()
        recovering.set()
        return await bench.store.recover_expired(*args, **kwargs)

    recovery_store.recover_expired = hang_after_the_first  # type: ignore[method-assign]
    the_worker = Worker(
        executor=bench.executor(),
        scheduler=WorkScheduler(bench.queue, []),
        recovery=LeaseRecovery(recovery_store),  # type: ignore[arg-type]
        clock=bench.clock,
    )

    async def ten_seconds(ctx: WorkContext) -> None:
        await bench.clock.sleep(10)

    bench.script.on("a", ten_seconds)
    cycle = asyncio.create_task(the_worker.run_cycle())
    # "a" outlasts the poll interval, so a recovery pass (which hangs) follows it, "b" held.
    await bench.clock.advance(10)
    held = (await bench.item(second)).status

    cycle.cancel()
    await asyncio.gather(cycle, return_exceptions=True)

    assert held is WorkStatus.RUNNING
    released = await bench.item(second)
    assert (released.status, released.attempt, released.stalls) == (WorkStatus.QUEUED, 1, 0)
    assert bench.script.started == ["a"]
