"""Where the tests' PostgreSQL server is named, and what happens when there is none."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

__all__ = ["DATABASE_URL_VARIABLE", "no_postgres"]

DATABASE_URL_VARIABLE = "WORKQUEUE_TEST_DATABASE_URL"
"""The environment variable naming the test server's maintenance database."""


def no_postgres(reasons: list[str]) -> NoReturn:
    """Skip the test for want of a server, saying why; fail it instead under ``CI=true``.

    :raises pytest.skip.Exception: outside CI.
    :raises pytest.fail.Exception: when the environment variable ``CI`` is ``true``.
    """
    message = "no PostgreSQL for the tests: " + "; ".join(reasons)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
