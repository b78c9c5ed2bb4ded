"""The embedded PostgreSQL's guards: no loosened home, no stale users. No server started here."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from entrypoints.worker.embedded import (
    EmbeddedDatabaseError,
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
