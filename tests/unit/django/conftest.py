"""Django for the database-free tests of the Tasks backend.

Django reads its settings once per process: these tests configure a minimal set
when nothing has (a run of tests/unit alone, as mutation testing runs it), and
put their own ``TASKS`` in place for each test either way. Run before the example
shop's tests in one process, they leave Django without the shop's app: the
default order (tests/examples before tests/unit) runs the shop first.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

import django
import django_tasks.signals  # noqa: F401  (resets the backends when TASKS changes)
import pytest
from django.conf import settings
from django.test.utils import override_settings
from django_unit_backend import UNIT_TASKS, MemoryBackend


@pytest.fixture(autouse=True)
def unit_tasks() -> Iterator[None]:
    """The unit tests' TASKS, and a memory backend with no item.

    Django is configured here, when the first of these tests runs (not when this
    file is collected), and only if nothing in the process has configured it.
    """
    if not settings.configured:
        settings.configure(
            USE_TZ=True, INSTALLED_APPS=["django_tasks"], DATABASES={}, TASKS=UNIT_TASKS
        )
    django.setup()
    MemoryBackend.items.clear()
    with override_settings(TASKS=UNIT_TASKS):
        yield


@pytest.fixture
def tasks(unit_tasks: None) -> ModuleType:
    """The unit tests' tasks, imported once their backends are in place."""
    return importlib.import_module("django_unit_tasks")
