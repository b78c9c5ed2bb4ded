"""How the kit's race tests make a race happen on every run, not only on a lucky one.

A race between two store calls shows only if the calls overlap. Left to the
scheduler they overlap or not by chance: on a quiet machine one call may finish
before the next is sent, on a busy one the server may run them one after the
other. The kit takes chance out of it in three ways:

- **Barriers.** Every racer awaits one :class:`asyncio.Barrier` and only then
  makes its call, so all the calls leave in the same turn of the event loop and
  reach the store together (each racer has a store or queue of its own, hence
  a connection of its own on a database).
- **Repetitions.** A round is repeated many times (``race_rounds``), each from
  a fresh start, and one bad round fails the test. Measured against stores
  with the bug on this project's 2-core machine, quiet and with every core busy
  (docs/adr/0013), a claim without ``FOR UPDATE SKIP LOCKED`` shares an item
  in nearly every round, and an enqueue-if-due without the kind's lock doubles
  an item in a fifth (busy) to a half (usual load) of them: with the default
  rounds such a store passes with odds below one in a million.
- **Locks held from outside**, where a back door can hold one
  (:class:`~workqueue.adapters.testing.contract.RowLockingBackdoor`): a claim must pass
  over a row another transaction has locked, which is deterministic, with no
  race at all. A claim that waits for the lock, or takes the locked row, fails
  it every time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

__all__ = ["at_once"]

T = TypeVar("T")


async def at_once(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Make every call at the same moment, behind one barrier, and return their results.

    :raises BaseException: whatever a call raised, after every call has ended.
    """
    barrier = asyncio.Barrier(len(calls))

    async def when_all_are_ready(call: Callable[[], Awaitable[T]]) -> T:
        await barrier.wait()
        return await call()

    return await asyncio.gather(*(when_all_are_ready(call) for call in calls))
