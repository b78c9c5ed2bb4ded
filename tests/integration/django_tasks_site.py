"""Django, set up once in the test process, for the tests of the Tasks backend.

Django reads its settings once per process: the tests that run it in the test
process (the Tasks backend's and the example shop's) use the shop's project, on a
database of their own (``set_django_up``), with the Tasks tests' own ``TASKS``
(``django_tasks_app.settings``) put in place by ``override_settings`` for each test.
Run after tests/unit/django in one process, the shop's tests find Django set up
without the shop's app: run tests/examples before tests/unit (the default order).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

import django
import pytest
from asgiref.local import Local
from django.conf import settings
from django.core.management import call_command
from django.db import connections
from django.test.utils import override_settings

HERE = Path(__file__).resolve().parent
SHOP = HERE.parents[1] / "examples" / "django_shop"
for folder in (HERE, SHOP):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


_DATABASE: list[str] = []


def set_django_up(make_database: Callable[[str], str]) -> str:
    """Set Django up, on a migrated database of the tests' own; that database's name.

    Whoever configured Django first in this process (the shop's settings here, a
    bare configuration by tests/unit/django), its ``default`` database is pointed
    at the tests' database, once, before anything is migrated into it.
    """
    if not settings.configured:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop_site.settings")
    django.setup()
    if not _DATABASE:
        _DATABASE.append(make_database("django_tasks"))
        _point_django_at(_DATABASE[0])
        call_command("migrate", verbosity=0)
    name: str = settings.DATABASES["default"]["NAME"]
    return name


def _point_django_at(url: str) -> None:
    parts = urlsplit(url)
    connections.close_all()
    settings.DATABASES["default"] = {
        **settings.DATABASES.get("default", {}),
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/"),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or dict(parse_qsl(parts.query)).get("host", ""),
        "PORT": str(parts.port or ""),
    }
    # What Django's connection handler read of DATABASES is read again.
    connections.__dict__.pop("settings", None)
    connections._settings = None
    connections._connections = Local(connections.thread_critical)


@pytest.fixture
def tasks_project(migrated_database_factory: Callable[[str], str]) -> Iterator[None]:
    """Django with the test project's TASKS, and no work item in its database."""
    import django_tasks.signals  # noqa: F401  (resets the backends when TASKS changes)
    from django_tasks_app.settings import TASKS

    set_django_up(migrated_database_factory)
    with override_settings(TASKS=TASKS):
        with connections["default"].cursor() as cursor:
            cursor.execute("TRUNCATE work_items RESTART IDENTITY")
        yield
    connections.close_all()
