"""One pool connection kept between a store's statements while they keep coming.

asyncpg's ``Pool.acquire`` and ``Pool.release`` cost about 100 µs of client CPU per
statement on a small VM (the release runs under ``asyncio.shield``, a timeout
scope and a future per call): as much as the statement's own round trip. A worker
sends its statements one after another (claim, heartbeat, complete and claim the
next), so :class:`HeldConnection` borrows one connection from the pool on first
use and sends them all on it.

- **One statement at a time on it.** A statement that arrives while the held
  connection is busy (a heartbeat during a handler's own store call, recovery
  beside a run) goes through the pool as before: it never waits for the other.
- **Never kept from others.** When keeping it would leave the pool with no
  connection free and no room to open one, it goes back after each statement, so
  a small or busy pool (``max_size=1``, say, shared with a queue) serves everyone
  as it did before, one acquire per statement.
- **Handed back when idle.** A timer checks every :data:`IDLE_CHECK_SECONDS`: a
  connection unused since the last check, or any once the pool is closing, goes
  back to the pool. So ``Pool.close()`` never waits more than one check for it,
  even when nobody calls :meth:`HeldConnection.close`, and an idle worker holds no
  connection between polls.
- **Never used once the pool has it.** A held connection whose backend died
  while it sat idle (terminated, say) is taken back by the pool on its own; the
  next statement sees that and borrows a fresh one instead of failing.
- **Handed back on any error.** A failed, timed-out or cancelled statement gives
  the connection back through ``Pool.release``, which rolls back, waits for a
  cancellation to finish, or drops a broken connection; the next statement
  borrows a fresh one. Errors are reported exactly as the pool would report them.
- **No session state.** Like every pool user here (see :func:`create_pool`), the
  statements sent on it leave nothing behind: each is its own transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import asyncpg
from asyncpg.pool import PoolConnectionProxy

__all__ = ["IDLE_CHECK_SECONDS", "HeldConnection"]

IDLE_CHECK_SECONDS = 0.2
"""How often a held connection is checked for idleness (and for a closing pool)."""


class HeldConnection:  # pragma: no mutate block
    """Statements of one owner sent on one borrowed connection of ``pool`` (see module).

    The owner calls :meth:`fetch`, :meth:`fetchrow` and :meth:`fetchval` as it
    would call the pool's, and :meth:`close` when done (optional: an idle
    connection goes back by itself).
    """

    def __init__(self, pool: asyncpg.Pool, *, idle_check: float = IDLE_CHECK_SECONDS) -> None:
        self._pool = pool
        self._idle_check = idle_check
        self._connection: PoolConnectionProxy | None = None
        self._busy = False
        self._used = False
        self._closed = False
        self._timer: asyncio.TimerHandle | None = None
        self._returning: set[asyncio.Task[None]] = set()

    @property
    def holding(self) -> bool:
        """True while a connection is borrowed from the pool."""
        return self._connection is not None

    async def fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        """``Connection.fetch`` on the held connection, or on the pool's when it is busy."""
        rows: list[asyncpg.Record] = await self._run("fetch", query, args)
        return rows

    async def fetchrow(self, query: str, *args: Any) -> asyncpg.Record | None:
        """``Connection.fetchrow`` on the held connection, or on the pool's when it is busy."""
        row: asyncpg.Record | None = await self._run("fetchrow", query, args)
        return row

    async def fetchval(self, query: str, *args: Any) -> Any:
        """``Connection.fetchval`` on the held connection, or on the pool's when it is busy."""
        return await self._run("fetchval", query, args)

    async def close(self) -> None:
        """Give the connection back to the pool and hold none again; idempotent.

        A statement still running on it gives it back when it ends; later
        statements go through the pool.
        """
        self._closed = True
        self._stop_timer()
        if not self._busy:
            await self._give_back()
        if self._returning:
            await asyncio.gather(*self._returning, return_exceptions=True)

    async def _run(self, method: str, query: str, args: tuple[Any, ...]) -> Any:
        if self._busy or self._closed:
            return await getattr(self._pool, method)(query, *args)
        self._busy = True
        try:
            connection = self._connection
            if connection is not None and _taken_back(connection):
                # Its backend died while it was held, and the pool took it back:
                # nothing was sent on it, so this statement goes on a fresh one.
                self._detach()
                connection = None
            if connection is None:
                connection = await self._borrow()
            return await getattr(connection, method)(query, *args)
        except BaseException:
            await self._give_back()
            raise
        finally:
            self._busy = False
            self._used = True
            if self._connection is not None and (self._closed or self._pool_is_short()):
                # close() came while this statement ran, or keeping the connection
                # would make the pool's next acquire wait for it: give it back now.
                self._hand_back_later()

    def _pool_is_short(self) -> bool:
        """Whether no other acquire could get a connection without waiting for ours."""
        pool = self._pool
        return pool.get_idle_size() == 0 and pool.get_size() >= pool.get_max_size()

    async def _borrow(self) -> PoolConnectionProxy:
        connection: PoolConnectionProxy = await self._pool.acquire()
        self._connection = connection
        self._used = True
        self._timer = asyncio.get_running_loop().call_later(self._idle_check, self._check_idle)
        return connection

    def _check_idle(self) -> None:
        self._timer = None
        if self._connection is None:
            return
        if self._busy or (self._used and not self._pool.is_closing()):
            self._used = False
            self._timer = asyncio.get_running_loop().call_later(self._idle_check, self._check_idle)
            return
        self._hand_back_later()

    def _hand_back_later(self) -> None:
        # Detached now, so no statement starting before the task runs can use it.
        connection = self._detach()
        if connection is None:
            return
        task = asyncio.get_running_loop().create_task(self._release(connection))
        self._returning.add(task)
        task.add_done_callback(self._returning.discard)

    async def _give_back(self) -> None:
        connection = self._detach()
        if connection is not None:
            await self._release(connection)

    def _detach(self) -> PoolConnectionProxy | None:
        connection, self._connection = self._connection, None
        self._stop_timer()
        return connection

    async def _release(self, connection: PoolConnectionProxy) -> None:
        # Pool.release rolls back, waits out a cancellation or drops a broken
        # connection; if even that fails, the pool has already let go of it.
        with contextlib.suppress(Exception):
            await self._pool.release(connection)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _taken_back(connection: PoolConnectionProxy) -> bool:  # pragma: no mutate block
    """Whether the pool took ``connection`` back (it closed), so it can no longer be used."""
    try:
        return connection.is_closed()
    except asyncpg.InterfaceError:  # the proxy no longer has a connection to ask
        return True
