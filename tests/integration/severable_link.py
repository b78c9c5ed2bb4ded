"""A link to the test database that a test can cut, as if the server went away.

Killing backends is not enough to show a store losing its database: asyncpg's
pool notices a terminated connection and quietly opens a new one. Behind this
TCP relay, cutting the link closes every open connection *and* refuses new ones,
until the test restores it.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["SeverableLink"]

_CHUNK = 65536


class SeverableLink:
    """Relays 127.0.0.1:<port> to the server of ``database_url`` until :meth:`cut`."""

    def __init__(self, database_url: str) -> None:
        self._target = urlsplit(database_url)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._pumps: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        """The database's URL, through the link."""
        userinfo = self._target.netloc.rpartition("@")[0]
        netloc = f"{userinfo}@127.0.0.1:{self.port}" if userinfo else f"127.0.0.1:{self.port}"
        query = urlencode(
            [(k, v) for k, v in parse_qsl(self._target.query) if k not in ("host", "port")]
        )
        return urlunsplit((self._target.scheme, netloc, self._target.path, query, ""))

    async def open(self) -> None:
        """Start relaying (again, on the same port after a cut)."""
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def cut(self) -> None:
        """Close every relayed connection and refuse new ones."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        for pump in list(self._pumps):
            pump.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)

    async def _connect_upstream(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        query = dict(parse_qsl(self._target.query))
        host = query.get("host") or self._target.hostname or "localhost"
        port = int(query.get("port") or self._target.port or 5432)
        if host.startswith("/"):
            return await asyncio.open_unix_connection(str(Path(host) / f".s.PGSQL.{port}"))
        return await asyncio.open_connection(host, port)

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await self._connect_upstream()
        self._writers.update({writer, upstream_writer})
        pumps = {
            asyncio.create_task(self._pump(reader, upstream_writer)),
            asyncio.create_task(self._pump(upstream_reader, writer)),
        }
        self._pumps |= pumps
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        for pump in pumps:
            pump.cancel()
        for end in (writer, upstream_writer):
            end.transport.abort()
            self._writers.discard(end)
        self._pumps -= pumps

    @staticmethod
    async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await source.read(_CHUNK):
                sink.write(data)
                await sink.drain()
