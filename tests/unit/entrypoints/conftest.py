"""Fixtures of the entrypoint tests: a clean environment and an in-memory world."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest
from worker_world import WorkerWorld

from workqueue.entrypoints.worker.settings import WorkerSettings, env_name


@pytest.fixture(autouse=True)
def _no_worker_settings_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the documented defaults unless it sets a variable itself."""
    for name in WorkerSettings.model_fields:
        monkeypatch.delenv(env_name(name), raising=False)


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """The CLI configures the root logger; put it back so tests do not leak handlers."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


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
