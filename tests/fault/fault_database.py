"""The fault tests' view of a database: side tables, and the checks made against them.

:func:`install_side_tables` adds, beside the queue's own tables:

- ``fault_runs``: one row per attempt a chore handler started (see fault_kinds.py),
  with whether it failed on purpose;
- ``fault_writes``: one row per UPDATE of ``work_items``, written by a trigger,
  with the lease holder before the write (``worker_id``) and the writer (the
  session's ``application_name``, which each worker sets to its worker id).

From these, :func:`audit` tells whether anything was lost, whether a stale
attempt ever changed a row, and whether ``attempt`` and ``stalls`` agree with what
the handlers did.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg
from fault_kinds import CHORE_POLICY, Chore

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkQueue, close_pool, create_pool
from workqueue.domain import EnqueueRequest

__all__ = [
    "Audit",
    "ItemRow",
    "audit",
    "enqueue_chores",
    "install_side_tables",
    "item_row",
    "item_rows",
    "run_of",
    "running_items_of",
    "unfinished_count",
    "write_trails",
]

_SIDE_TABLES = """
CREATE TABLE fault_runs (
    item_id bigint NOT NULL,
    attempt integer NOT NULL,
    worker text NOT NULL,
    started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    ended_at timestamptz,
    reruns integer NOT NULL DEFAULT 0,
    failed boolean NOT NULL DEFAULT false,
    PRIMARY KEY (item_id, attempt)
);

CREATE TABLE fault_writes (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    item_id bigint NOT NULL,
    old_status text NOT NULL,
    new_status text NOT NULL,
    old_attempt integer NOT NULL,
    new_attempt integer NOT NULL,
    old_stalls integer NOT NULL,
    new_stalls integer NOT NULL,
    holder text,
    writer text NOT NULL,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION fault_note_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fault_writes (item_id, old_status, new_status, old_attempt, new_attempt,
                              old_stalls, new_stalls, holder, writer)
    VALUES (OLD.id, OLD.status, NEW.status, OLD.attempt, NEW.attempt,
            OLD.stalls, NEW.stalls, OLD.worker_id, current_setting('application_name'));
    RETURN NEW;
END
$$;

CREATE TRIGGER fault_note_write AFTER UPDATE ON work_items
    FOR EACH ROW EXECUTE FUNCTION fault_note_write();
"""

# A write is stale when it changed a finished item, when it wrote to a running
# item under its current attempt (heartbeat, complete, fail, retry, release:
# attempt and stalls unchanged) without being the lease holder, or when it
# finished a queued item (an ended attempt's outcome landing on the item it had
# put back for a retry). Claims change the attempt and lease recovery the stalls;
# any worker may do those.
_STALE_WRITES = """
SELECT item_id, old_status, new_status, old_attempt, holder, writer, written_at
FROM fault_writes
WHERE old_status IN ('succeeded', 'failed')
   OR (old_status = 'running' AND new_attempt = old_attempt AND new_stalls = old_stalls
       AND writer IS DISTINCT FROM holder)
   OR (old_status = 'queued' AND new_status IN ('succeeded', 'failed'))
ORDER BY seq
"""
_ANONYMOUS_WRITES = "SELECT count(*) FROM fault_writes WHERE writer = ''"
_ITEMS = """
SELECT id, status, attempt, stalls, worker_id, error, progress::text AS progress,
       lease_expires_at, finished_at, failures::text AS failures
FROM work_items ORDER BY id
"""
_ITEM = """
SELECT id, status, attempt, stalls, worker_id, error, progress::text AS progress,
       lease_expires_at, finished_at, failures::text AS failures
FROM work_items WHERE id = $1
"""
_RUNS = "SELECT item_id, attempt, worker, started_at, ended_at, reruns, failed FROM fault_runs"
_RUN = """
SELECT item_id, attempt, worker, started_at, ended_at, reruns, failed
FROM fault_runs WHERE item_id = $1 AND attempt = $2
"""
_TRAIL = """
SELECT written_at, old_status, new_status, old_attempt, new_attempt, old_stalls, new_stalls,
       holder, writer
FROM fault_writes WHERE item_id = $1 ORDER BY seq
"""
_UNFINISHED = "SELECT count(*) FROM work_items WHERE status IN ('queued', 'running')"
_RUNNING_OF = """
SELECT id, attempt FROM work_items WHERE status = 'running' AND worker_id = $1 ORDER BY id
"""


async def write_trails(url: str, item_ids: Collection[int]) -> str:
    """Every write to each of ``item_ids`` and each of their runs, one line each: what
    an assertion message shows of items that did what they must not."""
    connection = await asyncpg.connect(url)
    try:
        lines = []
        for item_id in sorted(item_ids):
            lines.append(f"--- item {item_id}:")
            for row in await connection.fetch(_TRAIL, item_id):
                lines.append(
                    f"{row['written_at']:%H:%M:%S.%f} {row['old_status']}->{row['new_status']}"
                    f" attempt {row['old_attempt']}->{row['new_attempt']}"
                    f" stalls {row['old_stalls']}->{row['new_stalls']}"
                    f" holder {row['holder']} writer {row['writer']}"
                )
            for row in await connection.fetch(_RUNS + " WHERE item_id = $1", item_id):
                lines.append(f"run: {dict(row)}")
    finally:
        await connection.close()
    return "\n".join(lines)


async def install_side_tables(url: str) -> None:
    """Create ``fault_runs``, ``fault_writes`` and the trigger that fills the latter."""
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(_SIDE_TABLES)
    finally:
        await connection.close()


async def enqueue_chores(url: str, chores: Sequence[Chore]) -> list[int]:
    """Enqueue ``chores`` through the production queue, in one round trip; their ids."""
    pool = await create_pool(url, min_size=1, max_size=1)
    try:
        queue = PostgresWorkQueue(pool, SystemClock())
        results = await queue.enqueue_many([EnqueueRequest(chore) for chore in chores])
    finally:
        await close_pool(pool)
    return [result.id for result in results]


@dataclass(frozen=True, slots=True)
class ItemRow:
    id: int
    status: str
    attempt: int
    stalls: int
    worker_id: str | None
    error: str | None
    progress: str | None
    lease_expires_at: datetime | None
    finished_at: datetime | None
    failures: tuple[dict[str, Any], ...]

    @property
    def handler_failures(self) -> dict[int, str]:
        """The attempts whose handler failed (retried, or the last), and their errors."""
        return {
            failure["attempt"]: failure["error"]
            for failure in self.failures
            if not failure["error"].startswith("stalled")
        }


def _item_of(row: asyncpg.Record) -> ItemRow:
    fields = dict(row)
    fields["failures"] = tuple(json.loads(fields["failures"]))
    return ItemRow(**fields)


async def item_rows(connection: asyncpg.Connection) -> list[ItemRow]:
    return [_item_of(row) for row in await connection.fetch(_ITEMS)]


async def item_row(connection: asyncpg.Connection, item_id: int) -> ItemRow:
    row = await connection.fetchrow(_ITEM, item_id)
    assert row is not None, f"item {item_id} is gone"
    return _item_of(row)


async def run_of(
    connection: asyncpg.Connection, item_id: int, attempt: int
) -> dict[str, Any] | None:
    """The ``fault_runs`` row of one attempt, or None if its handler never started."""
    row = await connection.fetchrow(_RUN, item_id, attempt)
    return None if row is None else dict(row)


async def unfinished_count(connection: asyncpg.Connection) -> int:
    count: int = await connection.fetchval(_UNFINISHED)
    return count


async def running_items_of(connection: asyncpg.Connection, worker_id: str) -> list[tuple[int, int]]:
    """``(id, attempt)`` of every item ``worker_id`` holds a lease on."""
    return [(row["id"], row["attempt"]) for row in await connection.fetch(_RUNNING_OF, worker_id)]


@dataclass
class Audit:
    """What a finished run left behind, and everything wrong with it."""

    items: list[ItemRow]
    stale_writes: list[dict[str, Any]]
    anonymous_writes: int
    runs: dict[tuple[int, int], dict[str, Any]]
    problems: list[str] = field(default_factory=list)

    @property
    def stalled_out(self) -> list[ItemRow]:
        return [
            item
            for item in self.items
            if item.status == "failed" and (item.error or "").startswith("stalled")
        ]

    @property
    def failed_for_good(self) -> list[ItemRow]:
        """Items whose handler failed in every attempt of the policy."""
        return [
            item
            for item in self.items
            if item.status == "failed" and not (item.error or "").startswith("stalled")
        ]

    @property
    def retries(self) -> int:
        """Handler failures that were given another attempt."""
        return sum(len(item.handler_failures) for item in self.items) - len(self.failed_for_good)

    @property
    def total_stalls(self) -> int:
        return sum(item.stalls for item in self.items)

    def lost(self, enqueued: set[int]) -> int:
        """Enqueued items that are missing, or still not finished."""
        finished = {item.id for item in self.items if item.status in ("succeeded", "failed")}
        return len(enqueued - finished)


async def audit(
    url: str,
    *,
    enqueued: set[int],
    max_stalls: int,
    releases_allowed: bool = False,
    released: Collection[tuple[int, int]] = (),
) -> Audit:
    """Read the run's outcome and list every way it breaks the queue's promises.

    - none lost: every enqueued item is there, succeeded or failed, none queued or running;
    - failed as stalled, after exactly ``max_stalls`` stalls, or as its handler
      failed in each of the chore policy's ``max_attempts``;
    - a succeeded item's last attempt ran to its end, by the worker the row names;
    - every failure the row keeps is of an attempt whose handler failed (fault_runs)
      and ran to its end (a failed attempt whose outcome was never written, its
      worker killed or its database away, is a stall instead);
    - no attempt ran twice, and no run has an attempt the row never reached;
    - every attempt but the last ended in a stall or a handler failure, except the
      ``released`` ones (``(item id, attempt)`` pairs the workers logged as
      released: an item held for a next turn goes back without a stall when the
      run that held it ends); with ``releases_allowed``, any attempt may have been
      released: so no item ran more often than its policy's attempts plus its
      stalls (and releases);
    - no stale write changed a row.
    """
    connection = await asyncpg.connect(url)
    try:
        items = await item_rows(connection)
        stale = [dict(row) for row in await connection.fetch(_STALE_WRITES)]
        anonymous = await connection.fetchval(_ANONYMOUS_WRITES)
        runs = {
            (row["item_id"], row["attempt"]): dict(row) for row in await connection.fetch(_RUNS)
        }
    finally:
        await connection.close()
    result = Audit(items=items, stale_writes=stale, anonymous_writes=anonymous, runs=runs)
    problems = result.problems
    by_id = {item.id: item for item in items}
    if missing := enqueued - set(by_id):
        problems.append(f"items lost from the table: {sorted(missing)[:20]}")
    if anonymous:
        problems.append(f"{anonymous} writes came from a session without a worker id")
    if stale:
        problems.append(f"{len(stale)} stale writes changed a row, first: {stale[0]}")
    for item in items:
        releases = sum(1 for item_id, _ in released if item_id == item.id)
        problems.extend(_item_problems(item, runs, max_stalls, releases_allowed, releases))
        problems.extend(_failure_problems(item, runs))
    for (item_id, attempt), run in runs.items():
        if run["reruns"]:
            problems.append(f"item {item_id} attempt {attempt} ran {run['reruns'] + 1} times")
        item = by_id.get(item_id)
        if item is not None and attempt > item.attempt:
            problems.append(f"item {item_id} ran attempt {attempt} beyond its row's {item.attempt}")
    return result


def _item_problems(
    item: ItemRow,
    runs: dict[tuple[int, int], dict[str, Any]],
    max_stalls: int,
    releases_allowed: bool,
    releases: int,
) -> list[str]:
    if item.status == "succeeded":
        last = runs.get((item.id, item.attempt))
        if last is None or last["ended_at"] is None:
            return [
                f"item {item.id} succeeded, but its attempt {item.attempt} never ran to its end"
            ]
        if last["worker"] != item.worker_id:
            return [f"item {item.id} succeeded under {item.worker_id}, but {last['worker']} ran it"]
        if len(item.handler_failures) >= CHORE_POLICY.max_attempts:
            return [f"item {item.id} succeeded after failing every attempt: {item.failures}"]
        ended_by_others = item.attempt - 1
    elif item.status == "failed":
        stalled_out = (item.error or "").startswith("stalled") and item.stalls == max_stalls
        spent = len(item.handler_failures) == CHORE_POLICY.max_attempts and item.error == (
            item.handler_failures.get(item.attempt)
        )
        if not (stalled_out or spent):
            return [
                f"item {item.id} failed, neither as stalled nor after its attempts:"
                f" {item.stalls} stalls, {item.error!r}, failures {item.failures}"
            ]
        ended_by_others = item.attempt
    else:
        return [f"item {item.id} is still {item.status}"]
    ended_by_others -= len(item.handler_failures)
    ended_without_outcome = ended_by_others - releases
    if item.stalls == ended_without_outcome or (releases_allowed and item.stalls < ended_by_others):
        return []
    return [
        f"item {item.id} has {item.stalls} stalls, but {ended_without_outcome} of its "
        f"{item.attempt} attempts ended without an outcome, a failure or a release"
    ]


def _failure_problems(item: ItemRow, runs: dict[tuple[int, int], dict[str, Any]]) -> list[str]:
    """The failures the row keeps against the attempts whose handler failed."""
    failed_runs = {
        attempt for (item_id, attempt), run in runs.items() if item_id == item.id and run["failed"]
    }
    if unfounded := set(item.handler_failures) - failed_runs:
        return [
            f"item {item.id} keeps failures of attempts {sorted(unfounded)}, but its handler"
            f" failed only in attempts {sorted(failed_runs)}"
        ]
    return []
