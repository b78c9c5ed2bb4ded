"""The embedded PostgreSQL: a real server, started by pgserver, when no URL is set.

Its data lives in a directory that persists across runs (see
:func:`~workqueue.entrypoints.worker.settings.default_embedded_data_dir`), printed at
startup. The server listens on a unix socket in that directory only.

Three pgserver habits are handled here:

- Run as root, pgserver starts the server as a ``pgserver`` system user and adds
  ``o+rx`` to every parent of the data directory and of its own binaries. Before
  starting it, :func:`check_data_dir` refuses a data directory inside a home
  directory, and any layout where that chmod would loosen a directory that is
  not already world-traversable, naming the directory.
- Importing it without ``XDG_RUNTIME_DIR`` warns (RuntimeDirWarning); the
  fallback it then uses is fine, so the warning is silenced for that import.
- It counts the processes using a server in ``<data dir>/.handle_pids.json`` and
  stops the server when the last one exits. A process killed with SIGKILL never
  removes its pid, and that stale pid would keep every later run from stopping
  the server; so are pids of dead processes pruned before attaching, and a
  ``postmaster.pid`` naming a process that is not PostgreSQL is removed.
"""

from __future__ import annotations

import json
import os
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from workqueue.domain import WorkQueueError

__all__ = [
    "EmbeddedDatabaseError",
    "EmbeddedPostgres",
    "check_data_dir",
    "directories_loosened_for",
    "prune_stale_handles",
    "start_embedded_postgres",
]

# pgserver chmods parents so that "other" can read and traverse them.
_TRAVERSABLE_BY_OTHERS = stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH
_HANDLE_PIDS = ".handle_pids.json"
_POSTMASTER_PID = "postmaster.pid"


class EmbeddedDatabaseError(WorkQueueError, RuntimeError):
    """The embedded PostgreSQL cannot be started here; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class EmbeddedPostgres:
    """A running embedded server, and the handle that lets this process stop using it."""

    data_dir: Path
    dsn: str
    _server: Any

    def stop(self) -> None:
        """Stop using the server; the last process to stop shuts it down."""
        self._server.cleanup()


def _import_pgserver() -> ModuleType:  # pragma: no mutate block
    """pgserver, which the `embedded` extra installs.

    :raises EmbeddedDatabaseError: if it is not installed, saying what to do.
    """
    try:
        from platformdirs import RuntimeDirWarning

        with warnings.catch_warnings():
            # Without XDG_RUNTIME_DIR pgserver keeps its lock in a per-user temporary
            # directory, which is what we want; the warning would only alarm.
            warnings.simplefilter("ignore", RuntimeDirWarning)
            import pgserver
            import pgserver._commands
    except ImportError:
        raise EmbeddedDatabaseError(
            "WORKQUEUE_DATABASE_URL is unset and the embedded PostgreSQL is not installed: "
            "set WORKQUEUE_DATABASE_URL, or pip install 'workqueue-pg[embedded]'"
        ) from None
    return pgserver


def directories_loosened_for(paths: list[Path]) -> list[Path]:
    """The existing parents of ``paths`` that pgserver's root chmod would change.

    Only directories lacking ``go+rx`` are changed; directories that do not exist
    yet will be created by this process for the server, so are not counted.
    """
    loosened: list[Path] = []
    for path in paths:
        for parent in path.parents:
            if not parent.exists():
                continue
            mode = parent.stat().st_mode
            if mode & _TRAVERSABLE_BY_OTHERS != _TRAVERSABLE_BY_OTHERS and parent not in loosened:
                loosened.append(parent)
    return loosened


def _is_within(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def check_data_dir(data_dir: Path, *, binaries: Path, running_as_root: bool, home: Path) -> None:
    """Refuse a data directory whose use would loosen permissions it should not.

    Only a root process is checked: pgserver touches permissions only then.

    :raises EmbeddedDatabaseError: naming the directory, when ``data_dir`` lies in
        ``home``, or when a parent of ``data_dir`` or of pgserver's ``binaries``
        is not already readable and traversable by other users.
    """
    if not running_as_root:
        return
    if _is_within(data_dir, home):
        raise EmbeddedDatabaseError(
            f"refusing embedded PostgreSQL data directory {data_dir}: it is inside the home "
            f"directory {home}, whose permissions pgserver would loosen when run as root; "
            "set WORKQUEUE_EMBEDDED_DATA_DIR outside it (e.g. /var/lib/workqueue/pgdata) "
            "or set WORKQUEUE_DATABASE_URL"
        )
    loosened = directories_loosened_for([data_dir, binaries])
    if loosened:
        names = ", ".join(str(path) for path in loosened)
        raise EmbeddedDatabaseError(
            f"refusing to start the embedded PostgreSQL: run as root, pgserver would add o+rx "
            f"to {names}; choose a WORKQUEUE_EMBEDDED_DATA_DIR whose parents are already "
            "world-traversable (e.g. /var/lib/workqueue/pgdata) or set WORKQUEUE_DATABASE_URL"
        )


def _process_is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, it is just not ours to signal
    return True


def _process_is_postgres(pid: int) -> bool:
    if not _process_is_alive(pid):
        return False
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "postgres"
    except FileNotFoundError:
        # No /proc (macOS): a live pid is taken at its word, as pgserver does.
        return not Path("/proc").is_dir()
    except OSError:
        return True


def prune_stale_handles(data_dir: Path) -> list[int]:
    """Forget the users of the server that died without saying so; return their pids.

    Removes dead pids from ``.handle_pids.json`` and a ``postmaster.pid`` whose
    process is not PostgreSQL (its server died and the pid was reused or is gone),
    so that pgserver starts a fresh server and the last live user stops it.
    Call with pgserver's lock held.
    """
    pruned: list[int] = []
    handles = data_dir / _HANDLE_PIDS
    if handles.exists():
        try:
            pids = [int(pid) for pid in json.loads(handles.read_text())]
        except (ValueError, TypeError):
            # A file we cannot read counts no one; pgserver rewrites it on attach.
            pids = []
        live = [pid for pid in pids if _process_is_alive(pid)]
        pruned = [pid for pid in pids if pid not in live]
        handles.write_text(json.dumps(live))
    postmaster = data_dir / _POSTMASTER_PID
    if postmaster.exists():
        # Its first line is the server's pid.
        first_line = postmaster.read_text().partition("\n")[0].strip()
        if first_line.isdigit() and not _process_is_postgres(int(first_line)):
            postmaster.unlink()
    return pruned


def start_embedded_postgres(data_dir: Path) -> EmbeddedPostgres:  # pragma: no mutate block
    """Start (or attach to) the embedded server keeping its data in ``data_dir``.

    Blocking: creates the directory and runs initdb on first use (a few seconds),
    attaches in milliseconds when a server already runs there.

    :raises EmbeddedDatabaseError: if the directory is refused (see
        :func:`check_data_dir`) or the server does not start.
    """
    data_dir = data_dir.expanduser().absolute()
    pgserver = _import_pgserver()
    check_data_dir(
        data_dir,
        binaries=Path(pgserver._commands.POSTGRES_BIN_PATH),
        running_as_root=os.geteuid() == 0,
        home=Path.home(),
    )
    try:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        with pgserver.PostgresServer._lock:
            if data_dir.exists():
                prune_stale_handles(data_dir)
        # "stop": the server stops when the last process using it exits, so no
        # PostgreSQL outlives the worker; the data stays for the next run.
        server = pgserver.get_server(data_dir, cleanup_mode="stop")
        dsn = server.get_uri()
    except Exception as error:
        raise EmbeddedDatabaseError(
            f"the embedded PostgreSQL in {data_dir} did not start: {error} "
            f"(its log: {data_dir / 'log'})"
        ) from error
    return EmbeddedPostgres(data_dir=data_dir, dsn=str(dsn), _server=server)
