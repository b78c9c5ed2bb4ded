"""Calls made in one turn of the event loop, sent on together as one call.

The lanes of one process (``WORKQUEUE_CONCURRENCY`` above 1) often make the same
store call at the same moment: their heartbeats at a shared tick, their
completions when they finish items together. A :class:`Coalescer` gathers the
requests made in one turn of the loop and sends them as one batch (one
statement); each caller gets its own answer, or the batch's error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

__all__ = ["Coalescer"]

RequestT = TypeVar("RequestT")
AnswerT = TypeVar("AnswerT")


class Coalescer(Generic[RequestT, AnswerT]):
    """Sends the requests made in one turn of the event loop as one batch.

    :param send: sends a batch of requests and answers each of them, in order.
    :param what: names ``send`` in the error raised when its answers do not match.
    :param left: called with an answer whose caller stopped waiting before it
        came, after every other answer was given (to hand back what the call took
        for that caller); None when nothing need be done.
    """

    __slots__ = ("_left", "_pending", "_send", "_sending", "_what")

    def __init__(
        self,
        send: Callable[[list[RequestT]], Awaitable[list[AnswerT]]],
        *,
        what: str,
        left: Callable[[AnswerT], Awaitable[object]] | None = None,
    ) -> None:
        self._send = send
        self._what = what
        self._left = left
        self._pending: list[tuple[RequestT, asyncio.Future[AnswerT]]] = []
        self._sending: set[asyncio.Future[None]] = set()

    async def __call__(self, request: RequestT) -> AnswerT:
        """The answer to ``request``, sent with the others made in this turn of the loop.

        :raises Exception: what sending the batch raised, for each of its requests.
        """
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[AnswerT] = loop.create_future()
        if not self._pending:
            loop.call_soon(self._send_pending)
        self._pending.append((request, answer))
        return await answer

    def _send_pending(self) -> None:
        batch, self._pending = self._pending, []
        sending = asyncio.ensure_future(self._send_batch(batch))
        # Kept until done: the loop holds only a weak reference to a task.
        self._sending.add(sending)
        sending.add_done_callback(self._sending.discard)

    async def _send_batch(self, batch: list[tuple[RequestT, asyncio.Future[AnswerT]]]) -> None:
        try:
            answers = await self._send([request for request, _ in batch])
            if len(answers) != len(batch):
                raise RuntimeError(f"{self._what} answered {len(answers)} of {len(batch)}")
        except Exception as error:
            for _, answer in batch:
                # A caller that stopped waiting took its answer away.
                if not answer.done():
                    answer.set_exception(error)
            return
        unheard: list[AnswerT] = []
        for index, (_, answer) in enumerate(batch):
            if answer.done():
                unheard.append(answers[index])
            else:
                answer.set_result(answers[index])
        if self._left is not None:
            for left in unheard:
                await self._left(left)
