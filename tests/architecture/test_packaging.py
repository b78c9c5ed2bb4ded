"""What `pip install workqueue-pg` brings is what producing and the `workqueue` command need; the
embedded server, uvloop, the sync producer, the admin view and the kit's test tools are extras,
nothing outside them imports them on the way, and a producer imports not even the command's part."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def names(requirements: list[str]) -> set[str]:
    return {
        requirement.split("[")[0].split(">")[0].split("<")[0].split("=")[0].strip()
        for requirement in requirements
    }


def test_the_dependencies_are_what_producing_and_the_cli_need() -> None:
    assert names(PROJECT["dependencies"]) == {
        "pydantic",
        "pydantic-settings",
        "asyncpg",
        "dependency-injector",
        # A schedule's calendar (docs/adr/0032), and the time zones it is read in.
        "cronsim",
        "tzdata",
    }


def test_the_embedded_server_uvloop_and_the_test_tools_are_extras() -> None:
    extras = PROJECT["optional-dependencies"]

    assert names(extras["embedded"]) == {"pgserver"}
    assert names(extras["uvloop"]) == {"uvloop"}
    assert {"pytest", "pytest-asyncio", "hypothesis"} <= names(extras["testing"])
    # What scripts/test and .ci/run install (scripts/bootstrap: ".[dev]") has every extra.
    assert names(extras["dev"]) >= {"workqueue-pg"}
    dev = next(r for r in extras["dev"] if r.startswith("workqueue-pg["))
    assert set(dev.removeprefix("workqueue-pg[").removesuffix("]").split(",")) == (
        set(extras) - {"dev"}
    )


def test_producing_and_the_cli_import_neither_pgserver_nor_uvloop() -> None:
    code = """
import sys
sys.modules["pgserver"] = sys.modules["uvloop"] = None  # importing either raises ImportError
import workqueue.adapters.postgres, workqueue.domain
from workqueue.entrypoints.cli import main
from workqueue.entrypoints.worker.container import build_container
sys.exit(main(["enqueue", "no_such_kind"]))
"""
    run = subprocess.run(
        [sys.executable, "-c", code],
        env={
            "PATH": "/usr/bin:/bin",
            "WORKQUEUE_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/x",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("workqueue: unknown kind 'no_such_kind'")


def test_the_console_script_hears_stop_signals_before_it_imports_the_command_line() -> None:
    assert PROJECT["scripts"] == {"workqueue": "workqueue.entrypoints.console:main"}
    code = """
import signal, sys
from workqueue.entrypoints.console import note_stop_signals
note_stop_signals()
heavy = [name for name in sys.modules if name.split(".")[0] in {"asyncpg", "pydantic"}]
print(signal.getsignal(signal.SIGTERM).__name__, "workqueue.entrypoints.cli" in sys.modules, heavy)
"""
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )

    assert run.stdout == "_note False []\n", run.stderr


def test_without_pgserver_an_unset_database_url_says_what_to_install() -> None:
    code = """
import sys
sys.modules["pgserver"] = None
from workqueue.entrypoints.cli import main
sys.exit(main(["migrate"]))
"""
    run = subprocess.run(
        [sys.executable, "-c", code],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert (run.returncode, run.stderr.splitlines()[-1]) == (
        1,
        "workqueue: WORKQUEUE_DATABASE_URL is unset and the embedded PostgreSQL is not "
        "installed: set WORKQUEUE_DATABASE_URL, or pip install 'workqueue-pg[embedded]'",
    )


def test_a_producer_imports_neither_the_commands_settings_nor_its_container() -> None:
    code = """
import sys
from workqueue import (
    EnqueueRequest, PostgresWorkQueue, SystemClock, WorkPayload, WorkQueueError, create_pool,
)
loaded = sorted(
    name for name in ("dependency_injector", "pydantic_settings", "psycopg", "pgserver", "uvloop")
    if name in sys.modules
)
print(",".join(loaded))
"""
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )

    assert (run.returncode, run.stdout.strip()) == (0, ""), run.stderr


def test_workqueue_web_without_the_web_extra_says_what_to_install() -> None:
    code = """
import sys
sys.modules["uvicorn"] = None  # as if the web extra were missing
from workqueue.entrypoints.cli import main
sys.exit(main(["web"]))
"""
    run = subprocess.run(
        [sys.executable, "-c", code],
        env={
            "PATH": "/usr/bin:/bin",
            "WORKQUEUE_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/x",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert (run.returncode, run.stderr) == (
        1,
        "workqueue: workqueue web needs the 'web' extra (uvicorn is not installed): "
        "pip install 'workqueue-pg[web]'\n",
    )


def test_tracing_is_an_extra_of_the_api_alone_and_the_tests_read_spans_with_the_sdk() -> None:
    extras = PROJECT["optional-dependencies"]

    assert names(extras["otel"]) == {"opentelemetry-api"}
    assert "opentelemetry-sdk" in names(extras["dev"])


def test_without_the_otel_extra_producing_and_working_record_nothing() -> None:
    code = """
import asyncio, sys
sys.modules["opentelemetry"] = None  # as if the otel extra were missing
from workqueue.adapters.memory import InMemoryState, InMemoryWorkQueue
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob
from workqueue.adapters.tracing import default_tracing
from workqueue.domain import NO_TRACING
state = InMemoryState()
result = asyncio.run(InMemoryWorkQueue(state, FakeClock()).enqueue(AlphaJob()))
assert default_tracing() is NO_TRACING
assert state.items[result.id].trace_context is None
"""
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert (run.returncode, run.stderr) == (0, "")


def test_the_command_prints_the_version_of_the_package() -> None:
    import workqueue

    run = subprocess.run(
        [sys.executable, "-m", "workqueue", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert (run.returncode, run.stdout) == (0, f"{workqueue.__version__}\n")


def test_every_install_line_of_the_docs_installs_this_project() -> None:
    docs = [ROOT / "README.md", *ROOT.glob("examples/**/README.md"), *ROOT.glob("docs/**/*.md")]
    lines = [
        (path.relative_to(ROOT), line)
        for path in docs
        for line in path.read_text().splitlines()
        if "pip install" in line
    ]
    assert lines
    wrong = [
        (path, line)
        for path, line in lines
        if re.search(r"""pip install ['"]?workqueue(\[|['"\s]|$)""", line)
    ]
    assert wrong == []
