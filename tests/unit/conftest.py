"""Fixtures shared by the database-free tests."""

from __future__ import annotations

import pytest

from recorded_spans import RecordedSpans


@pytest.fixture
def spans() -> RecordedSpans:
    """A tracer provider of the test's own, keeping the spans it ends in memory."""
    return RecordedSpans()
