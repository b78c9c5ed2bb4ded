"""Kinds, payloads and handlers that exist for the benchmark only.

Production wires :class:`workqueue.domain.WorkKind`; the services are generic over the kind
enum they are given, so the benchmark brings its own. Handlers may live here:
the rule that keeps handlers in ``entrypoints/worker/handlers`` covers src/ only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import StrEnum

from workqueue.domain import Clock, WorkContext, WorkHandler, WorkPayload

__all__ = [
    "BenchKind",
    "BusyHandler",
    "BusyJob",
    "NoopHandler",
    "NoopJob",
    "ParkedJob",
    "ParkedKind",
    "monotonic_ns",
]


class BenchKind(StrEnum):
    """What benchmark workers claim."""

    NOOP = "bench_noop"
    BUSY = "bench_busy"


class ParkedKind(StrEnum):
    """Items enqueued as neighbours and never claimed (no worker serves this enum)."""

    PARKED = "bench_parked"


class NoopJob(WorkPayload):
    """An item whose handler does nothing; ``seq`` lets the latency workload match it up."""

    kind = BenchKind.NOOP

    seq: int = 0


class BusyJob(WorkPayload):
    """An item that runs long enough to heartbeat, reporting progress as it goes."""

    kind = BenchKind.BUSY

    seconds: float


class ParkedJob(WorkPayload):
    """A queued neighbour that fills the pages around busy items, as other kinds would."""

    kind = ParkedKind.PARKED


def monotonic_ns() -> int:
    """CLOCK_MONOTONIC in nanoseconds: one clock for every process on the machine.

    The latency workload stamps the enqueue in one process and the handler start
    in another, so both must read the same system-wide clock.
    """
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class NoopHandler(WorkHandler[NoopJob]):
    """Returns at once; ``on_start`` (if any) hears of each item first.

    :param on_start: called with the payload and the handler's start time
        (:func:`monotonic_ns`) before the handler returns.
    """

    def __init__(self, on_start: Callable[[NoopJob, int], None] | None = None) -> None:
        self._on_start = on_start

    async def handle(self, payload: NoopJob, ctx: WorkContext) -> None:
        if self._on_start is not None:
            self._on_start(payload, monotonic_ns())


class BusyHandler(WorkHandler[BusyJob]):
    """Runs for ``payload.seconds`` of ``clock`` time, reporting ``{"step": n}`` each tick.

    :param clock: what the handler sleeps on.
    :param tick: seconds between progress reports.
    """

    def __init__(self, clock: Clock, *, tick: float = 0.1) -> None:
        self._clock = clock
        self._tick = tick

    async def handle(self, payload: BusyJob, ctx: WorkContext) -> None:
        steps = max(int(payload.seconds / self._tick), 1)
        for step in range(1, steps + 1):
            await self._clock.sleep(self._tick)
            ctx.report_progress({"step": step})
