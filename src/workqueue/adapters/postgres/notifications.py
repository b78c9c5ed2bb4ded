"""PostgresWorkNotifications: an idle worker's early wake-up, over LISTEN/NOTIFY.

Every enqueue that creates an item notifies :data:`~workqueue.adapters.postgres.channel.CHANNEL`
in its transaction, the kind as the payload. One dedicated connection per process
listens on that channel and wakes the waiters whose kinds were named.
Notifications are a shortcut, not a promise: while the connection is down they
are lost, and the worker polls anyway.
When the connection drops it is opened again with a bounded exponential backoff,
and every waiter is woken once it is back, since work may have arrived unheard.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Collection
from types import TracebackType

import asyncpg

from workqueue.adapters.postgres.channel import CHANNEL
from workqueue.adapters.postgres.pool import redact_dsn
from workqueue.adapters.postgres.sql import load_statements
from workqueue.domain import kind_name

__all__ = ["CHANNEL", "PostgresWorkNotifications"]

_SQL = load_statements("notifications.sql")
logger = logging.getLogger("workqueue.notifications")

Connect = Callable[[], Awaitable[asyncpg.Connection]]


class PostgresWorkNotifications:  # pragma: no mutate block
    """A :class:`~workqueue.domain.WorkNotifications` on one LISTEN connection.

    Use it as an async context manager, or call :meth:`start` and :meth:`aclose`;
    :meth:`wait_for_work` starts it when needed::

        async with PostgresWorkNotifications(dsn) as notifications:
            await notifications.wait_for_work({"token_cleanup"})

    :param dsn: where to listen; ignored when ``connect`` is given.
    :param connect: opens the listening connection (instead of ``dsn``).
    :param first_retry_delay: seconds before the first reconnection attempt; each
        failed attempt doubles it, up to ``max_retry_delay``.
    :param ping_interval: seconds between liveness checks of an idle connection.
    :raises ValueError: if neither ``dsn`` nor ``connect`` is given.
    """

    def __init__(
        self,
        dsn: str | None = None,
        *,
        connect: Connect | None = None,
        first_retry_delay: float = 0.1,
        max_retry_delay: float = 5.0,
        ping_interval: float = 30.0,
    ) -> None:
        if connect is None:
            if dsn is None:
                raise ValueError("PostgresWorkNotifications needs a dsn or a connect function")
            target = dsn

            async def connect_to_dsn() -> asyncpg.Connection:
                return await asyncpg.connect(target)

            connect = connect_to_dsn
        self._connect = connect
        self._shown_as = redact_dsn(dsn) if dsn is not None else "the given connection"
        self._first_retry_delay = first_retry_delay
        self._max_retry_delay = max_retry_delay
        self._ping_interval = ping_interval
        self._waiters: dict[asyncio.Future[None], frozenset[str]] = {}
        self._listening = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> PostgresWorkNotifications:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Start listening in the background; does nothing if already started."""
        if self._task is None:
            self._task = asyncio.create_task(self._keep_listening(), name="workqueue-listen")

    async def aclose(self) -> None:
        """Stop listening and close the connection; waiters keep waiting until cancelled."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def listening(self) -> None:
        """Wait until the LISTEN connection is open (starting it if needed)."""
        await self.start()
        await self._listening.wait()

    async def wait_for_work(self, kinds: Collection[str]) -> None:
        """Return once an item of one of ``kinds`` may have been enqueued.

        That is: a notification named one of them, or the connection came back
        after a loss. Enqueues made before the call do not count. Cancelling the
        wait is safe.

        :raises asyncio.CancelledError: when the waiting task is cancelled.
        """
        await self.start()
        arrived: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters[arrived] = frozenset(kind_name(kind) for kind in kinds)
        try:
            await arrived
        finally:
            del self._waiters[arrived]

    def _on_notification(self, connection: object, pid: int, channel: str, payload: object) -> None:
        for arrived, kinds in self._waiters.items():
            if payload in kinds and not arrived.done():
                arrived.set_result(None)

    def _wake_everyone(self) -> None:
        for arrived in self._waiters:
            if not arrived.done():
                arrived.set_result(None)

    async def _keep_listening(self) -> None:
        delay = self._first_retry_delay
        reconnecting = False
        while True:
            try:
                connection = await self._connect()
            except Exception as error:
                logger.warning(
                    "cannot listen for work on %s (%s: %s); retrying in %.1f s",
                    self._shown_as,
                    type(error).__name__,
                    error,
                    delay,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_retry_delay)
                reconnecting = True
                continue
            try:
                await self._listen_until_lost(connection, reconnecting=reconnecting)
            finally:
                self._listening.clear()
                connection.terminate()
            logger.warning("lost the connection listening for work on %s", self._shown_as)
            delay = self._first_retry_delay
            reconnecting = True

    async def _listen_until_lost(
        self, connection: asyncpg.Connection, *, reconnecting: bool
    ) -> None:
        lost = asyncio.Event()
        connection.add_termination_listener(lambda _connection: lost.set())
        try:
            await connection.add_listener(CHANNEL, self._on_notification)
        except Exception as error:
            logger.warning(
                "cannot LISTEN on %s: %s: %s", self._shown_as, type(error).__name__, error
            )
            return
        self._listening.set()
        if reconnecting:
            logger.info("listening for work on %s again", self._shown_as)
            self._wake_everyone()
        while not lost.is_set():
            # asyncio.timeout, not asyncio.wait_for: on Python 3.11, wait_for returns
            # normally when its awaitable finishes as the task is cancelled, so a close
            # arriving as the connection is lost was swallowed and the listener
            # reconnected for good, holding up the worker's exit.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._ping_interval):
                    await lost.wait()
                return
            try:
                await connection.fetchval(_SQL["ping"], timeout=self._ping_interval)
            except Exception:
                return
