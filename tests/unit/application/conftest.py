"""Fixtures of the application-service tests; the bench itself is in ``service_bench``."""

from __future__ import annotations

import pytest
from service_bench import Bench


@pytest.fixture
def bench() -> Bench:
    return Bench()
