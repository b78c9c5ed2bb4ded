"""The embedded PostgreSQL's guards: no loosened home, no stale users, exact refusals and
every liveness answer. No server is started here."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from workqueue.entrypoints.worker.embedded import (
    EmbeddedDatabaseError,
    EmbeddedPostgres,
    check_data_dir,
    directories_loosened_for,
    prune_stale_handles,
)


def dead_pid() -> int:
    process = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(process.stdout)


@pytest.fixture
def live_pid() -> Iterator[int]:
    """A live process of the test's own: probing it must not disturb the test runner."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


def open_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o755)
    return path


def test_as_root_a_data_dir_inside_the_home_directory_is_refused(tmp_path: Path) -> None:
    home = open_dir(tmp_path / "home" / "alice")

    with pytest.raises(EmbeddedDatabaseError, match="inside the home directory"):
        check_data_dir(
            home / ".local" / "state" / "pgdata",
            binaries=open_dir(tmp_path / "bin"),
            running_as_root=True,
            home=home,
        )


def test_as_root_a_parent_that_others_cannot_traverse_is_refused_and_named(
    tmp_path: Path,
) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)

    with pytest.raises(EmbeddedDatabaseError) as raised:
        check_data_dir(
            private / "queue" / "pgdata",
            binaries=open_dir(tmp_path / "bin" / "pg"),
            running_as_root=True,
            home=tmp_path / "nobody-home",
        )

    assert f"would add o+rx to {private}" in str(raised.value)
    assert oct(private.stat().st_mode & 0o777) == oct(0o700)


def test_as_root_a_parent_of_the_server_binaries_counts_too(tmp_path: Path) -> None:
    hidden_venv = tmp_path / "venv"
    hidden_venv.mkdir(mode=0o700)
    hidden_venv.chmod(0o700)

    with pytest.raises(EmbeddedDatabaseError, match=str(hidden_venv)):
        check_data_dir(
            open_dir(tmp_path / "data") / "pgdata",
            binaries=hidden_venv / "pgserver" / "bin",
            running_as_root=True,
            home=tmp_path / "nobody-home",
        )


def test_as_root_world_traversable_parents_are_accepted() -> None:
    # pytest's tmp_path is private (0700), so this case needs a directory of its own
    # right under the system's temporary directory.
    root = Path(tempfile.mkdtemp())
    try:
        root.chmod(0o755)
        if directories_loosened_for([root / "x"]):
            pytest.skip(f"the parents of {root} are not world-traversable here")

        check_data_dir(
            open_dir(root / "lib" / "workqueue") / "pgdata",
            binaries=open_dir(root / "bin" / "pg"),
            running_as_root=True,
            home=root / "nobody-home",
        )
    finally:
        shutil.rmtree(root)


def test_an_ordinary_user_may_keep_the_data_in_their_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)

    check_data_dir(
        home / ".local" / "state" / "workqueue" / "pgdata",
        binaries=tmp_path,
        running_as_root=False,
        home=home,
    )


def test_directories_not_created_yet_are_not_counted_as_loosened(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    existing = open_dir(tmp_path / "a")

    loosened = directories_loosened_for([existing / "b" / "c" / "pgdata"])

    assert tmp_path in loosened
    assert not {existing, existing / "b", existing / "b" / "c"} & set(loosened)


def test_pids_of_dead_users_are_pruned_and_live_ones_kept(tmp_path: Path, live_pid: int) -> None:
    dead, live = dead_pid(), live_pid
    (tmp_path / ".handle_pids.json").write_text(json.dumps([dead, live]))

    pruned = prune_stale_handles(tmp_path)

    assert pruned == [dead]
    assert json.loads((tmp_path / ".handle_pids.json").read_text()) == [live]


def test_a_postmaster_pid_of_a_process_that_is_not_postgres_is_removed(
    tmp_path: Path, live_pid: int
) -> None:
    postmaster = tmp_path / "postmaster.pid"
    postmaster.write_text(f"{live_pid}\n{tmp_path}\n")

    prune_stale_handles(tmp_path)

    assert not postmaster.exists()


def test_an_unreadable_handle_list_counts_no_one(tmp_path: Path) -> None:
    (tmp_path / ".handle_pids.json").write_text("{not json")

    prune_stale_handles(tmp_path)

    assert json.loads((tmp_path / ".handle_pids.json").read_text()) == []


# Above any pid_max a Linux kernel allows: no process has it.
NO_SUCH_PID = 5_000_000


def a_program_named(directory: Path, name: str) -> Path:
    """A Python script called ``name`` that says "ready" once running, then waits a minute.

    The kernel names a process after the file it executes, so /proc shows ``name``
    from the moment the script can print; a copied binary would give no such sign.
    """
    program = directory / name
    program.write_text(
        f"#!{sys.executable}\nimport time\nprint('ready', flush=True)\ntime.sleep(60)\n"
    )
    program.chmod(0o755)
    return program


@pytest.fixture
def spawn() -> Iterator[Callable[[Path], int]]:
    """Start a program; return its pid once it said it is running."""
    children: list[subprocess.Popen[bytes]] = []

    def start(program: Path) -> int:
        child = subprocess.Popen([str(program)], stdout=subprocess.PIPE)
        children.append(child)
        assert child.stdout is not None
        assert child.stdout.readline() == b"ready\n"
        return child.pid

    yield start
    for child in children:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


@pytest.fixture
def signals_sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """os.kill answered by a script: pid 1 belongs to another user, NO_SUCH_PID is gone."""
    sent: list[tuple[int, int]] = []

    def kill(pid: int, signum: int) -> None:
        sent.append((pid, signum))
        if pid == NO_SUCH_PID:
            raise ProcessLookupError(pid)
        if pid == 1:
            raise PermissionError(pid)

    monkeypatch.setattr(os, "kill", kill)
    return sent


def write_postmaster(data_dir: Path, first_line: str) -> Path:
    postmaster = data_dir / "postmaster.pid"
    postmaster.write_text(f"{first_line}\n{data_dir}\n5432\n")
    return postmaster


def test_a_data_dir_in_the_home_directory_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    home = tmp_path / "home"

    with pytest.raises(EmbeddedDatabaseError) as refused:
        check_data_dir(home / "pgdata", binaries=tmp_path, running_as_root=True, home=home)

    assert str(refused.value) == (
        f"refusing embedded PostgreSQL data directory {home / 'pgdata'}: it is inside the "
        f"home directory {home}, whose permissions pgserver would loosen when run as root; "
        "set WORKQUEUE_EMBEDDED_DATA_DIR outside it (e.g. /var/lib/workqueue/pgdata) "
        "or set WORKQUEUE_DATABASE_URL"
    )


def test_every_directory_pgserver_would_loosen_is_named(tmp_path: Path) -> None:
    for name in ("data", "bin"):
        (tmp_path / name).mkdir(mode=0o700)
        (tmp_path / name).chmod(0o700)
    tmp_path.chmod(0o755)

    with pytest.raises(EmbeddedDatabaseError) as refused:
        check_data_dir(
            tmp_path / "data" / "pgdata",
            binaries=tmp_path / "bin" / "pg",
            running_as_root=True,
            home=tmp_path / "nobody",
        )

    loosened = directories_loosened_for([tmp_path / "data" / "pgdata", tmp_path / "bin" / "pg"])
    assert loosened[0] == tmp_path / "data"
    assert loosened[-1] == tmp_path / "bin"
    assert str(refused.value) == (
        "refusing to start the embedded PostgreSQL: run as root, pgserver would add o+rx "
        f"to {', '.join(str(path) for path in loosened)}; choose a WORKQUEUE_EMBEDDED_DATA_DIR "
        "whose parents are already world-traversable (e.g. /var/lib/workqueue/pgdata) or set "
        "WORKQUEUE_DATABASE_URL"
    )


def test_without_a_handle_list_no_one_is_pruned(tmp_path: Path) -> None:
    assert prune_stale_handles(tmp_path) == []


def test_a_liveness_probe_sends_no_signal_and_trusts_a_process_it_may_not_signal(
    tmp_path: Path, signals_sent: list[tuple[int, int]]
) -> None:
    (tmp_path / ".handle_pids.json").write_text(json.dumps([NO_SUCH_PID, 1, os.getpid()]))

    pruned = prune_stale_handles(tmp_path)

    assert pruned == [NO_SUCH_PID]
    assert json.loads((tmp_path / ".handle_pids.json").read_text()) == [1, os.getpid()]
    assert {signum for _, signum in signals_sent} == {0}


def test_a_postmaster_pid_of_a_running_postgres_is_kept(
    tmp_path: Path, spawn: Callable[[Path], int]
) -> None:
    pid = spawn(a_program_named(tmp_path, "postgres"))
    postmaster = write_postmaster(tmp_path, str(pid))

    prune_stale_handles(tmp_path)

    assert postmaster.exists()


def test_a_postmaster_pid_of_a_dead_process_is_removed(tmp_path: Path) -> None:
    postmaster = write_postmaster(tmp_path, str(NO_SUCH_PID))

    prune_stale_handles(tmp_path)

    assert not postmaster.exists()


@pytest.mark.parametrize("first_line", ["", "not a pid", "12 34"])
def test_a_postmaster_file_that_names_no_pid_is_left_for_postgres_to_judge(
    tmp_path: Path, first_line: str
) -> None:
    postmaster = write_postmaster(tmp_path, first_line)

    prune_stale_handles(tmp_path)

    assert postmaster.exists()


def test_a_pid_padded_with_spaces_still_names_the_process(tmp_path: Path) -> None:
    postmaster = write_postmaster(tmp_path, f"  {NO_SUCH_PID}  ")

    prune_stale_handles(tmp_path)

    assert not postmaster.exists()


def test_a_live_process_without_a_proc_entry_is_not_taken_for_postgres_on_linux(
    tmp_path: Path, signals_sent: list[tuple[int, int]]
) -> None:
    # The probe says "alive", but /proc has no such pid: not a PostgreSQL of ours.
    alive_elsewhere = NO_SUCH_PID + 1
    postmaster = write_postmaster(tmp_path, str(alive_elsewhere))

    prune_stale_handles(tmp_path)

    assert signals_sent == [(alive_elsewhere, 0)]
    assert not postmaster.exists()


def test_a_process_whose_name_cannot_be_read_is_given_the_benefit_of_the_doubt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawn: Callable[[Path], int]
) -> None:
    pid = spawn(a_program_named(tmp_path, "python"))
    postmaster = write_postmaster(tmp_path, str(pid))
    read_text = pathlib.Path.read_text

    def unreadable_proc(self: Path, *args: object, **kwargs: object) -> str:
        if str(self).startswith("/proc/"):
            raise PermissionError(str(self))
        return read_text(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pathlib.Path, "read_text", unreadable_proc)

    prune_stale_handles(tmp_path)

    assert postmaster.exists()


def test_stopping_an_embedded_server_lets_go_of_it() -> None:
    class Server:
        cleaned_up = 0

        def cleanup(self) -> None:
            self.cleaned_up += 1

    server = Server()
    EmbeddedPostgres(data_dir=Path("/srv/pgdata"), dsn="postgresql://x", _server=server).stop()

    assert server.cleaned_up == 1
