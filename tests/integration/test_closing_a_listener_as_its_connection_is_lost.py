"""A listener closed just as its connection is lost stops, and leaves no connection open.

On Python 3.11 ``asyncio.wait_for`` returns normally when what it awaits finishes as
its task is cancelled; the listener waited for its connection's loss that way, so a
close arriving with the loss was swallowed, the listener reconnected for good, and a
stopping worker never exited (seen in the terminated-connections fault test).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from workqueue.adapters.postgres import PostgresWorkNotifications

SAFETY_NET = 10.0
"""Seconds a close may take before the test calls it hung (it takes a few loop turns)."""


class LosableConnection:
    """What the listener uses of a connection, lost when the test says."""

    def __init__(self) -> None:
        self._on_loss: list[Callable[[object], None]] = []
        self.terminated = False

    def add_termination_listener(self, callback: Callable[[object], None]) -> None:
        self._on_loss.append(callback)

    async def add_listener(self, channel: str, callback: object) -> None:
        pass

    async def fetchval(self, statement: str, **options: float) -> int:
        return 1

    def terminate(self) -> None:
        self.terminated = True

    def lose(self) -> None:
        for callback in self._on_loss:
            callback(self)


@pytest.mark.parametrize("turns", range(6), ids=lambda turns: f"{turns} loop turns later")
async def test_a_listener_closed_as_its_connection_is_lost_stops_and_leaves_no_connection_open(
    turns: int,
) -> None:
    opened: list[LosableConnection] = []

    async def connect() -> LosableConnection:
        opened.append(LosableConnection())
        return opened[-1]

    listener = PostgresWorkNotifications(connect=connect, first_retry_delay=0.01)  # type: ignore[arg-type]
    await listener.listening()

    opened[0].lose()
    for _ in range(turns):
        await asyncio.sleep(0)
    closing = asyncio.ensure_future(listener.aclose())
    done, _ = await asyncio.wait({closing}, timeout=SAFETY_NET)

    assert done == {closing}, "the close was swallowed: the listener is still running"
    assert [connection.terminated for connection in opened] == [True] * len(opened)
