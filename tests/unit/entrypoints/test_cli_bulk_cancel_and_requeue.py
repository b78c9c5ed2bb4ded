"""``workqueue requeue --kind KIND --failed`` and ``workqueue cancel --kind KIND --queued``: the
count and the highest id first, a question on a terminal (or ``--yes``), then only the items
up to that id, and one line saying what was done (docs/adr/0041)."""

from __future__ import annotations

import asyncio
import io
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import TextIO

import pytest
from dependency_injector import providers
from worker_world import PRODUCTION_KINDS, CliRun, WorkerWorld

from workqueue.domain import (
    DEFAULT_CANCEL_REASON,
    BulkAction,
    BulkResult,
    BulkScope,
    RunOutcome,
    TokenCleanup,
    WorkItem,
    WorkItemRetention,
    WorkStatus,
)
from workqueue.entrypoints.cli import main
from workqueue.entrypoints.commands.bulk import requeued_line
from workqueue.entrypoints.worker.container import WorkerContainer
from workqueue.entrypoints.worker.settings import WorkerSettings

LEASE = timedelta(seconds=60)
KIND = "work_item_retention"


class Terminal(io.StringIO):
    """Standard input on a terminal, holding what the operator types.

    ``meanwhile`` runs as each line is awaited: what happens while the operator reads.
    """

    def __init__(self, typed: str = "", *, meanwhile: Callable[[], object] = lambda: None) -> None:
        super().__init__(typed)
        self.meanwhile = meanwhile
        self.reads = 0

    def isatty(self) -> bool:
        return True

    def readline(self, size: int | None = -1) -> str:
        self.reads += 1
        self.meanwhile()
        return super().readline(size)


@pytest.fixture
def stdin(monkeypatch: pytest.MonkeyPatch) -> Callable[[TextIO | None], None]:
    """Sets the process's standard input for the command line to read."""

    def use(stream: TextIO | None) -> None:
        monkeypatch.setattr(sys, "stdin", stream)

    return use


def enqueued(world: WorkerWorld, *, dedup_key: str | None = None, delay: bool = False) -> int:
    run_at = world.clock.now() + timedelta(hours=1) if delay else None
    return asyncio.run(
        world.queue.enqueue(WorkItemRetention(), dedup_key=dedup_key, run_at=run_at)
    ).id


def claimed(world: WorkerWorld, kind: str = KIND) -> WorkItem:
    item = asyncio.run(world.store.claim([kind], worker_id="w-1", lease_duration=LEASE))
    assert item is not None
    return item


def failed(world: WorkerWorld, *, dedup_key: str | None = None) -> int:
    item_id = enqueued(world, dedup_key=dedup_key)
    item = claimed(world)
    assert item.id == item_id
    asyncio.run(world.store.finish(item.lease, RunOutcome.failed("boom", None)))
    return item_id


def failed_with_a_payload_no_longer_valid(world: WorkerWorld) -> int:
    item_id = failed(world)
    world.state.write(replace(row(world, item_id), payload={"retention_days": "many"}))
    return item_id


def a_failed_token_cleanup(world: WorkerWorld) -> int:
    asyncio.run(world.queue.enqueue(TokenCleanup()))
    item = claimed(world, "token_cleanup")
    asyncio.run(world.store.finish(item.lease, RunOutcome.failed("boom", None)))
    return item.id


def in_another_thread(action: Callable[[], object]) -> None:
    """Run ``action`` to its end on a thread of its own: someone else, while the command waits."""
    thread = threading.Thread(target=action)
    thread.start()
    thread.join()


def row(world: WorkerWorld, item_id: int) -> WorkItem:
    item = world.state.read(item_id)
    assert item is not None
    return item


def statuses(world: WorkerWorld) -> dict[int, WorkStatus]:
    return {item.id: item.status for item in world.state.snapshot()}


class TestRequeueAKindsFailedItems:
    def test_with_yes_each_failed_item_is_requeued_and_the_lines_say_how_many(
        self, world: WorkerWorld
    ) -> None:
        first, second = failed(world, dedup_key="nightly"), failed(world)
        other_kind = a_failed_token_cleanup(world)
        still_queued = enqueued(world)

        run = world.cli("requeue", "--kind", KIND, "--failed", "--yes")

        assert (run.status, run.out, run.err) == (
            0,
            f"2 failed items of {KIND} to queue again (ids up to {second})\n"
            f"requeued 2 failed items of {KIND}\n",
            "",
        )
        again = {old: row(world, old).requeued_as for old in (first, second)}
        assert again == {first: still_queued + 1, second: still_queued + 2}
        assert [row(world, old).status for old in again] == [WorkStatus.FAILED] * 2
        new = row(world, still_queued + 1)
        assert (new.status, new.kind, new.payload, new.dedup_key) == (
            WorkStatus.QUEUED,
            KIND,
            row(world, first).payload,
            "nightly",
        )
        assert row(world, other_kind).requeued_as is None
        assert len(world.state.items) == 6

    def test_pressed_twice_the_second_finds_nothing_to_do_and_exits_zero(
        self, world: WorkerWorld
    ) -> None:
        failed(world)
        world.cli("requeue", "--kind", KIND, "--failed", "--yes")

        run = world.cli("requeue", "--kind", KIND, "--failed", "--yes")

        assert (run.status, run.out) == (
            0,
            f"nothing to do: no failed item of {KIND} left to requeue\n",
        )
        assert len(world.state.items) == 2

    def test_with_nothing_to_do_it_asks_nothing(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        terminal = Terminal("y\n")
        stdin(terminal)

        run = world.cli("requeue", "--kind", KIND, "--failed")

        assert (run.status, run.out) == (
            0,
            f"nothing to do: no failed item of {KIND} left to requeue\n",
        )
        assert terminal.reads == 0

    def test_one_item_is_said_as_one(self, world: WorkerWorld) -> None:
        item_id = failed(world)

        run = world.cli("requeue", "--kind", KIND, "--failed", "--yes")

        assert run.out == (
            f"1 failed item of {KIND} to queue again (ids up to {item_id})\n"
            f"requeued 1 failed item of {KIND}\n"
        )

    @pytest.mark.parametrize("typed", ["y\n", "Y\n", "  yes \n", "YES\n"])
    def test_at_a_terminal_it_asks_and_a_yes_requeues(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None], typed: str
    ) -> None:
        item_id = failed(world)
        stdin(Terminal(typed))

        run = world.cli("requeue", "--kind", KIND, "--failed")

        assert (run.status, run.out) == (
            0,
            f"1 failed item of {KIND} to queue again (ids up to {item_id})\n"
            f"Requeue them? [y/N] requeued 1 failed item of {KIND}\n",
        )
        assert row(world, item_id).requeued_as == item_id + 1

    @pytest.mark.parametrize("typed", ["n\n", "\n", "no\n", "yess\n", "y es\n"])
    def test_answered_anything_but_yes_nothing_is_requeued_and_it_exits_one(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None], typed: str
    ) -> None:
        item_id = failed(world)
        stdin(Terminal(typed))

        run = world.cli("requeue", "--kind", KIND, "--failed")

        assert (run.status, run.out, run.err) == (
            1,
            f"1 failed item of {KIND} to queue again (ids up to {item_id})\n"
            "Requeue them? [y/N] nothing requeued\n",
            "",
        )
        assert (len(world.state.items), row(world, item_id).requeued_as) == (1, None)

    def test_input_ended_at_the_question_is_a_no_said_on_a_line_of_its_own(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        item_id = failed(world)
        stdin(Terminal(""))

        run = world.cli("requeue", "--kind", KIND, "--failed")

        assert (run.status, run.out) == (
            1,
            f"1 failed item of {KIND} to queue again (ids up to {item_id})\n"
            "Requeue them? [y/N] \nnothing requeued\n",
        )

    def test_the_question_is_on_the_screen_before_the_answer_is_awaited(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        item_id = failed(world)
        screen = io.BytesIO()
        # Buffered as a terminal's stdout is: nothing shows until it is flushed or a line ends.
        out = io.TextIOWrapper(screen, encoding="utf-8")
        shown: list[str] = []
        stdin(Terminal("n\n", meanwhile=lambda: shown.append(screen.getvalue().decode())))

        main(
            ["requeue", "--kind", KIND, "--failed"],
            container_factory=world.container,
            out=out,
            err=io.StringIO(),
        )

        assert shown == [
            f"1 failed item of {KIND} to queue again (ids up to {item_id})\nRequeue them? [y/N] "
        ]

    def test_an_item_that_fails_while_the_question_is_read_is_left_for_the_next_time(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        shown = failed(world)
        stdin(Terminal("y\n", meanwhile=lambda: in_another_thread(lambda: failed(world))))

        run = world.cli("requeue", "--kind", KIND, "--failed")

        late = shown + 1
        assert run.out.endswith(f"requeued 1 failed item of {KIND}\n")
        assert (row(world, shown).requeued_as, row(world, late).requeued_as) == (late + 1, None)
        assert row(world, late).status is WorkStatus.FAILED

    def test_a_queued_twin_and_a_payload_no_longer_valid_are_said(self, world: WorkerWorld) -> None:
        absorbed = failed(world, dedup_key="nightly")
        invalid = failed_with_a_payload_no_longer_valid(world)
        requeued = failed(world)
        twin = enqueued(world, dedup_key="nightly")

        run = world.cli("requeue", "--kind", KIND, "--failed", "--yes")

        assert run.out.splitlines()[1] == (
            f"requeued 1 failed item of {KIND}; absorbed by a queued twin with the same "
            f"dedup key: 1; left failed, payload no longer valid: 1 (id {invalid})"
        )
        assert [row(world, old).requeued_as for old in (absorbed, invalid, requeued)] == [
            twin,
            None,
            twin + 1,
        ]

    @pytest.mark.parametrize(
        ("how_many", "said"),
        [
            (2, "ids 1, 2"),
            (10, "ids 1, 2, 3, 4, 5, 6, 7, 8, 9, 10"),
            (11, "ids 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 1 more"),
        ],
    )
    def test_the_ids_left_failed_are_listed_up_to_ten_and_the_rest_counted(
        self, world: WorkerWorld, how_many: int, said: str
    ) -> None:
        for _ in range(how_many):
            failed_with_a_payload_no_longer_valid(world)

        run = world.cli("requeue", "--kind", KIND, "--failed", "--yes")

        assert run.out.splitlines()[1] == (
            f"requeued 0 failed items of {KIND}; "
            f"left failed, payload no longer valid: {how_many} ({said})"
        )
        assert len(world.state.items) == how_many

    def test_large_counts_are_written_with_thousands_separators_and_ids_without(self) -> None:
        result = BulkResult(done=12_300, absorbed=1_040, invalid=tuple(range(1, 1_201)))

        assert requeued_line("import_feed", result) == (
            "requeued 12,300 failed items of import_feed; absorbed by a queued twin with the "
            "same dedup key: 1,040; left failed, payload no longer valid: 1,200 "
            "(ids 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 1,190 more)"
        )

    def test_a_large_scope_is_said_with_a_thousands_separator(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        class LargeScope:
            async def bulk_scope(self, kind: str, action: BulkAction) -> BulkScope:
                return BulkScope(12_345, 98_765)

        def container(settings: WorkerSettings) -> WorkerContainer:
            built = world.container(settings)
            built.work_monitor.override(providers.Object(LargeScope()))
            return built

        stdin(Terminal("n\n"))

        run = world.cli("requeue", "--kind", KIND, "--failed", container_factory=container)

        assert run.out == (
            f"12,345 failed items of {KIND} to queue again (ids up to 98765)\n"
            "Requeue them? [y/N] nothing requeued\n"
        )

    def test_an_unknown_kind_is_refused_in_one_line_before_the_question(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        terminal = Terminal("y\n")
        stdin(terminal)

        run = world.cli("requeue", "--kind", "send_digest", "--failed")

        assert (run.status, run.out) == (2, "")
        assert run.err == (
            f"workqueue: unknown kind 'send_digest' (known kinds: {', '.join(PRODUCTION_KINDS)}): "
            "not a built-in kind; if it is your application's, pass --app MODULE or set "
            "WORKQUEUE_APP\n"
        )
        assert terminal.reads == 0

    def test_a_schema_not_current_is_a_failure_before_the_question(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        failed(world)
        world.schema.missing = ["0014_requeued_as"]
        terminal = Terminal("y\n")
        stdin(terminal)

        run = world.cli("requeue", "--kind", KIND, "--failed")

        assert (run.status, run.out) == (1, "")
        assert "workqueue migrate" in run.err
        assert (terminal.reads, len(world.state.items)) == (0, 1)

    def test_ctrl_c_at_the_question_ends_it_at_once_and_nothing_is_requeued(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        item_id = failed(world)
        # The operator presses Ctrl-C, then (had it not ended) y and Enter.
        stdin(Terminal("y\n", meanwhile=lambda: signal.raise_signal(signal.SIGINT)))

        run = world.cli("requeue", "--kind", KIND, "--failed")

        assert (run.status, run.err) == (130, "workqueue: interrupted\n")
        assert (len(world.state.items), row(world, item_id).requeued_as) == (1, None)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def test_run_from_another_thread_than_the_main_one_it_asks_as_well(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        item_id = failed(world)
        stdin(Terminal("y\n"))
        runs: list[CliRun] = []

        in_another_thread(lambda: runs.append(world.cli("requeue", "--kind", KIND, "--failed")))

        assert [run.status for run in runs] == [0]
        assert row(world, item_id).requeued_as == item_id + 1


class TestCancelAKindsQueuedItems:
    def test_with_yes_each_queued_item_is_cancelled_with_the_reason(
        self, world: WorkerWorld
    ) -> None:
        running = enqueued(world)
        claimed(world)
        queued, delayed = enqueued(world), enqueued(world, delay=True)
        other_kind = asyncio.run(world.queue.enqueue(TokenCleanup())).id

        run = world.cli("cancel", "--kind", KIND, "--queued", "--reason", " feed retired ", "--yes")

        assert (run.status, run.out, run.err) == (
            0,
            f"2 queued items of {KIND} to cancel (ids up to {delayed})\n"
            f"cancelled 2 queued items of {KIND} (reason: feed retired)\n",
            "",
        )
        assert statuses(world) == {
            running: WorkStatus.RUNNING,
            queued: WorkStatus.CANCELLED,
            delayed: WorkStatus.CANCELLED,
            other_kind: WorkStatus.QUEUED,
        }
        assert [row(world, item).error for item in (queued, delayed)] == ["feed retired"] * 2

    def test_without_a_reason_the_default_one_is_stored_and_said(self, world: WorkerWorld) -> None:
        item_id = enqueued(world)

        run = world.cli("cancel", "--kind", KIND, "--queued", "--yes")

        assert run.out.splitlines()[1] == (
            f"cancelled 1 queued item of {KIND} (reason: {DEFAULT_CANCEL_REASON})"
        )
        assert row(world, item_id).error == DEFAULT_CANCEL_REASON

    def test_at_a_terminal_it_asks_and_a_yes_cancels(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        item_id = enqueued(world)
        stdin(Terminal("y\n"))

        run = world.cli("cancel", "--kind", KIND, "--queued")

        assert (run.status, run.out) == (
            0,
            f"1 queued item of {KIND} to cancel (ids up to {item_id})\n"
            f"Cancel them? [y/N] cancelled 1 queued item of {KIND} "
            f"(reason: {DEFAULT_CANCEL_REASON})\n",
        )
        assert row(world, item_id).status is WorkStatus.CANCELLED

    def test_answered_no_nothing_is_cancelled_and_it_exits_one(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        item_id = enqueued(world)
        stdin(Terminal("n\n"))

        run = world.cli("cancel", "--kind", KIND, "--queued")

        assert (run.status, run.out) == (
            1,
            f"1 queued item of {KIND} to cancel (ids up to {item_id})\n"
            "Cancel them? [y/N] nothing cancelled\n",
        )
        assert row(world, item_id).status is WorkStatus.QUEUED

    def test_an_item_enqueued_while_the_question_is_read_is_not_cancelled(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        shown = enqueued(world)
        stdin(Terminal("y\n", meanwhile=lambda: in_another_thread(lambda: enqueued(world))))

        run = world.cli("cancel", "--kind", KIND, "--queued")

        assert run.status == 0
        assert statuses(world) == {shown: WorkStatus.CANCELLED, shown + 1: WorkStatus.QUEUED}

    def test_no_queued_item_is_nothing_to_do_and_exits_zero_whatever_the_kind(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        terminal = Terminal("y\n")
        stdin(terminal)

        run = world.cli("cancel", "--kind", "a_kind_long_gone", "--queued")

        assert (run.status, run.out, run.err) == (
            0,
            "nothing to do: no queued item of a_kind_long_gone\n",
            "",
        )
        assert terminal.reads == 0

    def test_a_reason_no_store_can_hold_is_refused_before_the_question(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None]
    ) -> None:
        item_id = enqueued(world)
        terminal = Terminal("y\n")
        stdin(terminal)

        run = world.cli("cancel", "--kind", KIND, "--queued", "--reason", "nul\x00")

        assert (run.status, run.out, run.err) == (
            2,
            "",
            "workqueue: a cancel reason cannot hold a NUL character\n",
        )
        assert (terminal.reads, row(world, item_id).status) == (0, WorkStatus.QUEUED)


class TestWithoutATerminal:
    @pytest.mark.parametrize("stream", [io.StringIO("y\n"), None], ids=["a pipe", "none"])
    @pytest.mark.parametrize(
        ("argv", "verb"),
        [
            (("requeue", "--kind", KIND, "--failed"), "requeue"),
            (("cancel", "--kind", KIND, "--queued"), "cancel"),
        ],
    )
    def test_without_yes_it_is_refused_in_one_line_and_nothing_changes(
        self,
        world: WorkerWorld,
        stdin: Callable[[TextIO | None], None],
        stream: TextIO | None,
        argv: tuple[str, ...],
        verb: str,
    ) -> None:
        failed(world)
        enqueued(world)
        stdin(stream)

        run = world.cli(*argv)

        assert (run.status, run.out, run.err) == (
            2,
            "",
            f"workqueue: {verb} --kind asks before it acts, and standard input is not a "
            f"terminal: pass --yes to {verb} without being asked\n",
        )
        assert statuses(world) == {1: WorkStatus.FAILED, 2: WorkStatus.QUEUED}

    @pytest.mark.parametrize("stream", [io.StringIO(""), None], ids=["a pipe", "none"])
    def test_with_yes_it_acts(
        self, world: WorkerWorld, stdin: Callable[[TextIO | None], None], stream: TextIO | None
    ) -> None:
        item_id = enqueued(world)
        stdin(stream)

        run = world.cli("cancel", "--kind", KIND, "--queued", "--yes")

        assert run.status == 0
        assert row(world, item_id).status is WorkStatus.CANCELLED


class TestArguments:
    @pytest.mark.parametrize(
        ("argv", "problem"),
        [
            (("requeue",), "requeue needs an item ID, or --kind KIND --failed"),
            (("cancel",), "cancel needs an item ID, or --kind KIND --queued"),
            (("requeue", "--failed", "--yes"), "requeue needs an item ID, or --kind KIND --failed"),
            (("requeue", "5", "--failed"), "--failed goes with --kind KIND, not with an item ID"),
            (("cancel", "5", "--queued"), "--queued goes with --kind KIND, not with an item ID"),
            (("requeue", "5", "--yes"), "--yes goes with --kind KIND, not with an item ID"),
            (("cancel", "5", "--yes"), "--yes goes with --kind KIND, not with an item ID"),
            (
                ("requeue", "5", "--kind", KIND, "--failed"),
                "requeue takes an item ID or --kind KIND, not both",
            ),
            (("cancel", "5", "--kind", KIND), "cancel takes an item ID or --kind KIND, not both"),
            (
                ("requeue", "--kind", KIND, "--yes"),
                f"requeue --kind needs --failed: workqueue requeue --kind {KIND} --failed",
            ),
            (
                ("cancel", "--kind", KIND),
                f"cancel --kind needs --queued: workqueue cancel --kind {KIND} --queued",
            ),
        ],
    )
    def test_a_wrong_combination_is_refused_in_one_line_and_nothing_is_read(
        self,
        world: WorkerWorld,
        stdin: Callable[[TextIO | None], None],
        argv: tuple[str, ...],
        problem: str,
    ) -> None:
        failed(world)
        terminal = Terminal("y\n")
        stdin(terminal)
        world.schema.missing = ["0014_requeued_as"]  # a command that read anything would say so

        run = world.cli(*argv)

        assert (run.status, run.out, run.err) == (2, "", f"workqueue: {problem}\n")
        assert terminal.reads == 0

    @pytest.mark.parametrize(
        ("argv", "unknown"),
        [
            (("requeue", "--kind", KIND, "--queued"), "--queued"),
            (("cancel", "--kind", KIND, "--failed"), "--failed"),
        ],
    )
    def test_the_other_commands_flag_is_an_unknown_option(
        self,
        world: WorkerWorld,
        capsys: pytest.CaptureFixture[str],
        argv: tuple[str, ...],
        unknown: str,
    ) -> None:
        run = world.cli(*argv)

        assert run.status == 2
        assert f"unrecognized arguments: {unknown}" in capsys.readouterr().err
