"""Where the tests' PostgreSQL server comes from, and what happens when there is none.

:func:`postgres_for_tests` finds a server once per session, in this order:

1. ``WORKQUEUE_TEST_DATABASE_URL``, when set: a URL to a maintenance database
   (``postgresql://postgres@127.0.0.1:5432/postgres``) on a server where the user
   may create databases;
2. a testcontainers PostgreSQL (:data:`CONTAINER_IMAGE`), when testcontainers is
   installed and a Docker engine answers;
3. an embedded PostgreSQL from the ``pgserver`` wheel (the ``embedded`` extra,
   which ``testing`` brings), its data kept in :data:`PGSERVER_DATA_DIR`.

When none of them works, :func:`no_postgres` skips the tests that need one,
saying why each source failed; under ``CI=true`` it fails them instead.
"""

from __future__ import annotations

import gc
import os
import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest

__all__ = [
    "CONTAINER_IMAGE",
    "DATABASE_URL_VARIABLE",
    "PGSERVER_DATA_DIR",
    "FoundServer",
    "no_postgres",
    "postgres_for_tests",
]

DATABASE_URL_VARIABLE = "WORKQUEUE_TEST_DATABASE_URL"
"""The environment variable naming the test server's maintenance database."""

CONTAINER_IMAGE = "postgres:16-alpine"
"""The image of the testcontainers PostgreSQL."""

# pgserver, run as root, adds o+rx to every parent directory of its data
# directory: under /tmp that harms nothing, under a home directory it would.
PGSERVER_DATA_DIR = Path("/tmp/workqueue-test-pgserver")  # noqa: S108 - see above
"""The embedded server's data directory; it persists across runs (and is shared by them)."""


@dataclass(frozen=True, slots=True)
class FoundServer:
    """The session's PostgreSQL: a maintenance database's URL, and where it came from."""

    admin_url: str
    source: str


def no_postgres(reasons: list[str]) -> NoReturn:
    """Skip the test for want of a server, saying why; fail it instead under ``CI=true``.

    :raises pytest.skip.Exception: outside CI.
    :raises pytest.fail.Exception: when the environment variable ``CI`` is ``true``.
    """
    message = "no PostgreSQL for the tests: " + "; ".join(reasons)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@contextmanager
def postgres_for_tests() -> Iterator[FoundServer]:
    """The first server of the three sources that works; a started one is stopped at exit.

    :raises pytest.skip.Exception: when none works (see :func:`no_postgres`).
    :raises pytest.fail.Exception: when none works under ``CI=true``.
    """
    url = os.environ.get(DATABASE_URL_VARIABLE)
    if url:
        yield FoundServer(url, f"${DATABASE_URL_VARIABLE}")
        return
    reasons = [f"${DATABASE_URL_VARIABLE} is not set"]
    serving = _container_server(reasons) or _pgserver_server(reasons)
    if serving is None:
        no_postgres(reasons)
    with serving as server:
        yield server


def _docker_answers(reasons: list[str]) -> bool:
    try:
        import docker  # type: ignore[import-untyped]  # docker-py ships no type hints
    except ImportError:
        reasons.append("docker-py is not installed (for testcontainers)")
        return False
    # docker-py leaves a socket in a reference cycle when no engine answers. Left
    # to the garbage collector, its ResourceWarning would surface in whichever
    # later test the collection happens to run in, and fail it under
    # filterwarnings=error: collect it here, while the warning is ignored.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            return _docker_pings(docker, reasons)
        finally:
            gc.collect()


def _docker_pings(docker: ModuleType, reasons: list[str]) -> bool:
    try:
        client = docker.from_env(timeout=3)
    except Exception as error:
        reasons.append(f"no Docker engine ({type(error).__name__})")
        return False
    try:
        client.ping()
    except Exception as error:
        reasons.append(f"the Docker engine does not answer ({type(error).__name__})")
        return False
    finally:
        client.close()
    return True


def _container_server(reasons: list[str]) -> AbstractContextManager[FoundServer] | None:
    if not _docker_answers(reasons):
        return None
    try:
        with warnings.catch_warnings():
            # testcontainers.postgres warns about its deprecated wait strategy on import.
            warnings.simplefilter("ignore")
            from testcontainers.postgres import PostgresContainer
    except ImportError:
        reasons.append("a Docker engine answers, but testcontainers is not installed")
        return None

    container = PostgresContainer(CONTAINER_IMAGE, driver=None)
    try:
        container.start()
    except Exception as error:
        reasons.append(f"the {CONTAINER_IMAGE} container did not start ({type(error).__name__})")
        return None

    @contextmanager
    def serve() -> Iterator[FoundServer]:
        try:
            yield FoundServer(container.get_connection_url(), f"testcontainers ({CONTAINER_IMAGE})")
        finally:
            container.stop()

    return serve()


def _pgserver_server(reasons: list[str]) -> AbstractContextManager[FoundServer] | None:
    try:
        with warnings.catch_warnings():
            # Without XDG_RUNTIME_DIR, platformdirs (via pgserver) warns on import.
            warnings.simplefilter("ignore")
            from pgserver.postgres_server import get_server
    except ImportError:
        reasons.append('pgserver is not installed (pip install "workqueue-pg[embedded]")')
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = get_server(PGSERVER_DATA_DIR, cleanup_mode="stop")
    except Exception as error:
        reasons.append(f"pgserver failed in {PGSERVER_DATA_DIR} ({type(error).__name__}: {error})")
        return None

    @contextmanager
    def serve() -> Iterator[FoundServer]:
        try:
            yield FoundServer(server.get_uri(), f"pgserver in {PGSERVER_DATA_DIR}")
        finally:
            # Stops the server unless another process still uses it.
            server.cleanup()

    return serve()
