"""`workqueue web` from the command line: its flags, and an address it cannot listen on."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from worker_world import WorkerWorld


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port on 127.0.0.1 that another socket is listening on for the test."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_a_port_that_is_not_a_number_is_refused_as_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = WorkerWorld().cli("web", "--port", "eighty")

    assert run.status == 2
    # argparse prints its usage error to the process's stderr itself.
    assert "argument --port: invalid int value: 'eighty'" in capsys.readouterr().err


def test_a_taken_port_ends_the_view_with_one_line_naming_the_address(taken_port: int) -> None:
    run = WorkerWorld().cli("web", "--host", "127.0.0.1", "--port", str(taken_port))

    assert run.status == 1
    lines = run.err.strip().splitlines()
    assert lines[-1].startswith(f"workqueue: cannot listen on 127.0.0.1:{taken_port}: ")
