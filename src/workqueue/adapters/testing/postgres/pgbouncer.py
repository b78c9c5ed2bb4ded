"""A real PgBouncer in transaction mode before the test PostgreSQL, for one test.

Debian's ``pgbouncer`` (``apt-get install pgbouncer``; ``.ci/run`` installs it)
is started on a free port with a small configuration in a directory of its own
(under /tmp, open to the user it runs as): ``pool_mode = transaction``,
``auth_type = trust``, every database forwarded to the test server, at most
``pool_size`` server connections per database and user.

PgBouncer refuses to run as root. As root it runs as :func:`pgbouncer_user`:
before a server on a unix socket, the owner of the socket directory (the
embedded pgserver's server user, whose data directory, where its socket is,
admits nobody else), before one over TCP, ``nobody``.
:func:`pgbouncer_unavailable` says in one line why a PgBouncer cannot run here,
and :func:`pgbouncer_url` rewrites a test database's URL to go through one.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "PgBouncer",
    "find_pgbouncer",
    "pgbouncer_unavailable",
    "pgbouncer_url",
    "pgbouncer_user",
    "reaches_over_tcp",
]


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


def pgbouncer_user(database_url: str) -> str | None:
    """The user pgbouncer runs as before the URL's server: None (this process's) unless root.

    As root: the owner of the server's socket directory, who can reach the socket,
    unless that is root; else (and before a server over TCP) ``nobody``.

    :raises OSError: if the URL names a socket directory that cannot be read.
    """
    if os.geteuid() != 0:
        return None
    if not reaches_over_tcp(database_url):
        owner = Path(_server_of(database_url)[0]).stat().st_uid
        if owner != 0:
            return pwd.getpwuid(owner).pw_name
    return "nobody"


def _may_enter(user: str, directory: Path) -> bool:
    """Whether ``user`` may go through ``directory`` and each of its parents."""
    entry = pwd.getpwnam(user)
    groups = set(os.getgrouplist(user, entry.pw_gid))

    def enters(path: Path) -> bool:
        status = path.stat()
        if status.st_uid == entry.pw_uid:
            return bool(status.st_mode & stat.S_IXUSR)
        if status.st_gid in groups:
            return bool(status.st_mode & stat.S_IXGRP)
        return bool(status.st_mode & stat.S_IXOTH)

    return all(enters(path) for path in (directory, *directory.parents))


def pgbouncer_unavailable(database_url: str) -> str | None:
    """Why no PgBouncer can run here before the URL's server, in one line; None when one can."""
    if find_pgbouncer() is None:
        return "pgbouncer is not installed (apt-get install pgbouncer)"
    if reaches_over_tcp(database_url):
        return None
    directory = Path(_server_of(database_url)[0])
    if not directory.is_dir():
        return f"the test server's socket directory {directory} is not there"
    user = pgbouncer_user(database_url)
    if user is not None and not _may_enter(user, directory):
        return (
            f"pgbouncer, which refuses to run as root, runs as {user}, who cannot reach"
            f" the test server's socket directory {directory}"
        )
    return None


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
        user = pgbouncer_user(database_url)
        as_root = [] if user is None else ["-u", user]
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
