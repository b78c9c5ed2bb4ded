"""The fault tests' own kind: a chore that naps and writes down every run in a side table.

Production code knows nothing of it; ``fault_worker_script.py`` serves it with the
production worker. Every attempt of a chore records ``(item_id, attempt, worker,
started_at, ended_at, failed)`` in ``fault_runs`` (see :mod:`fault_database`), so a
test can hold the queue's own bookkeeping (``attempt``, ``stalls``, ``failures``)
against what the handlers actually did.

The kind retries (:data:`CHORE_POLICY`): a chore that fails on purpose
(``fail_rate``) runs again after a short backoff, up to three attempts.
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import timedelta
from enum import StrEnum

import asyncpg

from workqueue.adapters.postgres import is_connection_loss
from workqueue.domain import Backoff, Clock, KindPolicy, WorkContext, WorkHandler, WorkPayload

__all__ = ["CHORE_POLICY", "Chore", "ChoreFailedOnPurpose", "ChoreHandler", "FaultKind"]

CHORE_POLICY = KindPolicy(
    max_attempts=3,
    backoff=Backoff(initial=timedelta(milliseconds=100), cap=timedelta(milliseconds=400)),
)
"""Three attempts a chore, retried after 75-100 ms, then 150-200 ms."""

# Tried again and again while the database is away (a restart, a terminated
# connection): a chore must not fail because its bookkeeping could not be written.
_RECORD_RETRY_SECONDS = 0.1

_RECORD_START = """
INSERT INTO fault_runs (item_id, attempt, worker) VALUES ($1, $2, $3)
ON CONFLICT (item_id, attempt) DO UPDATE SET reruns = fault_runs.reruns + 1
WHERE fault_runs.worker <> excluded.worker
"""
_RECORD_END = """
UPDATE fault_runs SET ended_at = clock_timestamp(), failed = $4
WHERE item_id = $1 AND attempt = $2 AND worker = $3
"""


class FaultKind(StrEnum):
    CHORE = "fault_chore"


class Chore(WorkPayload):
    """A nap of a known length, per attempt.

    :param naps: seconds each attempt naps; attempts beyond the list nap its last entry.
    :param jitter: up to this many seconds more, at random, per attempt.
    :param hog_first: the first attempt naps with ``time.sleep``, blocking its event
        loop, so no heartbeat can be sent meanwhile: a stalled process. It then
        returns without recording its end.
    :param hog_every: every attempt naps with ``time.sleep``, blocking its event loop
        (and every lane's on it): a poisoned item, whose own lease must run out each
        time while its lane-mates keep theirs (the loop watchdog, docs/adr/0036).
    :param fail_rate: the chance that an attempt, once its nap is over, records its
        end as failed and raises :class:`ChoreFailedOnPurpose`.
    """

    kind = FaultKind.CHORE

    naps: tuple[float, ...] = (0.1,)
    jitter: float = 0.0
    hog_first: bool = False
    hog_every: bool = False
    fail_rate: float = 0.0

    def nap_of(self, attempt: int) -> float:
        return self.naps[min(attempt, len(self.naps)) - 1] + random.uniform(0, self.jitter)


class ChoreFailedOnPurpose(Exception):
    """What a chore raises when its ``fail_rate`` says this attempt fails."""


class ChoreHandler(WorkHandler[Chore]):
    """Records the run's start, naps, records its end (and fails, if drawn to).

    A run cancelled mid-nap (lease lost, shutdown) keeps ``ended_at`` null. A
    retried start record by the same worker (its reply was lost) changes nothing;
    one by another worker for the same attempt counts a rerun, which must never
    happen.
    """

    policy = CHORE_POLICY

    def __init__(self, pool: asyncpg.Pool, clock: Clock, worker_id: str) -> None:
        self._pool = pool
        self._clock = clock
        self._worker_id = worker_id

    async def handle(self, payload: Chore, ctx: WorkContext) -> None:
        await self._record(_RECORD_START, ctx, ())
        ctx.report_progress({"worker": self._worker_id, "attempt": ctx.attempt})
        nap = payload.nap_of(ctx.attempt)
        if payload.hog_first and ctx.attempt == 1:
            time.sleep(nap)  # noqa: ASYNC251 - blocking the loop is the fault under test
            # Return with no await in between, so that what the worker does next is to
            # complete the item, not to notice the lease ran out: the run keeps no end.
            return
        if payload.hog_every:
            time.sleep(nap)  # noqa: ASYNC251 - blocking the loop is the fault under test
            # Its lease ran out meanwhile: the keeper, first to run, cancels it here.
            await asyncio.sleep(0)
        else:
            await self._clock.sleep(nap)
        fails = random.random() < payload.fail_rate
        await self._record(_RECORD_END, ctx, (fails,))
        if fails:
            raise ChoreFailedOnPurpose(f"chore failed on purpose in attempt {ctx.attempt}")

    async def _record(self, statement: str, ctx: WorkContext, more: tuple[object, ...]) -> None:
        while True:
            try:
                await self._pool.execute(
                    statement, ctx.item_id, ctx.attempt, self._worker_id, *more
                )
                return
            except Exception as error:
                if not is_connection_loss(error):
                    raise
            await asyncio.sleep(_RECORD_RETRY_SECONDS)
