"""The watchdog's thread sees a handler block the event loop for real: it names the
blocker and the line it blocks at, and renews its lane-mate's lease meanwhile.

These tests block the loop for real (that is what they are about): until the
watchdog's thread has done what is tested, with a heartbeat interval of a tenth of
a second; leases are on the FakeClock.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import re
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest
from service_bench import Bench, StoreSpy

from workqueue.adapters.testing import FakeClock
from workqueue.application import ExecutorSettings, WorkExecutor
from workqueue.application.renewals import Renewals
from workqueue.application.watchdog import LoopPulse, LoopWatchdog, line_of
from workqueue.domain import WorkContext, WorkStore
from workqueue.entrypoints.worker.watchdog import loop_watchdog

INTERVAL = timedelta(seconds=0.1)
LEASE = timedelta(seconds=10)
SETTINGS = ExecutorSettings(heartbeat_interval=INTERVAL, lease_duration=LEASE)
RENEWED = threading.Event()
"""Set once the watchdog has renewed a lease: what the blocking handler waits for."""


async def block_the_loop(ctx: WorkContext) -> None:
    RENEWED.wait(timeout=30)  # the block the log must name


async def test_the_blocker_is_named_with_its_line_and_its_lane_mate_keeps_its_lease(
    bench: Bench, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="workqueue.watchdog")
    renewals = Renewals()
    lanes = [
        WorkExecutor(
            bench.store,
            bench.registry,
            bench.clock,
            worker_id="lanes",
            settings=SETTINGS,
            renewals=renewals,
        )
        for _ in range(2)
    ]
    opened: list[WorkStore] = []
    spy = StoreSpy(bench.store)

    async def renew_and_tell(*args: Any, **kwargs: Any) -> Any:
        answers = await bench.store.heartbeat_many(*args, **kwargs)
        RENEWED.set()
        return answers

    spy.overrides["heartbeat_many"] = renew_and_tell
    RENEWED.clear()

    @asynccontextmanager
    async def own_store() -> AsyncIterator[WorkStore]:
        opened.append(bench.store)
        yield spy  # type: ignore[misc]

    watchdog = loop_watchdog(
        lanes, renewals, bench.clock, open_store=own_store, worker_id="lanes", settings=SETTINGS
    )
    release = bench.script.block("mate")
    mate = await bench.enqueue("mate")
    mate_run = asyncio.create_task(lanes[1].run_next())
    await bench.clock.settle()
    await bench.clock.advance(0.05)
    bench.script.on("blocker", block_the_loop)
    blocker = await bench.enqueue("blocker")
    watchdog.start()
    try:
        await lanes[0].run_next()
    finally:
        await watchdog.stop()

    renewed_until = bench.clock.now() + LEASE
    running = lanes[1].running
    assert running is not None
    assert running[1].secured_until == renewed_until
    assert bench.state.items[mate].lease_expires_at == renewed_until
    release.set()
    await mate_run
    lines = [r.getMessage() for r in caplog.records if r.name == "workqueue.watchdog"]
    line_number = block_the_loop.__code__.co_firstlineno + 1
    assert re.fullmatch(
        rf"the event loop has been blocked for \d+\.\d s by alpha item {blocker} \(attempt 1\)"
        rf" at {re.escape(__file__)}:{line_number} in block_the_loop; .*",
        lines[0],
    ), lines[0]
    assert re.fullmatch(
        rf"the event loop was blocked for at least \d+\.\d s"
        rf" by alpha item {blocker} \(attempt 1\)",
        lines[-1],
    ), lines[-1]
    assert len(opened) == 1


class TestThePulse:
    async def test_it_beats_at_once_and_every_period_until_stopped(self) -> None:
        ticks = itertools.count()
        pulse = LoopPulse(0.0, monotonic=lambda: float(next(ticks)))
        assert pulse.last == 0.0
        pulse.start(asyncio.get_running_loop())
        assert pulse.last == 1.0
        for _ in range(3):
            await asyncio.sleep(0)
        assert pulse.last > 1.0
        pulse.stop()
        stopped_at = pulse.last
        for _ in range(3):
            await asyncio.sleep(0)
        assert pulse.last == stopped_at

    def test_a_pulse_never_started_stops_without_a_word(self) -> None:
        LoopPulse(0.25).stop()


async def test_a_watchdog_never_started_stops_at_once(bench: Bench) -> None:
    watchdog = loop_watchdog(
        [],
        Renewals(),
        bench.clock,
        open_store=None,
        worker_id="w",
        settings=SETTINGS,  # type: ignore[arg-type]
    )
    await watchdog.stop()


def test_a_workers_watchdog_waits_for_its_thread_a_heartbeat_interval_at_most() -> None:
    watchdog = loop_watchdog(
        [],
        Renewals(),
        FakeClock(),
        open_store=None,  # type: ignore[arg-type]
        worker_id="w",
        settings=SETTINGS,
    )
    assert watchdog.stop_grace == INTERVAL.total_seconds()


class LookRecorder:
    """A guard that notes each look made once the loop waits for one
    (:meth:`wait_for_look`), and in which thread it was made."""

    def __init__(self) -> None:
        self.looks: list[tuple[float, asyncio.Task[object] | None, str]] = []
        self.threads: list[threading.Thread] = []
        self.looked = threading.Event()
        self._waiting = threading.Event()
        self.closed = False

    def wait_for_look(self) -> bool:
        """Block the calling thread until the watchdog has looked while it blocked here.

        A look made before (the watchdog's thread starts looking at once, while the
        loop's thread may still be on an earlier line) is not noted.
        """
        self._waiting.set()
        return self.looked.wait(timeout=30)

    async def look(
        self, *, blocked_for: float, running: asyncio.Task[object] | None, where: Callable[[], str]
    ) -> None:
        if not self._waiting.is_set():
            return
        self.looks.append((blocked_for, running, where()))
        self.threads.append(threading.current_thread())
        self.looked.set()

    async def close(self) -> None:
        self.closed = True


async def test_the_watchdog_looks_from_a_daemon_thread_of_its_own_on_its_clock(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="workqueue.watchdog")
    recorder = LookRecorder()
    watchdog = LoopWatchdog(
        recorder,  # type: ignore[arg-type]
        period=0.001,
        stop_grace=30.0,
        monotonic=lambda: 7.5,
    )
    watchdog.start()
    try:
        # Block the loop until the watchdog has looked at it once.
        wait_line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        assert recorder.wait_for_look()
        test_name = inspect.currentframe().f_code.co_name  # type: ignore[union-attr]
    finally:
        await watchdog.stop()
    blocked_for, running, where = recorder.looks[0]
    assert blocked_for == 0.0
    assert running is asyncio.current_task()
    # The running task is this test's, which blocks the loop at the wait above.
    assert where == f" at {__file__}:{wait_line} in {test_name}", where
    thread = recorder.threads[0]
    assert (thread.name, thread.daemon) == ("workqueue-watchdog", True)
    assert thread is not threading.current_thread()
    assert not thread.is_alive()
    assert recorder.closed
    # It stopped within its grace: nothing to say.
    assert not [r for r in caplog.records if r.name == "workqueue.watchdog"]


class SlowToClose(LookRecorder):
    """A guard whose store takes until ``release`` is set to close."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    async def close(self) -> None:
        self.release.wait(timeout=30)
        await super().close()


async def test_a_watchdog_slow_to_stop_is_left_behind_with_a_warning_after_its_grace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="workqueue.watchdog")
    guard = SlowToClose()
    watchdog = LoopWatchdog(guard, period=0.001, stop_grace=0.0)  # type: ignore[arg-type]
    watchdog.start()
    assert guard.wait_for_look()

    await watchdog.stop()

    # The worker's stop went on; the thread still closes its store, then ends.
    assert not guard.closed
    assert [r.getMessage() for r in caplog.records if r.name == "workqueue.watchdog"] == [
        "the watchdog did not stop within 0.0 s (a look at the loop, or the closing of its"
        " store, is slow); the worker stops without waiting for it"
    ]
    guard.release.set()
    thread = guard.threads[0]
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert guard.closed


class TestTheLineItNames:
    def test_a_thread_that_is_gone_is_at_no_line(self) -> None:
        finished = threading.Thread(target=lambda: None)
        finished.start()
        finished.join()
        assert finished.ident is not None
        assert line_of(finished.ident) == ""

    def test_without_a_coroutine_it_is_the_threads_innermost_line(self) -> None:
        waiting = threading.Event()
        thread = threading.Thread(target=waiting.wait)
        thread.start()
        try:
            assert thread.ident is not None
            assert re.fullmatch(
                rf" at {re.escape(threading.__file__)}:\d+ in wait", line_of(thread.ident)
            )
        finally:
            waiting.set()
            thread.join()
