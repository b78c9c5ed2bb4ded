"""Fixtures of the entrypoint tests: a clean environment and an in-memory world.

The root logger the CLI configures is put back for every test, in tests/conftest.py.
"""

from __future__ import annotations

import os

import pytest
from worker_world import WorkerWorld

from workqueue.entrypoints.worker.settings import WorkerSettings, env_name


@pytest.fixture(autouse=True)
def _no_worker_settings_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the documented defaults unless it sets a variable itself."""
    for name in WorkerSettings.model_fields:
        monkeypatch.delenv(env_name(name), raising=False)


class ProcessExitRefused(Exception):
    """Raised instead of ending the test process when code under test calls os._exit."""

    def __init__(self, status: int) -> None:
        super().__init__(f"os._exit({status}) called")
        self.status = status


@pytest.fixture(autouse=True)
def _no_process_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A forced exit (a second stop signal) must fail a test, not end the test run."""

    def refuse(status: int) -> None:
        raise ProcessExitRefused(status)

    monkeypatch.setattr(os, "_exit", refuse)


@pytest.fixture
def world() -> WorkerWorld:
    return WorkerWorld()
