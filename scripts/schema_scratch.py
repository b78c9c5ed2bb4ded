"""Run ``python -m workqueue.adapters.postgres.schema`` against a scratch database.

Usage: ``schema_scratch.py SERVER_URL --write|--check``. The scratch database is
created on the server, migrated and dumped by the schema module, then dropped.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from urllib.parse import urlsplit, urlunsplit

import asyncpg


async def _admin(server_url: str, statement: str) -> None:
    connection = await asyncpg.connect(server_url)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


def main(server_url: str, mode: str) -> int:
    name = f"workqueue_schema_{uuid.uuid4().hex[:8]}"
    parts = urlsplit(server_url)
    scratch_url = urlunsplit(parts._replace(path=f"/{name}"))
    asyncio.run(_admin(server_url, f'CREATE DATABASE "{name}"'))
    try:
        return subprocess.call(  # noqa: S603 - our own module, arguments from the caller
            [
                sys.executable,
                "-m",
                "workqueue.adapters.postgres.schema",
                "--database-url",
                scratch_url,
                mode,
                "docs/schema.sql",
            ]
        )
    finally:
        asyncio.run(_admin(server_url, f'DROP DATABASE IF EXISTS "{name}"'))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
