"""Fixtures of the end-to-end tests: worker processes that never outlive their test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_support import Spawner


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Spawner]:
    """Starts ``workqueue`` processes; kills whichever is still running after the test."""
    spawner = Spawner(tmp_path, [])
    try:
        yield spawner
    finally:
        spawner.close_all()
