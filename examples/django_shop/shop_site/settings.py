"""Settings of the example shop: one app, PostgreSQL through psycopg 3, tasks on workqueue.

The database is ``SHOP_DATABASE_URL`` (a ``postgresql://`` URL), the same database
the queue's tables live in: the point is that an order and the task it enqueues
commit together. ``TASKS`` runs Django's tasks on workqueue: the ``mail`` queue
(the confirmations) is tried up to three times.

Mail goes through the backend ``SHOP_EMAIL_BACKEND`` names (a dotted path, Django's
``EMAIL_BACKEND``), by default Django's in-memory outbox; Django's file backend
(``django.core.mail.backends.filebased.EmailBackend``) writes the messages to files
in the directory ``SHOP_EMAIL_FILE_PATH``.
"""

from __future__ import annotations

import os
from datetime import timedelta
from urllib.parse import parse_qsl, unquote, urlsplit

from workqueue import Backoff, KindPolicy


def _database(url: str) -> dict[str, str]:
    """Django's DATABASES entry for a ``postgresql://`` URL (a socket ``?host=`` too)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    return {
        # With psycopg 3 installed, Django's PostgreSQL backend runs on it.
        "ENGINE": "django.db.backends.postgresql",
        "NAME": parts.path.lstrip("/"),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or query.get("host", ""),
        "PORT": str(parts.port or ""),
    }


SECRET_KEY = "the example shop's key, not a secret"  # noqa: S105
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
# django_tasks: the Tasks framework's backport (Django 5.2); on Django 6 it is built in.
INSTALLED_APPS = ["django_tasks", "orders"]
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "shop_site.urls"
DATABASES = {"default": _database(os.environ.get("SHOP_DATABASE_URL", "postgresql:///shop"))}
TASKS = {
    "default": {
        "BACKEND": "workqueue.django.WorkQueueBackend",
        "QUEUES": ["default", "mail"],
        "OPTIONS": {
            "POLICIES": {
                "mail": KindPolicy(max_attempts=3, backoff=Backoff(initial=timedelta(seconds=5)))
            }
        },
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
EMAIL_BACKEND = os.environ.get(
    "SHOP_EMAIL_BACKEND", "django.core.mail.backends.locmem.EmailBackend"
)
if "SHOP_EMAIL_FILE_PATH" in os.environ:
    EMAIL_FILE_PATH = os.environ["SHOP_EMAIL_FILE_PATH"]
DEFAULT_FROM_EMAIL = "shop@example.com"
