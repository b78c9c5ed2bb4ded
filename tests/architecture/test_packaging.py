"""What `pip install workqueue` brings is what producing needs; the embedded server, uvloop and
the kit's test tools are extras, and nothing outside them imports them on the way."""

from __future__ import annotations

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
    }


def test_the_embedded_server_uvloop_and_the_test_tools_are_extras() -> None:
    extras = PROJECT["optional-dependencies"]

    assert names(extras["embedded"]) == {"pgserver"}
    assert names(extras["uvloop"]) == {"uvloop"}
    assert {"pytest", "pytest-asyncio", "hypothesis"} <= names(extras["testing"])
    # What scripts/test and .ci/run install (scripts/bootstrap: ".[dev]") has every extra.
    assert names(extras["dev"]) >= {"workqueue"}
    dev = next(r for r in extras["dev"] if r.startswith("workqueue["))
    assert set(dev.removeprefix("workqueue[").removesuffix("]").split(",")) == (
        set(extras) - {"dev"}
    )


def test_producing_and_the_cli_import_neither_pgserver_nor_uvloop() -> None:
    code = """
import sys
sys.modules["pgserver"] = sys.modules["uvloop"] = None  # importing either raises ImportError
import adapters.postgres, domain
from entrypoints.cli import main
from entrypoints.worker.container import build_container
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


def test_without_pgserver_an_unset_database_url_says_what_to_install() -> None:
    code = """
import sys
sys.modules["pgserver"] = None
from entrypoints.cli import main
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
        "installed: set WORKQUEUE_DATABASE_URL, or pip install 'workqueue[embedded]'",
    )
