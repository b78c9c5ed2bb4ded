"""A PostgreSQL server of the test's own, which it may stop and start at will.

The database-restart test must never restart the server other tests share, so it
runs one of its own: the binaries of the ``pgserver`` wheel (a dependency of
workqueue, so always installed), a data directory in ``/tmp``, a free TCP port on
127.0.0.1, trust authentication. As root, the server runs as the ``pgserver``
system user, as pgserver itself does (PostgreSQL refuses to run as root).

fsync is off: the test restarts the server, it does not crash the machine, and
a clean shutdown writes everything it needs anyway.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import warnings
from pathlib import Path

__all__ = ["RestartablePostgres"]

_SERVER_USER = "pgserver"
_CTL_TIMEOUT = 60


def _bin_dir() -> Path:
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise RuntimeError("the pgserver wheel is not installed")
    return Path(spec.origin).parent / "pginstall" / "bin"


def _server_user(bin_dir: Path) -> str | None:
    """The system user to run the server as: none unless we are root."""
    if os.geteuid() != 0:
        return None
    with warnings.catch_warnings():
        # pgserver warns on import without XDG_RUNTIME_DIR; its fallback is fine here.
        warnings.simplefilter("ignore")
        from pgserver.utils import ensure_prefix_permissions, ensure_user_exists
    ensure_user_exists(_SERVER_USER)
    # The server user must reach the binaries; pgserver opens their parents the same way.
    ensure_prefix_permissions(bin_dir)
    return _SERVER_USER


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class RestartablePostgres:
    """One PostgreSQL server in a temporary data directory; :meth:`destroy` removes it."""

    def __init__(self, data_dir: Path, port: int, user: str | None, bin_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = port
        self._user = user
        self._bin_dir = bin_dir
        self.running = False

    @classmethod
    def create(cls) -> RestartablePostgres:
        """initdb a fresh data directory and start the server on it.

        :raises RuntimeError: naming the command and its output, if initdb or the
            start fails.
        """
        bin_dir = _bin_dir()
        user = _server_user(bin_dir)
        data_dir = Path(tempfile.mkdtemp(prefix="workqueue-fault-pg-", dir="/tmp"))
        if user is not None:
            entry = pwd.getpwnam(user)
            os.chown(data_dir, entry.pw_uid, entry.pw_gid)
        server = cls(data_dir, _free_port(), user, bin_dir)
        try:
            server._run(
                "initdb", "-D", str(data_dir), "-U", "postgres", "--auth=trust",
                "--encoding=UTF8", "--no-sync",
            )  # fmt: skip
            server.start()
        except BaseException:
            server.destroy()
            raise
        return server

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-h 127.0.0.1 -p {self.port} -k {self.data_dir} -c fsync=off -c max_connections=200"
        )
        self._run(
            "pg_ctl", "-D", str(self.data_dir), "-w", "-t", str(_CTL_TIMEOUT),
            "-l", str(self.data_dir / "server.log"), "-o", options, "start",
        )  # fmt: skip
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` ends every session at once, ``immediate`` is a crash."""
        self._run(
            "pg_ctl", "-D", str(self.data_dir), "-w", "-t", str(_CTL_TIMEOUT), "-m", mode, "stop"
        )
        self.running = False

    def destroy(self) -> None:
        """Stop the server if it runs, and remove its data directory."""
        if self.running:
            with contextlib.suppress(RuntimeError):
                self.stop("immediate")
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def log_tail(self, lines: int = 30) -> str:
        log = self.data_dir / "server.log"
        if not log.exists():
            return ""
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])

    def _run(self, program: str, *args: str) -> None:
        # Output goes to a file, not a pipe: pg_ctl's server inherits the pipe and
        # would keep it open, and the call would never return.
        with tempfile.TemporaryFile("w+") as output:
            completed = subprocess.run(
                [str(self._bin_dir / program), *args],
                stdout=output,
                stderr=subprocess.STDOUT,
                user=self._user,
                cwd=self.data_dir,
                timeout=_CTL_TIMEOUT + 10,
                check=False,
            )
            if completed.returncode != 0:
                output.seek(0)
                raise RuntimeError(
                    f"{program} {' '.join(args)} exited {completed.returncode}:\n"
                    f"{output.read()}\n{self.log_tail()}"
                )
