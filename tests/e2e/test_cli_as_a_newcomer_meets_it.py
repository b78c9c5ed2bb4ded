"""``workqueue`` as a newcomer meets it, a real process: bad input is refused before any
database is reached (no embedded server started for it), retries say so, and Ctrl-C during
them ends the command at once with one line (a worker's start-up too, also by SIGTERM)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from e2e_support import cli_argv, run_cli, worker_env

pytestmark = pytest.mark.e2e

# Nothing listens on port 1: every connection attempt is refused.
UNREACHABLE = "postgresql://nobody@127.0.0.1:1/none"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["enqueue", "no_such_kind"], "workqueue: unknown kind 'no_such_kind' (known kinds: "),
        (
            ["enqueue", "work_item_retention", "--payload", '{"retention_days": "soon"}'],
            "workqueue: invalid payload for kind 'work_item_retention': retention_days: ",
        ),
    ],
)
def test_bad_input_is_refused_at_once_without_reaching_the_database(
    argv: list[str], message: str
) -> None:
    started = time.monotonic()
    run = run_cli(cli_argv(*argv), worker_env(UNREACHABLE))

    assert run.returncode == 2
    assert run.stderr.startswith(message)
    assert run.stderr.count("\n") == 1
    assert "database" not in run.stderr
    assert time.monotonic() - started < 5


def test_bad_input_never_starts_the_embedded_server(tmp_path: Path) -> None:
    env = worker_env("", WORKQUEUE_EMBEDDED_DATA_DIR=str(tmp_path / "pgdata"))
    del env["WORKQUEUE_DATABASE_URL"]

    run = run_cli(cli_argv("enqueue", "no_such_kind"), env)

    assert run.returncode == 2
    assert "embedded" not in run.stderr
    assert not (tmp_path / "pgdata").exists()


def test_a_duration_that_is_none_says_what_a_duration_looks_like() -> None:
    run = run_cli(cli_argv("status"), worker_env(UNREACHABLE, WORKQUEUE_POLL_INTERVAL="5x"))

    assert (run.returncode, run.stderr) == (
        2,
        "workqueue: invalid setting WORKQUEUE_POLL_INTERVAL: "
        "expected a duration like 30s, 5m, 1h or a number of seconds\n",
    )


def _default_sigint() -> None:
    # A shell's background job inherits SIGINT ignored; a user's terminal does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("command", "signum", "status"),
    [
        (["status"], signal.SIGINT, 130),
        (["enqueue", "token_cleanup"], signal.SIGINT, 130),
        (["migrate"], signal.SIGINT, 130),
        # A worker whose start-up a stop signal cuts short never ran: not a clean stop.
        (["worker"], signal.SIGINT, 130),
        (["worker"], signal.SIGTERM, 143),
    ],
    ids=["status", "enqueue", "migrate", "worker-SIGINT", "worker-SIGTERM"],
)
def test_a_stop_signal_while_retrying_ends_the_command_at_once_with_one_line(
    command: list[str], signum: signal.Signals, status: int, tmp_path: Path
) -> None:
    log = tmp_path / "stderr"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            cli_argv(*command),
            env=worker_env(UNREACHABLE),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            preexec_fn=_default_sigint,
        )
        try:
            deadline = time.monotonic() + 15
            while "retrying (2/5)" not in log.read_text():
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
            process.send_signal(signum)
            interrupted = time.monotonic()
            ended = process.wait(timeout=10)
            took = time.monotonic() - interrupted
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    output = log.read_text()
    assert ended == status
    assert took < 1.5
    assert output.endswith("\nworkqueue: interrupted\n")
    assert "Traceback" not in output
    assert "retrying (2/5) in 0.5 s" in output


def _catches(pid: int, signum: signal.Signals) -> bool:
    """Whether process ``pid`` has a handler of its own for ``signum`` (Linux's SigCgt)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signum.value - 1) & 1)
    return False


def _has_loaded(pid: int, fragment: str) -> bool:
    return fragment in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.parametrize(
    ("command", "signum", "status"),
    [(["worker"], signal.SIGTERM, 143), (["status"], signal.SIGTERM, 143)],
    ids=["worker", "status"],
)
def test_a_stop_signal_in_the_first_moments_is_heard_before_anything_heavy_is_loaded(
    command: list[str], signum: signal.Signals, status: int, tmp_path: Path
) -> None:
    log = tmp_path / "stderr"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            cli_argv(*command),
            env=worker_env(UNREACHABLE),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            deadline = time.monotonic() + 15
            while not _catches(process.pid, signum):
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
            # Heard before the command line (asyncpg and all) was even imported.
            loaded_before = _has_loaded(process.pid, "asyncpg")
            process.send_signal(signum)
            ended = process.wait(timeout=10)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    assert not loaded_before
    assert ended == status
    assert log.read_text().endswith("workqueue: interrupted\n")
    assert "Traceback" not in log.read_text()
