"""``workqueue cap KIND N`` and ``workqueue cap KIND none``: an operator bounds how many items
of a kind run at once across every worker, or lifts the bound (docs/adr/0035).

It prints one line saying the cap in force afterwards and returns 0; a count that
is none (not a whole number from 1 to :data:`~workqueue.domain.MAX_CAP`, nor
``none``) or a kind no payload model serves is bad input, raised before anything
is written.
"""

from __future__ import annotations

from typing import TextIO

from workqueue.domain import (
    MAX_CAP,
    InvalidCapError,
    KindCap,
    UnknownKindError,
    checked_cap,
)
from workqueue.entrypoints.exit_status import ExitStatus
from workqueue.entrypoints.status_report import SET_BY
from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = ["NO_CAP", "cap_line", "cap_text", "cap_work"]

NO_CAP = "none"
"""What ``workqueue cap KIND`` is given, for N, to clear the kind's cap."""


def cap_text(text: str) -> int | None:
    """N as typed: a whole number, or ``none`` (None: clear the cap). Its range is
    :func:`~workqueue.domain.checked_cap`'s to check.

    :raises InvalidCapError: if ``text`` is neither.
    """
    if text == NO_CAP:
        return None
    try:
        return int(text)
    except ValueError:
        raise InvalidCapError(
            f"a cap is a whole number from 1 to {MAX_CAP}, or {NO_CAP} to clear it, not {text!r}"
        ) from None


def cap_line(kind: str, cap: KindCap | None) -> str:
    """The one line ``workqueue cap`` prints: the cap of ``kind`` in force, ``cap``."""
    if cap is None:
        return (
            f"{kind} has no cap: workers run as many of its items at once as they claim; "
            f"a cap its policy declares is in force again from the next worker's start"
        )
    held = "1 slot" if cap.running == 1 else f"{cap.running} slots"
    return (
        f"{kind} is capped at {cap.max_running} running at once across every worker "
        f"(set by {SET_BY[cap.source]}); {held} held now"
    )


async def cap_work(
    container: WorkerContainer, out: TextIO, *, kind: str, max_running: int | None
) -> ExitStatus:
    """Cap ``kind`` at ``max_running`` as an operator (the port's default source), or
    clear its cap (None).

    A cap is set only for a kind the worker's kinds (the application's too) name; a
    cap is cleared for any kind, so that one an application no longer has can be
    cleared too.

    :raises InvalidCapError: if ``max_running`` is out of range (or ``kind`` cannot
        be stored): nothing is read or written.
    :raises UnknownKindError: if ``max_running`` is given and no payload model serves
        ``kind``: a typo would otherwise cap nothing that exists, and say so nowhere.
    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises StoreUnavailableError: if the database stops answering.
    """
    checked_cap(kind, max_running)
    if max_running is not None:
        catalog = await provide(container.catalog)
        if kind not in catalog:
            raise UnknownKindError(kind, sorted(catalog.kinds))
    schema = await provide(container.schema)
    await schema.check_current()
    store = await provide(container.work_store)
    cap = await store.cap_kind(kind, max_running)
    print(cap_line(kind, cap), file=out)
    return ExitStatus.OK
