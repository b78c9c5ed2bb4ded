"""A real PgBouncer in transaction mode before the test PostgreSQL, for one test.

Debian's ``pgbouncer`` (``apt-get install pgbouncer``; ``.ci/run`` installs it)
is started on a free port with a small configuration in a directory of its own
(under /tmp: as root it runs as ``nobody``, who must reach it):
``pool_mode = transaction``, ``auth_type = trust``, every database forwarded to
the test server, at most ``pool_size`` server connections per database and
user. PgBouncer refuses to run as root.
:func:`pgbouncer_url` rewrites a test database's URL to go through it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["PgBouncer", "find_pgbouncer", "pgbouncer_url", "reaches_over_tcp"]


def find_pgbouncer() -> str | None:
    """The pgbouncer executable, or None when it is not installed."""
    return shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if os.access("/usr/sbin/pgbouncer", os.X_OK) else None
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _server_of(database_url: str) -> tuple[str, int]:
    """Where the URL's server listens: a host (or socket directory) and a port."""
    parts = urlsplit(database_url)
    query = dict(parse_qsl(parts.query))
    host = query.get("host") or parts.hostname or "127.0.0.1"
    return host, int(query.get("port") or parts.port or 5432)


def reaches_over_tcp(database_url: str) -> bool:
    """Whether the URL's server is a TCP address, not a socket directory."""
    return not _server_of(database_url)[0].startswith("/")


class PgBouncer:
    """One pgbouncer process in transaction mode before the server of ``database_url``."""

    def __init__(self, executable: str, database_url: str, *, pool_size: int) -> None:
        self.port = _free_port()
        self.directory = directory = Path(tempfile.mkdtemp(prefix="workqueue-pgbouncer-"))
        self.pool_size = pool_size
        host, port = _server_of(database_url)
        (directory / "users.txt").write_text('"postgres" ""\n')
        (directory / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={host} port={port}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = trust\n"
            f"auth_file = {directory / 'users.txt'}\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {pool_size}\n"
            "min_pool_size = 0\n"
            "reserve_pool_size = 0\n"
            "max_client_conn = 2000\n"
            "max_db_connections = 0\n"
            "server_reset_query =\n"
            "ignore_startup_parameters = extra_float_digits\n"
            f"logfile = {directory / 'pgbouncer.log'}\n"
        )
        as_root = ["-u", "nobody"] if os.geteuid() == 0 else []
        if as_root:
            directory.chmod(0o777)
            for name in ("users.txt", "pgbouncer.ini"):
                (directory / name).chmod(0o644)
        with (directory / "stderr.txt").open("wb") as said:
            self._process = subprocess.Popen(  # noqa: S603 - the pgbouncer found on PATH
                [executable, *as_root, str(directory / "pgbouncer.ini")],
                stdout=said,
                stderr=subprocess.STDOUT,
            )
        self._wait_until_listening()

    def _wait_until_listening(self, within: float = 10.0) -> None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"pgbouncer exited at start:\n{self.log()}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError(f"pgbouncer did not listen within {within} s:\n{self.log()}")

    def log(self) -> str:
        """What pgbouncer wrote: its log file, and anything it said before it could."""
        return "".join(
            path.read_text(errors="replace")
            for path in (self.directory / "stderr.txt", self.directory / "pgbouncer.log")
            if path.exists()
        )

    def url_for(self, database_url: str) -> str:
        """``database_url`` (same user and database) through this pgbouncer."""
        return pgbouncer_url(database_url, self.port)

    def stop(self) -> None:
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGINT)
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


def pgbouncer_url(database_url: str, port: int) -> str:
    """``database_url`` with its server replaced by a pgbouncer on 127.0.0.1:``port``."""
    parts = urlsplit(database_url)
    user = parts.username or "postgres"
    password = f":{parts.password}" if parts.password else ""
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in ("host", "port")]
    return urlunsplit(
        (parts.scheme, f"{user}{password}@127.0.0.1:{port}", parts.path, urlencode(query), "")
    )
