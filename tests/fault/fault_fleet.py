"""Worker processes for the fault tests: started, killed, paused and stopped on purpose.

Each worker is ``fault_worker_script.py worker`` (the production worker serving
the chore kind) with short lease, heartbeat and poll settings, and a worker id
that is also its sessions' ``application_name``, so the database can tell whose
connection is whose and who wrote what (see fault_database.py).

Real processes: every wait is on the wall clock, and every wait has a deadline.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Collection
from pathlib import Path

__all__ = [
    "FAULT_SETTINGS",
    "Fleet",
    "FleetWorker",
    "eventually",
    "with_application_name",
]

SCRIPT = Path(__file__).with_name("fault_worker_script.py")

LANES = [1, 4]
"""The executors per process the load tests run with: one, and several sharing a process."""

FAULT_SETTINGS = {
    "WORKQUEUE_LEASE_DURATION": "3",
    "WORKQUEUE_HEARTBEAT_INTERVAL": "0.5",
    "WORKQUEUE_POLL_INTERVAL": "0.5",
    "WORKQUEUE_MAX_STALLS": "3",
    "WORKQUEUE_LOG_LEVEL": "INFO",
}
"""The settings every fault worker runs with, unless a test says otherwise."""


def with_application_name(url: str, name: str) -> str:
    """``url`` whose sessions carry ``application_name=name`` (asyncpg passes it on)."""
    return f"{url}{'&' if '?' in url else '?'}application_name={name}"


async def eventually(
    check: Callable[[], Awaitable[bool]],
    *,
    within: float,
    what: str,
    context: Callable[[], str] = lambda: "",
    every: float = 0.1,
) -> float:
    """Wait until ``check`` holds; return how long that took.

    :raises AssertionError: naming ``what``, with ``context()``, after ``within`` seconds.
    """
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > within:
            raise AssertionError(f"no {what} within {within} s\n{context()}")
        await asyncio.sleep(every)
    return time.monotonic() - started


class FleetWorker:
    """One worker process; its output goes to a file so that it never blocks on a pipe."""

    def __init__(self, worker_id: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.worker_id = worker_id
        self.log_path = log
        self._log = log.open("w")
        self.process = subprocess.Popen(argv, env=env, stdout=self._log, stderr=subprocess.STDOUT)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors="replace")

    def lines_matching(self, pattern: str) -> list[re.Match[str]]:
        return list(re.finditer(pattern, self.output(), flags=re.MULTILINE))

    def send(self, signum: signal.Signals) -> None:
        self.process.send_signal(signum)

    def kill(self) -> None:
        """SIGKILL, and wait until the process is gone: nothing it held can change after."""
        self.process.kill()
        self.process.wait(timeout=10)

    async def wait_for_output(self, text: str, *, within: float = 20.0) -> float:
        async def seen() -> bool:
            return text in self.output()

        return await eventually(
            seen, within=within, what=f"{text!r} from {self.worker_id}", context=self.output
        )

    async def wait_for_line(self, pattern: str, *, within: float = 20.0) -> float:
        """Wait for a line of output matching the regular expression ``pattern``."""

        async def seen() -> bool:
            return bool(self.lines_matching(pattern))

        return await eventually(
            seen, within=within, what=f"/{pattern}/ from {self.worker_id}", context=self.output
        )

    async def exit_status(self, *, within: float = 20.0) -> int:
        async def exited() -> bool:
            return not self.alive

        await eventually(
            exited, within=within, what=f"exit of {self.worker_id}", context=self.output
        )
        return self.process.returncode

    def close(self) -> None:
        if self.alive:
            # A paused process takes no SIGKILL until continued on some systems' ptrace
            # setups; continuing it first costs nothing.
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait(timeout=10)
        self._log.close()


class Fleet:
    """Starts fault workers on one database; :meth:`close` kills whatever still runs.

    :param database_url: where the workers work.
    :param logs: the directory for each worker's output.
    :param settings: ``WORKQUEUE_*`` variables over :data:`FAULT_SETTINGS`.
    """

    def __init__(self, database_url: str, logs: Path, **settings: str) -> None:
        self._database_url = database_url
        self._logs = logs
        self._settings = {**FAULT_SETTINGS, **settings}
        self.workers: list[FleetWorker] = []

    def start(self, **settings: str) -> FleetWorker:
        """Start one more worker, named ``fault-wNN`` in start order."""
        worker_id = f"fault-w{len(self.workers) + 1:02d}"
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("WORKQUEUE_")}
        env = {
            **inherited,
            **self._settings,
            **settings,
            "WORKQUEUE_DATABASE_URL": with_application_name(self._database_url, worker_id),
            "WORKQUEUE_WORKER_ID": worker_id,
        }
        worker = FleetWorker(
            worker_id,
            [sys.executable, str(SCRIPT), "worker", "--no-migrate"],
            env,
            self._logs / f"{worker_id}.log",
        )
        self.workers.append(worker)
        return worker

    @property
    def alive(self) -> list[FleetWorker]:
        return [worker for worker in self.workers if worker.alive]

    def outputs(self, tail: int = 15) -> str:
        """The last lines of every worker's output, for an assertion message."""
        return "\n".join(
            f"--- {worker.worker_id}:\n" + "\n".join(worker.output().splitlines()[-tail:])
            for worker in self.workers
        )

    def lines_naming(self, words: Collection[str]) -> str:
        """Every worker's output lines that contain any of ``words``, for an assertion
        message."""
        return "\n".join(
            f"{worker.worker_id}: {line}"
            for worker in self.workers
            for line in worker.output().splitlines()
            if any(word in line for word in words)
        )

    async def stop_all(self, *, within: float = 20.0) -> dict[str, int]:
        """SIGTERM every live worker once it has started; return each one's exit status.

        A worker still importing has no signal handler yet, and SIGTERM would end it
        with the default action instead of the graceful stop under test.
        """
        alive = self.alive
        for worker in alive:
            await worker.wait_for_output("worker started", within=within)
        for worker in alive:
            worker.send(signal.SIGTERM)
        return {worker.worker_id: await worker.exit_status(within=within) for worker in alive}

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
