"""Fixtures of the entrypoint tests: a clean environment and an in-memory world."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from worker_world import WorkerWorld

from entrypoints.worker.settings import WorkerSettings, env_name


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


@pytest.fixture
def world() -> WorkerWorld:
    return WorkerWorld()
