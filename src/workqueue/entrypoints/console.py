"""The ``workqueue`` console script: the stop signals are heard first, then the command line.

Importing the command line and all it builds takes about a fifth of a second. A
SIGTERM or SIGINT in that time would end the process by the signal's default
action: no ``workqueue: interrupted`` line, nothing closed, a status of "killed by
a signal" rather than 128 + its number. So this module, which imports nothing of
workqueue's, is what the script runs: it first installs handlers that only note
a stop signal, then imports and runs the command line. The command line takes
the noted signal over (``take_noted_stop_signal``): a worker treats it as a stop
during its start-up, a short command ends interrupted before it reaches anything.
A second stop signal meanwhile ends the process at once, as it does later.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

__all__ = ["STOP_SIGNALS", "main", "note_stop_signals", "take_noted_stop_signal"]

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT)

_noted: list[signal.Signals] = []


def _note(signum: int, frame: FrameType | None) -> None:
    if _noted:
        os._exit(128 + signum)
    _noted.append(signal.Signals(signum))


def note_stop_signals() -> None:
    """From now on a stop signal is noted, not acted on, until the command line takes it."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, _note)


def take_noted_stop_signal() -> signal.Signals | None:
    """Give the stop signals back their usual handling; the signal noted meanwhile, if any.

    Only the handlers this module installed are given back: where they were never
    installed (the command line called from Python), nothing changes.
    """
    _give_back_the_usual_handlers()
    return _noted.pop() if _noted else None


def _give_back_the_usual_handlers() -> None:  # pragma: no mutate block
    # Not mutated (docs/adr/0006): a mutant here changes the process's own signal
    # handling, and the next test that sends itself a stop signal dies of it.
    for signum, default in (
        (signal.SIGTERM, signal.SIG_DFL),
        (signal.SIGINT, signal.default_int_handler),
    ):
        if signal.getsignal(signum) is _note:
            signal.signal(signum, default)


def main() -> int:
    """Run ``workqueue`` with the stop signals heard from the first moment."""
    note_stop_signals()
    from workqueue.entrypoints.cli import main as command_line

    return command_line()


if __name__ == "__main__":
    # ``python -m``: run this module under its own name, the one the command line
    # reads the noted signal from, not as ``__main__``.
    from workqueue.entrypoints.console import main as run

    sys.exit(run())
