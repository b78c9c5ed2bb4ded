"""``workqueue migrate``: apply the pending migrations and say which."""

from __future__ import annotations

from typing import TextIO

from workqueue.entrypoints.worker.container import WorkerContainer, provide

__all__ = ["migrate_database"]


async def migrate_database(container: WorkerContainer, out: TextIO) -> list[str]:
    """Apply every pending migration; print which, or that none was pending.

    Safe beside running workers and concurrent migrators: the migrations take an
    advisory lock, and a second migrator finds nothing left to do.

    :returns: the names of the migrations applied now.
    :raises MigrationError: naming the migration that failed; nothing is applied.
    :raises DatabaseUnreachableError: if the database does not answer.
    """
    database = await provide(container.database)
    schema = await provide(container.schema)
    applied = await schema.apply_pending()
    if applied:
        print(f"applied {len(applied)} migration(s) to {database.shown}:", file=out)
        for name in applied:
            print(f"  {name}", file=out)
    else:
        print(f"{database.shown} is already up to date", file=out)
    return applied
