"""The lease keeper's edges: its log lines, its reasons, and a heartbeat that takes a while."""

from __future__ import annotations

import asyncio
import gc
import logging
from datetime import timedelta
from typing import Any

import pytest
from service_bench import Bench, StoreSpy

from application import ExecutionOutcome, ExecutionStatus, ExecutorSettings
from domain import StoreUnavailableError, WorkContext

HEARTBEAT_LOG = "workqueue.heartbeat"


def start(bench: Bench, executor: Any) -> asyncio.Task[ExecutionOutcome | None]:
    return asyncio.create_task(executor.run_next())


async def stop(bench: Bench, run: asyncio.Task[ExecutionOutcome | None]) -> None:
    """End a run that may still hold its item, before anything is asserted.

    A test that failed with the run still holding its item on an unreachable store
    would otherwise leave the release retrying on a clock nobody advances.
    """
    bench.state.unavailable = False
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)


def heartbeat_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == HEARTBEAT_LOG]


def fields(record: logging.LogRecord) -> tuple[object, object, object]:
    return (
        getattr(record, "item_id", None),
        getattr(record, "kind", None),
        getattr(record, "attempt", None),
    )


class TestFailedHeartbeatsAreLogged:
    async def test_an_unreachable_store_is_one_warning_naming_the_item_and_the_error(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor())
        await bench.clock.settle()

        bench.state.unavailable = True
        await bench.clock.advance(2)
        records = heartbeat_records(caplog)
        await stop(bench, run)

        (record,) = records
        assert (record.levelname, record.getMessage()) == (
            "WARNING",
            f"heartbeat of alpha item {item_id} failed: the in-memory store is marked "
            "unavailable; retrying at the next tick",
        )
        assert fields(record) == (item_id, "alpha", 1)

    async def test_an_unexpected_store_error_is_logged_with_its_traceback(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        spy = StoreSpy(bench.store)

        async def broken(*args: Any, **kwargs: Any) -> bool:
            raise RuntimeError("driver bug")

        spy.heartbeat = broken  # type: ignore[method-assign]
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.advance(2)
        records = heartbeat_records(caplog)
        await stop(bench, run)

        (record,) = records
        assert (record.levelname, record.getMessage()) == (
            "ERROR",
            f"heartbeat of alpha item {item_id} raised; retrying at the next tick",
        )
        assert fields(record) == (item_id, "alpha", 1)
        assert record.exc_info is not None
        assert isinstance(record.exc_info[1], RuntimeError)

    async def test_a_heartbeat_that_hangs_is_abandoned_quietly_not_logged_as_an_error(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        spy = StoreSpy(bench.store)

        async def hang(*args: Any, **kwargs: Any) -> bool:
            await asyncio.Event().wait()
            return True

        spy.heartbeat = hang  # type: ignore[method-assign]
        await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.advance(60)

        assert run.done()
        outcome = run.result()
        assert outcome is not None
        assert outcome.error == "its lease ran out before a heartbeat could renew it"
        assert heartbeat_records(caplog) == []


class TestSlowHeartbeats:
    async def test_a_heartbeat_answered_before_the_lease_ends_renews_it(self, bench: Bench) -> None:
        t0 = bench.clock.now()
        spy = StoreSpy(bench.store)

        async def slow(*args: Any, **kwargs: Any) -> bool:
            await bench.clock.sleep(0.5)
            return await bench.store.heartbeat(*args, **kwargs)

        spy.heartbeat = slow  # type: ignore[method-assign]
        item_id = await bench.enqueue("a")
        bench.script.block("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.advance(3)

        item = await bench.item(item_id)
        running = not run.done()
        await stop(bench, run)

        assert item.heartbeat_at == t0 + timedelta(seconds=2.5)
        assert running

    async def test_a_heartbeat_failing_as_the_handler_returns_leaves_no_unobserved_error(
        self, bench: Bench, caplog: pytest.LogCaptureFixture
    ) -> None:
        gate = asyncio.Event()

        async def finish_with_the_gate(ctx: WorkContext) -> None:
            await gate.wait()

        spy = StoreSpy(bench.store)

        async def fail_with_the_gate(*args: Any, **kwargs: Any) -> bool:
            await gate.wait()
            raise StoreUnavailableError("gone")

        spy.heartbeat = fail_with_the_gate  # type: ignore[method-assign]
        bench.script.on("a", finish_with_the_gate)
        await bench.enqueue("a")
        settings = ExecutorSettings(heartbeat_interval=timedelta(seconds=1))
        run = start(bench, bench.executor(store=spy, settings=settings))
        await bench.clock.advance(1)

        gate.set()
        await bench.clock.settle()
        assert run.done()
        assert run.result() is not None
        gc.collect()
        await bench.clock.settle()

        assert "never retrieved" not in caplog.text
        assert run.result().status is ExecutionStatus.SUCCEEDED  # type: ignore[union-attr]
