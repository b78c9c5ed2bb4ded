"""Who the kit's test PgBouncer runs as, and the one line that says why none can run.

PgBouncer refuses to run as root; run by root it must still reach the server,
which for the embedded pgserver is a socket in a directory only its owner may
enter. (The e2e tests through PgBouncer and
``test_the_kit_finds_a_server.py`` run a real one.)
"""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from workqueue.adapters.testing.postgres import pgbouncer
from workqueue.adapters.testing.postgres.pgbouncer import pgbouncer_unavailable, pgbouncer_user

OVER_TCP = "postgresql://postgres@127.0.0.1:5432/postgres"


def on_socket(directory: Path) -> str:
    return f"postgresql://postgres:@/postgres?host={directory}"


@pytest.fixture
def open_directory() -> Iterator[Path]:
    """A directory under /tmp that anyone may go through (pytest's tmp_path is root's own)."""
    directory = Path(tempfile.mkdtemp(prefix="workqueue-pgbouncer-test-"))
    directory.chmod(0o711)
    try:
        yield directory
    finally:
        shutil.rmtree(directory)


@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pgbouncer, "find_pgbouncer", lambda: "/usr/sbin/pgbouncer")


def test_pgbouncer_run_by_another_user_runs_as_that_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert pgbouncer_user(OVER_TCP) is None


def test_pgbouncer_run_by_root_runs_as_nobody_before_a_server_over_tcp(as_root: None) -> None:
    assert pgbouncer_user(OVER_TCP) == "nobody"


def test_pgbouncer_run_by_root_runs_as_the_owner_of_the_servers_socket_directory(
    open_directory: Path,
) -> None:
    directory = open_directory / "socket"
    directory.mkdir(mode=0o700)
    if os.geteuid() == 0:
        owner = pwd.getpwnam("daemon")
        os.chown(directory, owner.pw_uid, owner.pw_gid)
    else:
        owner = pwd.getpwuid(os.geteuid())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "geteuid", lambda: 0)
        patch.setattr(pgbouncer, "find_pgbouncer", lambda: "/usr/sbin/pgbouncer")
        assert pgbouncer_user(on_socket(directory)) == owner.pw_name
        assert pgbouncer_unavailable(on_socket(directory)) is None


def test_a_pgbouncer_that_is_not_installed_is_said_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pgbouncer, "find_pgbouncer", lambda: None)
    assert pgbouncer_unavailable(OVER_TCP) == (
        "pgbouncer is not installed (apt-get install pgbouncer)"
    )


def test_pgbouncer_can_run_before_a_server_over_tcp(installed: None, as_root: None) -> None:
    assert pgbouncer_unavailable(OVER_TCP) is None


def test_a_socket_directory_that_is_not_there_is_said_in_one_line(
    installed: None, tmp_path: Path
) -> None:
    missing = tmp_path / "gone"
    assert pgbouncer_unavailable(on_socket(missing)) == (
        f"the test server's socket directory {missing} is not there"
    )


def test_a_socket_directory_of_roots_that_nobody_cannot_enter_is_said_in_one_line(
    installed: None, open_directory: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("only root makes a directory of root's")
    directory = open_directory / "socket"
    directory.mkdir(mode=0o700)
    assert pgbouncer_unavailable(on_socket(directory)) == (
        "pgbouncer, which refuses to run as root, runs as nobody, who cannot reach"
        f" the test server's socket directory {directory}"
    )
