"""``workqueue pause KIND`` and ``workqueue resume KIND``: an operator stops and restarts a kind.

Each prints one line saying what happened and returns the exit status: 0 when the
kind is paused (or resumed), 1 when a resume found nothing to do (docs/adr/0034).
"""

from __future__ import annotations

from typing import TextIO

from workqueue.domain import KindPause, UnknownKindError
from workqueue.entrypoints.exit_status import ExitStatus
from workqueue.entrypoints.timestamps import iso_timestamp
from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = ["pause_line", "pause_work", "resume_line", "resume_work"]


def pause_line(pause: KindPause) -> str:
    """The one line ``workqueue pause`` prints: the pause in force, since when and why."""
    line = (
        f"{pause.kind} is paused since {iso_timestamp(pause.paused_at, timespec='seconds')}: "
        f"no worker claims it until `workqueue resume {pause.kind}`; its running items finish"
    )
    return line if pause.reason is None else f"{line} (reason: {pause.reason})"


def resume_line(kind: str, resumed: bool) -> str:
    """The one line ``workqueue resume`` prints."""
    if resumed:
        return f"resumed {kind}: workers claim its items again"
    return f"nothing to do: {kind} is not paused"


async def pause_work(
    container: WorkerContainer, out: TextIO, *, kind: str, reason: str | None = None
) -> ExitStatus:
    """Pause ``kind``, one the worker's kinds (the application's too) name.

    :raises UnknownKindError: if no payload model serves ``kind``: a typo would
        otherwise pause nothing that exists, and say so nowhere.
    :raises InvalidPauseError: if ``reason`` cannot be stored.
    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises StoreUnavailableError: if the database stops answering.
    """
    catalog = await provide(container.catalog)
    if kind not in catalog:
        raise UnknownKindError(kind, sorted(catalog.kinds))
    schema = await provide(container.schema)
    await schema.check_current()
    store = await provide(container.work_store)
    print(pause_line(await store.pause_kind(kind, reason=reason)), file=out)
    return ExitStatus.OK


async def resume_work(container: WorkerContainer, out: TextIO, *, kind: str) -> ExitStatus:
    """End the pause of ``kind``: any kind, so that one an application no longer has can
    be resumed too.

    :raises SchemaNotCurrentError: if the database is not migrated.
    :raises StoreUnavailableError: if the database stops answering.
    """
    schema = await provide(container.schema)
    await schema.check_current()
    store = await provide(container.work_store)
    resumed = await store.resume_kind(kind)
    print(resume_line(kind, resumed), file=out)
    return ExitStatus.OK if resumed else ExitStatus.FAILURE
