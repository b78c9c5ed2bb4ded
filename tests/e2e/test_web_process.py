"""``workqueue web`` as a real process: it serves, stops cleanly, and hides the password."""

from __future__ import annotations

import asyncio
import signal
import socket
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from e2e_support import Spawner, cli_argv, eventually, run_cli, worker_env

pytestmark = pytest.mark.e2e

SECRET = "hunter2-web"


def with_password(url: str) -> str:
    # Trust authentication accepts any password: it is there to be hidden.
    parts = urlsplit(url)
    user, _, host = parts.netloc.rpartition("@")
    user = user.partition(":")[0] or "postgres"
    return urlunsplit((parts.scheme, f"{user}:{SECRET}@{host}", parts.path, parts.query, ""))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def test_the_view_serves_until_sigterm_and_never_shows_the_password(
    database_url: str, spawn: Spawner
) -> None:
    if "@" not in urlsplit(database_url).netloc:
        pytest.skip("the test database URL names no user to give a password")
    port = free_port()
    env = worker_env(with_password(database_url), WORKQUEUE_WEB_PORT=str(port))
    web = spawn(cli_argv("web"), env)
    base = f"http://127.0.0.1:{port}"

    async def healthy() -> bool:
        try:
            async with httpx.AsyncClient() as client:
                return (await client.get(f"{base}/healthz")).status_code == 200
        except httpx.HTTPError:
            return False

    await eventually(healthy, within=30, what="a healthy view", context=web.output)
    async with httpx.AsyncClient(base_url=base) as client:
        bodies = [(await client.get(path)).text for path in ("/", "/api/overview", "/metrics")]
    web.send(signal.SIGTERM)

    assert await web.exit_status() == 0
    output = web.output()
    assert f"serving the admin view on http://127.0.0.1:{port}/" in output
    assert ":***@" in output
    assert "the admin view stopped" in output
    for text in [output, *bodies]:
        assert SECRET not in text


async def test_a_port_that_is_taken_ends_the_view_with_a_failure(
    database_url: str, spawn: Spawner
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        web = spawn(cli_argv("web", "--port", str(port)), worker_env(database_url))

        status = await web.exit_status(within=30)

    assert status == 1
    assert web.output().strip().splitlines()[-1] == (
        f"workqueue: cannot listen on 127.0.0.1:{port}: [Errno 98] Address already in use"
    )


def test_a_bad_port_setting_is_one_line_and_status_two(database_url: str) -> None:
    run = run_cli(cli_argv("web"), worker_env(database_url, WORKQUEUE_WEB_PORT="http"))

    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "workqueue: invalid setting WORKQUEUE_WEB_PORT: Input should be a valid integer, "
        "unable to parse string as an integer"
    ]


async def test_an_unreachable_database_ends_the_view_before_it_listens(spawn: Spawner) -> None:
    port = free_port()
    url = f"postgresql://nobody:{SECRET}@127.0.0.1:1/none"
    env = worker_env(url, WORKQUEUE_CONNECT_ATTEMPTS="1", WORKQUEUE_WEB_PORT=str(port))
    web = spawn(cli_argv("web"), env)

    status = await web.exit_status(within=30)
    await asyncio.sleep(0)

    assert status == 1
    assert "cannot reach the database postgresql://nobody:***@127.0.0.1:1/none" in web.output()
    assert SECRET not in web.output()
