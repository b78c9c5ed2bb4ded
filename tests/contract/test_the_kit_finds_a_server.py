"""The kit's plugin finds the tests' PostgreSQL by itself, for us and for a third party.

``WORKQUEUE_TEST_DATABASE_URL`` first, then testcontainers, then the embedded
pgserver; none at all is a skip that says why, and a failure under ``CI=true``.
The last tests run the plugin as a third party would, in a pytest process of its
own in a directory with only a conftest loading it, without the variable.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from workqueue.adapters.testing.postgres import (
    DATABASE_URL_VARIABLE,
    FoundServer,
    postgres_for_tests,
)
from workqueue.adapters.testing.postgres.pgbouncer import find_pgbouncer
from workqueue.adapters.testing.postgres.server import PGSERVER_DATA_DIR


@pytest.fixture
def nothing_to_fall_back_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither docker-py nor pgserver can be imported, and the variable is unset."""
    monkeypatch.delenv(DATABASE_URL_VARIABLE, raising=False)
    monkeypatch.setitem(sys.modules, "docker", None)
    monkeypatch.setitem(sys.modules, "pgserver.postgres_server", None)


def test_the_server_named_by_the_variable_is_used_and_nothing_else_is_tried(
    monkeypatch: pytest.MonkeyPatch, nothing_to_fall_back_on: None
) -> None:
    url = "postgresql://someone@db.example:5433/postgres"
    monkeypatch.setenv(DATABASE_URL_VARIABLE, url)
    with postgres_for_tests() as server:
        assert server == FoundServer(url, f"${DATABASE_URL_VARIABLE}")


def test_without_any_server_the_tests_are_skipped_saying_why_each_source_failed(
    monkeypatch: pytest.MonkeyPatch, nothing_to_fall_back_on: None
) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as skipped, postgres_for_tests():
        pass
    assert str(skipped.value) == (
        f"no PostgreSQL for the tests: ${DATABASE_URL_VARIABLE} is not set;"
        " docker-py is not installed (for testcontainers);"
        ' pgserver is not installed (pip install "workqueue-pg[embedded]")'
    )


def test_without_any_server_under_ci_the_tests_fail_in_one_line(
    monkeypatch: pytest.MonkeyPatch, nothing_to_fall_back_on: None
) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as failed, postgres_for_tests():
        pass
    assert str(failed.value).startswith("no PostgreSQL for the tests: ")
    assert "\n" not in str(failed.value)
    assert not failed.value.pytrace


A_THIRD_PARTYS_TESTS = """
import asyncpg
import pytest

from workqueue.adapters.testing.postgres.pgbouncer import PgBouncer, find_pgbouncer


async def test_a_fresh_migrated_database(migrated_pool):
    assert await migrated_pool.fetchval("SELECT count(*) FROM work_items") == 0


async def test_a_fresh_migrated_database_through_pgbouncer(postgres_admin_url, database_url):
    executable = find_pgbouncer()
    if executable is None:
        pytest.skip("pgbouncer is not installed")
    bouncer = PgBouncer(executable, postgres_admin_url, pool_size=2)
    try:
        connection = await asyncpg.connect(bouncer.url_for(database_url), statement_cache_size=0)
        try:
            assert await connection.fetchval("SELECT count(*) FROM work_items") == 0
        finally:
            await connection.close()
    finally:
        bouncer.stop()
"""


@pytest.fixture(scope="module")
def run_without_the_variable(
    tmp_path_factory: pytest.TempPathFactory,
) -> subprocess.CompletedProcess[str]:
    """A third party's run under ``CI=true``, no variable set, no Docker engine to answer."""
    directory = tmp_path_factory.mktemp("third_party_server")
    (directory / "conftest.py").write_text(
        'pytest_plugins = ["workqueue.adapters.testing.postgres.plugin"]\n'
    )
    (directory / "test_on_postgres.py").write_text(A_THIRD_PARTYS_TESTS)
    env = {name: value for name, value in os.environ.items() if name != DATABASE_URL_VARIABLE}
    env.update(
        CI="true",
        DOCKER_HOST=f"unix://{directory}/no-docker.sock",
        HYPOTHESIS_STORAGE_DIRECTORY=str(directory / "hypothesis"),
    )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rA",
            "-W",
            "error",
            "-o",
            "asyncio_mode=auto",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "-o",
            "asyncio_default_test_loop_scope=function",
        ],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.postgres
def test_a_third_partys_run_without_the_variable_falls_back_to_the_embedded_server(
    run_without_the_variable: subprocess.CompletedProcess[str],
) -> None:
    output = run_without_the_variable.stdout + run_without_the_variable.stderr
    assert "PASSED test_on_postgres.py::test_a_fresh_migrated_database\n" in output, output
    assert f"PostgreSQL for tests: pgserver in {PGSERVER_DATA_DIR}: " in output, output


@pytest.mark.postgres
def test_pgbouncer_reaches_the_embedded_server(
    run_without_the_variable: subprocess.CompletedProcess[str],
) -> None:
    if find_pgbouncer() is None:
        message = "pgbouncer is not installed (apt-get install pgbouncer)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    output = run_without_the_variable.stdout + run_without_the_variable.stderr
    assert run_without_the_variable.returncode == 0, output
    assert (
        "PASSED test_on_postgres.py::test_a_fresh_migrated_database_through_pgbouncer\n" in output
    ), output
