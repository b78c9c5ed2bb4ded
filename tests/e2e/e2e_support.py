"""Running ``workqueue`` as a real process and watching the database it works on.

These are real processes, so waiting is on the wall clock, always with a deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

SCRIPT = Path(__file__).with_name("e2e_worker_script.py")

# Short intervals so that a test sees a whole cycle in a fraction of a second.
FAST_SETTINGS = {
    "WORKQUEUE_POLL_INTERVAL": "0.2",
    "WORKQUEUE_HEARTBEAT_INTERVAL": "0.2",
    "WORKQUEUE_LEASE_DURATION": "10",
    "WORKQUEUE_LOG_LEVEL": "INFO",
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def worker_env(database_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKQUEUE_")}
    return {**env, **FAST_SETTINGS, "WORKQUEUE_DATABASE_URL": database_url, **extra}


def cli_argv(*args: str) -> list[str]:
    """The production command line, as the console script runs it."""
    return [sys.executable, "-m", "workqueue.entrypoints.console", *args]


def script_argv(*args: str) -> list[str]:
    """The command line with the test-only kinds (see e2e_worker_script.py)."""
    return [sys.executable, str(SCRIPT), *args]


class WorkerProcess:
    """One ``workqueue`` process, its output in a file so it can never block on a pipe."""

    def __init__(
        self, argv: list[str], env: dict[str, str], log_path: Path, cwd: Path | None = None
    ) -> None:
        self.log_path = log_path
        self._log = log_path.open("w")
        self.process = subprocess.Popen(
            argv, env=env, stdout=self._log, stderr=subprocess.STDOUT, cwd=cwd
        )

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def send(self, signum: signal.Signals) -> None:
        self.process.send_signal(signum)

    async def wait_for_output(self, text: str, *, within: float = 15.0) -> None:
        await eventually(
            lambda: _async_value(text in self.output()),
            within=within,
            what=f"{text!r} in the worker's output",
            context=self.output,
        )

    async def exit_status(self, *, within: float = 15.0) -> int:
        deadline = time.monotonic() + within
        while self.process.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the worker did not exit in {within} s:\n{self.output()}")
            await asyncio.sleep(0.05)
        return self.process.returncode

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log.close()


@dataclass
class Spawner:
    tmp_path: Path
    processes: list[WorkerProcess]

    def __call__(
        self, argv: list[str], env: dict[str, str], cwd: Path | None = None
    ) -> WorkerProcess:
        log_path = self.tmp_path / f"worker-{len(self.processes)}.log"
        process = WorkerProcess(argv, env, log_path, cwd)
        self.processes.append(process)
        return process

    def close_all(self) -> None:
        for process in self.processes:
            process.close()


def run_cli(
    argv: list[str], env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=60, check=False, cwd=cwd
    )


async def _async_value(value: bool) -> bool:
    return value


async def eventually(
    check: Callable[[], Awaitable[bool]],
    *,
    within: float,
    what: str,
    context: Callable[[], str] = lambda: "",
) -> None:
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} within {within} s\n{context()}")
        await asyncio.sleep(0.1)


async def work_items(database_url: str) -> list[dict[str, Any]]:
    connection = await asyncpg.connect(database_url)
    try:
        rows = await connection.fetch(
            "SELECT id, kind, status, attempt, stalls, worker_id, progress::text AS progress"
            " FROM work_items ORDER BY id"
        )
    finally:
        await connection.close()
    return [
        {**dict(row), "progress": None if row["progress"] is None else json.loads(row["progress"])}
        for row in rows
    ]
