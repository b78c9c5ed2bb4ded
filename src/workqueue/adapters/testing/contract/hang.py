"""The hang guard: a contract test that hangs fails, saying so, instead of stalling the run.

A broken store can hang a test in two ways: a call that awaits something that
never comes (a claim waiting on a row lock, an event nobody sets), or a loop
that never yields. Only a signal reaches both, so the guard is a ``SIGALRM``
timer on the main thread:

- after ``seconds`` the test fails with :class:`TimeoutError` naming it, raised
  wherever it is stuck, so the traceback shows the place;
- if that failure is swallowed (an event loop logs an exception raised in a
  callback, a retry loop carries on) and the test still runs ``seconds`` later,
  the process exits with status 1 after printing every thread's stack.

Where no ``SIGALRM`` timer can be set (another thread, another platform), the
guard falls back to :func:`faulthandler.dump_traceback_later`, which prints
every stack and ends the process after ``seconds``. Where a timer is already
running (an outer guard, such as a project's own conftest), the guard leaves
that one in charge and sets none of its own.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, ClassVar

import pytest

__all__ = ["HANG_AFTER_SECONDS", "HangGuard", "fail_if_hung"]

HANG_AFTER_SECONDS = 120.0
"""How long a contract test may run: the slowest (the race tests and the model
check on PostgreSQL) take a few seconds, or tens on a busy machine."""

# The process's own exit, taken when the kit is imported: before any test can
# replace os._exit with a fake.
_exit_now = os._exit


def _alarm_is_usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def fail_if_hung(seconds: float, what: str, *, config: Any = None) -> Iterator[None]:
    """Fail what runs inside with :class:`TimeoutError` once it has run for ``seconds``.

    :param what: names the hung thing in the error, e.g. a test's node id.
    :param config: the pytest config, if any: its output capture is suspended
        before the stacks are printed, so they reach the terminal.
    :raises TimeoutError: inside the block, after ``seconds``.
    """
    if not _alarm_is_usable():
        faulthandler.dump_traceback_later(seconds, exit=True)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
        return
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield  # an outer guard watches already
        return

    alarms = 0

    def hung(signum: int, frame: FrameType | None) -> None:
        nonlocal alarms
        alarms += 1
        if alarms == 1:
            raise TimeoutError(
                f"{what} ran for {seconds:g} s: it hung "
                "(a store call that never returns, or a loop that never yields?)"
            )
        capture = None if config is None else config.pluginmanager.getplugin("capturemanager")
        if capture is not None:
            capture.suspend_global_capture(in_=False)
        sys.stderr.write(f"\n{what} still hung {seconds:g} s after it was failed; exiting\n")
        faulthandler.dump_traceback(sys.stderr)
        _exit_now(1)

    previous = signal.signal(signal.SIGALRM, hung)
    # Repeating: a second alarm ends the process when the first did not end the test.
    signal.setitimer(signal.ITIMER_REAL, seconds, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class HangGuard:
    """Mixin: each test of the class fails once it has run for :attr:`hang_after_seconds`.

    :class:`~workqueue.adapters.testing.contract.WorkQueueContractSuite` includes it. An
    adapter whose tests are slow by nature (a remote database) may raise the
    limit on its test class.
    """

    hang_after_seconds: ClassVar[float] = HANG_AFTER_SECONDS

    @pytest.fixture(autouse=True)
    def _contract_test_fails_instead_of_hanging(
        self, request: pytest.FixtureRequest
    ) -> Iterator[None]:
        with fail_if_hung(self.hang_after_seconds, request.node.nodeid, config=request.config):
            yield
