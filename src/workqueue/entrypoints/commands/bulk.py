"""``workqueue requeue --kind KIND --failed`` and ``workqueue cancel --kind KIND --queued``: an
operator acts on a kind's failed, or queued, items at once (docs/adr/0041).

Each first reads how many items it would take and the highest id among them, and
says so; it asks (unless ``--yes``), then takes only items up to that id: nothing
that failed or was enqueued after the count was said is touched. It prints one line
saying what it did and returns 0. A kind with no such item is nothing to do, said,
and 0 too: a script that requeues a kind's failures each night does not fail on a
night without any. A question answered anything but yes does nothing and returns 1.

The question is asked on a terminal only: without ``--yes`` and without one, the
command line refuses before it reads anything (:func:`bulk_arguments_problem`).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Sequence
from typing import TextIO

from workqueue.application import cancel_queued, requeue_failed
from workqueue.domain import (
    BulkAction,
    BulkResult,
    BulkScope,
    UnknownKindError,
    cancel_reason_text,
    checked_cancel_reason,
)
from workqueue.entrypoints.exit_status import ExitStatus
from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = [
    "BULK_FLAGS",
    "MAX_IDS_SAID",
    "bulk_arguments_problem",
    "cancel_queued_of_kind",
    "requeue_failed_of_kind",
    "requeued_line",
]

BULK_FLAGS = {"requeue": "--failed", "cancel": "--queued"}
"""The flag that, with ``--kind KIND``, makes each command act on the kind's items."""

MAX_IDS_SAID = 10
"""How many ids of the items a bulk requeue left failed its line lists; the rest are counted."""

_YES = frozenset({"y", "yes"})


def bulk_arguments_problem(
    command: str,
    *,
    item_id: int | None,
    kind: str | None,
    bulk: bool,
    yes: bool,
    answers: TextIO | None,
) -> str | None:
    """What is wrong with the arguments of ``command`` (``cancel`` or ``requeue``), in one
    line; None when nothing is.

    Either an item id, or ``--kind KIND`` with the command's :data:`BULK_FLAGS` flag
    (``bulk``). Without ``--yes`` (``yes``) a bulk action asks first, so ``answers``,
    where the answer would be read, must be a terminal.
    """
    flag = BULK_FLAGS[command]
    if kind is None:
        if item_id is None:
            return f"{command} needs an item ID, or --kind KIND {flag}"
        if bulk:
            return f"{flag} goes with --kind KIND, not with an item ID"
        if yes:
            return "--yes goes with --kind KIND, not with an item ID"
        return None
    if item_id is not None:
        return f"{command} takes an item ID or --kind KIND, not both"
    if not bulk:
        return f"{command} --kind needs {flag}: workqueue {command} --kind {kind} {flag}"
    if not yes and (answers is None or not answers.isatty()):
        return (
            f"{command} --kind asks before it acts, and standard input is not a terminal: "
            f"pass --yes to {command} without being asked"
        )
    return None


def _items(count: int, status: str) -> str:
    return f"{count:,} {status} {'item' if count == 1 else 'items'}"


def _scope_line(scope: BulkScope, status: str, kind: str, purpose: str) -> str:
    return f"{_items(scope.count, status)} of {kind} {purpose} (ids up to {scope.up_to_id})"


def _ids(ids: Sequence[int]) -> str:
    said = ", ".join(str(item_id) for item_id in ids[:MAX_IDS_SAID])
    line = f"{'id' if len(ids) == 1 else 'ids'} {said}"
    more = len(ids) - MAX_IDS_SAID
    return line if more < 1 else f"{line} and {more:,} more"


def requeued_line(kind: str, result: BulkResult) -> str:
    """The line ``workqueue requeue --kind KIND --failed`` ends with: what it did."""
    line = f"requeued {_items(result.done, 'failed')} of {kind}"
    if result.absorbed:
        line += f"; absorbed by a queued twin with the same dedup key: {result.absorbed:,}"
    if result.invalid:
        line += (
            f"; left failed, payload no longer valid: {len(result.invalid):,} "
            f"({_ids(result.invalid)})"
        )
    return line


def _answer(answers: TextIO) -> str:
    """The line the operator answers on ``answers``; Ctrl-C meanwhile ends the command at once.

    asyncio's own handler would only cancel the command's task, which goes on
    waiting for the line. Only the main thread hears signals, and only it may set
    their handlers: elsewhere the line is simply read.
    """
    if threading.current_thread() is not threading.main_thread():
        return answers.readline()
    usual = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return answers.readline()
    finally:
        signal.signal(signal.SIGINT, usual)


def _confirmed(question: str, answers: TextIO | None, out: TextIO) -> bool:
    """Whether the operator answers ``question`` yes; True, unasked, without ``answers``."""
    if answers is None:
        return True
    # Flushed: the question has no line end, and a terminal shows a line when it ends.
    print(question, end="", file=out, flush=True)
    answer = _answer(answers)
    if not answer.endswith("\n"):
        # The input ended (Ctrl-D): the terminal echoed no line end, so say one.
        print(file=out)
    return answer.strip().lower() in _YES


async def requeue_failed_of_kind(
    container: WorkerContainer, out: TextIO, *, kind: str, answers: TextIO | None
) -> ExitStatus:
    """Requeue the failed items of ``kind`` that no bulk requeue requeued yet, up to the
    highest id said, each as ``workqueue requeue ID`` does.

    :param answers: where the answer to the question is read; None (``--yes``): not asked.
    :raises UnknownKindError: if no payload model serves ``kind``, before anything is read.
    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises StoreUnavailableError: if the database stops answering (the batches done
        before stay done).
    """
    # The payload half of the registry (the application's kinds too): no handler built.
    catalog = await provide(container.catalog)
    if kind not in catalog:
        raise UnknownKindError(kind, sorted(catalog.kinds))
    schema = await provide(container.schema)
    await schema.check_current()
    monitor = await provide(container.work_monitor)
    scope = await monitor.bulk_scope(kind, BulkAction.REQUEUE_FAILED)
    if scope.up_to_id is None:
        print(f"nothing to do: no failed item of {kind} left to requeue", file=out)
        return ExitStatus.OK
    print(_scope_line(scope, "failed", kind, "to queue again"), file=out)
    if not _confirmed("Requeue them? [y/N] ", answers, out):
        print("nothing requeued", file=out)
        return ExitStatus.FAILURE
    store = await provide(container.work_store)
    result = await requeue_failed(kind, up_to_id=scope.up_to_id, store=store, decode=catalog.decode)
    print(requeued_line(kind, result), file=out)
    return ExitStatus.OK


async def cancel_queued_of_kind(
    container: WorkerContainer,
    out: TextIO,
    *,
    kind: str,
    reason: str | None,
    answers: TextIO | None,
) -> ExitStatus:
    """Cancel the queued items of ``kind`` (delayed ones too) up to the highest id said, each
    as ``workqueue cancel ID`` cancels a queued one. Any kind: one an application no
    longer has too.

    :param reason: stored as each item's error (the default when None or blank).
    :param answers: where the answer to the question is read; None (``--yes``): not asked.
    :raises InvalidCancelReasonError: if no store can hold ``reason``, before anything is read.
    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises StoreUnavailableError: if the database stops answering (the batches done
        before stay done).
    """
    stored = checked_cancel_reason(cancel_reason_text(reason))
    schema = await provide(container.schema)
    await schema.check_current()
    monitor = await provide(container.work_monitor)
    scope = await monitor.bulk_scope(kind, BulkAction.CANCEL_QUEUED)
    if scope.up_to_id is None:
        print(f"nothing to do: no queued item of {kind}", file=out)
        return ExitStatus.OK
    print(_scope_line(scope, "queued", kind, "to cancel"), file=out)
    if not _confirmed("Cancel them? [y/N] ", answers, out):
        print("nothing cancelled", file=out)
        return ExitStatus.FAILURE
    store = await provide(container.work_store)
    result = await cancel_queued(kind, up_to_id=scope.up_to_id, store=store, reason=stored)
    print(f"cancelled {_items(result.done, 'queued')} of {kind} (reason: {stored})", file=out)
    return ExitStatus.OK
