"""Fixtures of the per-item path tests: the application tests' in-memory bench."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The bench lives beside the application-service tests; these tests use it as they do.
sys.path.insert(0, str(Path(__file__).parent.parent / "application"))

from service_bench import Bench


@pytest.fixture
def bench() -> Bench:
    return Bench()
