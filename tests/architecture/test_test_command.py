"""`scripts/test` fails as soon as one of its checks fails, lint included.

The script runs on a copy of scripts/ with a stand-in virtualenv whose tools
only record that they ran and exit as told, so the test takes milliseconds and
says which check stopped the run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("python", "ruff", "mypy", "lint-imports")


def stand_in_checkout(tmp_path: Path, failing: str) -> tuple[Path, Path]:
    """A checkout with the real scripts and a virtualenv whose ``failing`` command fails."""
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    ran = tmp_path / "ran"
    for tool in TOOLS:
        script = venv / "bin" / tool
        script.write_text(
            "#!/usr/bin/env bash\n"
            f'echo "{tool} $*" >> "{ran}"\n'
            f'if [ "{tool} $1" = "{failing}" ]; then echo "{failing}: failed" >&2; exit 1; fi\n'
        )
        script.chmod(0o755)
    # Newer than pyproject.toml: scripts/bootstrap installs nothing.
    (venv / ".workqueue-installed").touch()
    return venv, ran


@pytest.mark.parametrize(
    ("failing", "last_run"),
    [
        ("ruff check", "ruff check ."),
        ("ruff format", "ruff format --check ."),
        ("mypy ", "mypy"),
    ],
)
def test_the_test_command_stops_at_the_first_failing_check(
    tmp_path: Path, failing: str, last_run: str
) -> None:
    venv, ran = stand_in_checkout(tmp_path, failing)

    result = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "test")],
        env={**os.environ, "WORKQUEUE_VENV": str(venv)},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{failing}: failed" in result.stderr
    assert ran.read_text().splitlines()[-1].strip() == last_run


def test_the_test_command_runs_every_check_then_pytest_when_all_pass(tmp_path: Path) -> None:
    venv, ran = stand_in_checkout(tmp_path, failing="nothing")

    result = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "test"), "-k", "x"],
        env={**os.environ, "WORKQUEUE_VENV": str(venv)},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert [line.strip() for line in ran.read_text().splitlines()] == [
        "ruff check .",
        "ruff format --check .",
        "mypy",
        "lint-imports --no-cache",
        "python -m pytest -k x",
    ]
