"""Connection pools for the PostgreSQL adapter, and DSNs that are safe to show."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeAlias
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from pydantic import JsonValue

from workqueue.adapters.postgres.unavailable import connection_loss_as_unavailable
from workqueue.domain import LeaseProgress, ProgressSnapshot

__all__ = [
    "DEFAULT_POOL_MAX_SIZE",
    "DEFAULT_POOL_MIN_SIZE",
    "DatabaseConnection",
    "DatabaseTarget",
    "close_pool",
    "connection_to",
    "create_pool",
    "redact_dsn",
    "register_json_codecs",
]

DatabaseTarget: TypeAlias = "asyncpg.Pool | asyncpg.Connection | str"
"""Where a one-off job (migrate, describe the schema) runs: a pool, a connection or a DSN."""

DatabaseConnection: TypeAlias = "asyncpg.Connection | PoolConnectionProxy"
"""A connection of one's own, or one borrowed from a pool."""

DEFAULT_POOL_MIN_SIZE = 1
"""Connections a pool opens at once and keeps open."""

DEFAULT_POOL_MAX_SIZE = 4
"""The most connections a pool opens.

A worker keeps at most two busy between statements (the store's and the queue's,
docs/adr/0010), a heartbeat takes a third while a handler runs, and one is spare.
The default of ``WORKQUEUE_POOL_MAX_SIZE`` too.
"""

_HIDDEN = "***"
# Left unescaped in a rewritten query: the mask itself, and socket directories.
_QUERY_SAFE = "/*"

# password=value in a libpq keyword DSN; the value may be single-quoted with escapes.
_KEYWORD_PASSWORD = re.compile(r"(?P<key>\bpassword\s*=\s*)(?:'(?:[^'\\]|\\.)*'|\S+)")


async def create_pool(
    dsn: str,
    *,
    min_size: int = DEFAULT_POOL_MIN_SIZE,
    max_size: int = DEFAULT_POOL_MAX_SIZE,
    command_timeout: float | None = 30.0,
    **connect_kwargs: Any,
) -> asyncpg.Pool:  # pragma: no mutate block
    """Open a pool whose connections read and write ``json``/``jsonb`` as Python values.

    Payloads and progress snapshots are JSON; the codecs let the stores pass dicts
    and lists as parameters and get them back from rows, with no ``json.dumps``
    at every call site. A :class:`~workqueue.domain.ProgressSnapshot` parameter is sent as
    the text it was encoded to once.

    A connection goes back to the pool without asyncpg's reset query (``RESET ALL;
    UNLISTEN *; CLOSE ALL; SELECT pg_advisory_unlock_all()``): the adapter leaves
    no session state behind (no ``SET``, no session advisory lock, no ``LISTEN`` on
    a pool connection, no cursor outside a transaction), so that query would only
    be a second round trip after every statement, doubling the claim path's
    round trips. asyncpg still rolls back a transaction left open. Code that
    borrows these connections must leave no session state either.

    :param command_timeout: seconds a statement may take before asyncpg gives up on
        it (the stores then raise :class:`~workqueue.domain.StoreUnavailableError`).
    :raises OSError: or an ``asyncpg`` error, if the first connections cannot be made.
    """
    pool: asyncpg.Pool = await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        command_timeout=command_timeout,
        init=register_json_codecs,
        reset=_leave_session_as_it_is,
        **connect_kwargs,
    )
    return pool


async def _leave_session_as_it_is(connection: asyncpg.Connection) -> None:
    """The pool's reset: nothing to undo (see :func:`create_pool`), so no round trip."""


async def close_pool(pool: asyncpg.Pool, *, grace: float = 10.0) -> None:  # pragma: no mutate block
    """Close ``pool`` gracefully, or terminate it when a connection is still busy.

    ``Pool.close`` waits for every connection to be released, forever if one never
    is (a handler stuck mid-query): after ``grace`` seconds the remaining
    connections are cut instead.
    """
    # asyncio.timeout, not wait_for: on Python 3.11, wait_for swallows a cancel of
    # this task that arrives as the close completes, and the caller would go on.
    try:
        async with asyncio.timeout(grace):
            await pool.close()
    except TimeoutError:
        pool.terminate()


async def register_json_codecs(connection: asyncpg.Connection) -> None:  # pragma: no mutate block
    """Make ``json`` and ``jsonb`` columns and parameters plain Python JSON values."""
    for type_name in ("json", "jsonb"):
        await connection.set_type_codec(
            type_name,
            schema="pg_catalog",
            encoder=_dump_json,
            decoder=json.loads,
            format="text",
        )


def _dump_json(value: object) -> str:
    # A progress snapshot was encoded once, for all its writes: its text is sent as it is.
    if isinstance(value, ProgressSnapshot):
        return value.text()
    # Compact separators: jsonb normalises anyway, so spaces would only cost bytes.
    return json.dumps(value, separators=(",", ":"))


def lease_columns(
    leases: Sequence[LeaseProgress],
) -> tuple[list[str], list[str], list[str | None]]:
    """Leases and their progress as the three ``text[]`` parameters of a statement on many.

    Ids, attempts and progress texts, all as text: asyncpg encodes an array of
    text with no more ado, but asks the server about an array of integers first,
    once on every connection, a slow query that piles up when a fleet of workers
    opens its connections at once (ADR 0023).
    """
    return (
        [str(lease.item_id) for lease, _ in leases],
        [str(lease.attempt) for lease, _ in leases],
        [progress_text(progress) for _, progress in leases],
    )


def progress_text(progress: JsonValue | ProgressSnapshot) -> str | None:
    """The JSON text the codecs would send for ``progress``; None (SQL NULL) for none.

    For statements that take many snapshots at once, as a ``text[]`` parameter:
    arrays of ``jsonb`` do not go through the codecs.
    """
    if progress is None:
        return None
    return _dump_json(progress)


@asynccontextmanager
async def connection_to(
    target: DatabaseTarget,
) -> AsyncIterator[DatabaseConnection]:  # pragma: no mutate block
    """One connection to ``target`` for the block: the connection itself, one
    borrowed from the pool, or a new one to the DSN (closed afterwards).

    :raises StoreUnavailableError: if the database cannot be reached, then or
        during the block.
    """
    with connection_loss_as_unavailable():
        if isinstance(target, asyncpg.Connection):
            yield target
        elif isinstance(target, asyncpg.Pool):
            async with target.acquire() as connection:
                yield connection
        else:
            own_connection = await asyncpg.connect(target)
            try:
                yield own_connection
            finally:
                await own_connection.close()


def redact_dsn(dsn: str) -> str:
    """``dsn`` with its password replaced by ``***``, for logs and error messages.

    Handles a password in the URL's user part (``postgresql://u:secret@h/db``) and
    in the query (``?password=secret``). A DSN that is not a URL (``host=h
    password=secret``) has its ``password=`` value hidden too. An empty password
    (``postgres:@``) is shown as it is: there is nothing to hide.
    """
    if "://" not in dsn:
        return _redact_keyword_dsn(dsn)
    parts = urlsplit(dsn)
    netloc = parts.netloc
    # The password is what follows the first colon of the user part (it may hold "@").
    userinfo, _, hostinfo = netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    if password:
        netloc = f"{user}:{_HIDDEN}@{hostinfo}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(key == "password" for key, _ in pairs):
            query = urlencode(
                [(key, _HIDDEN if key == "password" else value) for key, value in pairs],
                safe=_QUERY_SAFE,
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_keyword_dsn(dsn: str) -> str:
    return _KEYWORD_PASSWORD.sub(lambda match: f"{match['key']}{_HIDDEN}", dsn)
