"""A stop signal that comes while ``workqueue`` is still importing itself is heard: noted
by the console script, then taken over by the command it runs."""

from __future__ import annotations

import asyncio
import io
import signal
from collections.abc import Iterator

import pytest
from dependency_injector import providers
from worker_world import WorkerWorld

from workqueue.entrypoints import console
from workqueue.entrypoints.cli import main
from workqueue.entrypoints.worker.run import run_worker
from workqueue.entrypoints.worker.settings import WorkerSettings

# Never delivered to the process: run_worker's own handlers are installed for it.
UNUSED = signal.SIGUSR1


@pytest.fixture
def console_handlers() -> Iterator[None]:
    """The console script's handlers for the test, the test process's own after it."""
    previous = {signum: signal.getsignal(signum) for signum in console.STOP_SIGNALS}
    console.note_stop_signals()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        console.take_noted_stop_signal()


class NoContainer:
    """A container factory for a command that must end before it builds anything."""

    built = False

    def __call__(self, settings: WorkerSettings) -> object:
        self.built = True
        raise AssertionError("the command went on after a stop signal")


@pytest.mark.usefixtures("console_handlers")
class TestTheConsoleScript:
    def test_a_stop_signal_is_noted_then_taken_once_and_the_usual_handlers_given_back(
        self,
    ) -> None:
        signal.raise_signal(signal.SIGTERM)

        assert console.take_noted_stop_signal() is signal.SIGTERM
        assert console.take_noted_stop_signal() is None
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def test_with_no_signal_nothing_is_taken(self) -> None:
        assert console.take_noted_stop_signal() is None
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def test_a_second_stop_signal_ends_the_process_at_once_with_128_plus_its_number(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def exit_at_once(status: int) -> None:
            raise SystemExit(status)

        monkeypatch.setattr(console.os, "_exit", exit_at_once)
        signal.raise_signal(signal.SIGINT)

        with pytest.raises(SystemExit) as exited:
            signal.raise_signal(signal.SIGTERM)

        assert exited.value.code == 143
        assert console.take_noted_stop_signal() is signal.SIGINT

    def test_a_short_command_with_a_noted_signal_says_interrupted_and_reaches_nothing(
        self,
    ) -> None:
        signal.raise_signal(signal.SIGINT)
        factory = NoContainer()
        err = io.StringIO()

        status = main(["status"], container_factory=factory, out=io.StringIO(), err=err)

        assert (status, err.getvalue()) == (130, "workqueue: interrupted\n")
        assert not factory.built
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_handlers_someone_else_installed_are_left_alone() -> None:
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        assert console.take_noted_stop_signal() is None
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.mark.usefixtures("console_handlers")
async def test_a_worker_takes_a_noted_signal_as_one_during_its_start_up(
    world: WorkerWorld,
) -> None:
    class SchemaThatWaits:
        async def apply_pending(self) -> list[str]:
            await asyncio.Event().wait()
            return []

    container = world.container()
    container.schema.override(providers.Object(SchemaThatWaits()))
    signal.raise_signal(signal.SIGTERM)

    given = await asyncio.wait_for(run_worker(container, stop_signals=(UNUSED,)), 10)

    assert given is signal.SIGTERM
    assert world.state.items == {}


class HandlerSeen:
    """A container factory that notes the SIGTERM handler in place when it is called."""

    def __init__(self) -> None:
        self.handler: object = None

    def __call__(self, settings: WorkerSettings) -> object:
        self.handler = signal.getsignal(signal.SIGTERM)
        raise KeyboardInterrupt  # ends the command here, as Ctrl-C would


@pytest.mark.usefixtures("console_handlers")
@pytest.mark.parametrize(
    ("command", "noting"), [(["worker"], True), (["status"], False)], ids=["worker", "status"]
)
def test_only_the_worker_keeps_noting_stop_signals_until_its_run_hears_them(
    command: list[str], noting: bool
) -> None:
    seen = HandlerSeen()

    main(command, container_factory=seen, out=io.StringIO(), err=io.StringIO())

    # Still noted for the worker; the usual handling back for a short command.
    assert (seen.handler is not signal.SIG_DFL) is noting
