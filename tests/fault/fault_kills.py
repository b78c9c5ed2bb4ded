"""Killing workers while they drain: the watch that times each killed item's recovery,
and the driver that SIGKILLs a random worker every one to two seconds."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
from fault_database import running_items_of, unfinished_count
from fault_fleet import Fleet, eventually


class RecoveryWatch:
    """Times how long each killed worker's items stay ``running`` under the dead lease."""

    def __init__(self, connection: asyncpg.Connection, *, pooled: bool = False) -> None:
        self._connection = connection
        self._pooled = pooled
        self._pending: dict[tuple[int, int], float] = {}
        self.recoveries: dict[tuple[int, int], float] = {}
        self.kills: list[str] = []
        """One line per kill noted: when (UTC), whom, and the leases it held."""

    async def killed(self, connection: asyncpg.Connection, worker_id: str, at: float) -> None:
        """Note the leases ``worker_id`` held when it was killed at ``at`` (monotonic).

        Waits until the server has ended the dead worker's sessions: a claim it sent
        just before dying may still commit until then. ``connection`` is the
        caller's: the watch's own is busy polling.
        """

        # Through a pooler the server sessions outlive the worker (PgBouncer sets each
        # one's application_name to its client's as it lends it): there, wait until
        # none of them runs a statement of the dead worker's.
        in_flight = " AND state <> 'idle'" if self._pooled else ""

        async def sessions_gone() -> bool:
            sessions: int = await connection.fetchval(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = $1" + in_flight,
                worker_id,
            )
            return sessions == 0

        await eventually(sessions_gone, within=10, what=f"end of {worker_id}'s sessions")
        held = await running_items_of(connection, worker_id)
        for lease in held:
            self._pending[lease] = at
        noted = time.monotonic() - at
        self.kills.append(
            f"{datetime.now(UTC):%H:%M:%S.%f} {worker_id} killed, {noted:.2f} s before its"
            f" leases were read: {held}"
        )

    @property
    def settled(self) -> bool:
        return not self._pending

    async def until_settled(self, *, within: float) -> None:
        """Wait until every killed item noted so far has been recovered."""

        async def settled() -> bool:
            return self.settled

        await eventually(settled, within=within, what="recovery of every killed item")

    @property
    def longest(self) -> float:
        return max(self.recoveries.values(), default=0.0)

    async def watch(self) -> None:
        """Poll the pending leases; one is recovered once its row left that attempt's run."""
        while True:
            pending = list(self._pending)
            if pending:
                rows = await self._connection.fetch(
                    "SELECT id, attempt, status FROM work_items WHERE id = ANY($1::bigint[])",
                    [item_id for item_id, _ in pending],
                )
                now = time.monotonic()
                current = {row["id"]: (row["attempt"], row["status"]) for row in rows}
                for item_id, attempt in pending:
                    if current.get(item_id) != (attempt, "running"):
                        killed_at = self._pending.pop((item_id, attempt))
                        self.recoveries[(item_id, attempt)] = now - killed_at
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def watching(
    url: str, *, pooled: bool = False
) -> AsyncIterator[tuple[RecoveryWatch, asyncpg.Connection]]:
    watcher_connection = await asyncpg.connect(url)
    driver_connection = await asyncpg.connect(url)
    watch = RecoveryWatch(watcher_connection, pooled=pooled)
    task = asyncio.create_task(watch.watch())
    try:
        yield watch, driver_connection
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await watcher_connection.close()
        await driver_connection.close()


async def kill_until_drained(
    fleet: Fleet,
    watch: RecoveryWatch,
    connection: asyncpg.Connection,
    *,
    started: float,
    deadline: float,
) -> int:
    """SIGKILL a random worker every 1-2 s, replacing it, until no item is left unfinished;
    return how many were killed. Fails once ``deadline`` seconds have passed since
    ``started`` (monotonic)."""
    kills = 0
    next_kill = time.monotonic() + random.uniform(1.0, 2.0)
    while await unfinished_count(connection):
        assert time.monotonic() - started < deadline, fleet.outputs()
        await asyncio.sleep(max(0.0, next_kill - time.monotonic()))
        victim = random.choice(fleet.alive)
        victim.kill()
        killed_at = time.monotonic()
        next_kill = killed_at + random.uniform(1.0, 2.0)
        kills += 1
        await watch.killed(connection, victim.worker_id, killed_at)
        # The next kill waits for the replacement to be up (it normally is in well
        # under a second): on a loaded machine, killing workers faster than they
        # start would leave nobody to recover anything, which is not under test.
        await fleet.start().wait_for_output("worker started", within=60)
    return kills
