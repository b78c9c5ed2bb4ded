"""Settings of the tasks test project: its database is ``WORKQUEUE_DATABASE_URL``.

``TASKS`` is what the tests in the test process put in place (``override_settings``)
and what the worker processes they start read here.
"""

from __future__ import annotations

import os
from datetime import timedelta
from urllib.parse import urlsplit

from workqueue import Backoff, KindPolicy

TASKS = {
    "default": {
        "BACKEND": "workqueue.django.WorkQueueBackend",
        "QUEUES": ["default", "flaky", "slow"],
        "OPTIONS": {
            "POLICIES": {
                "flaky": KindPolicy(
                    max_attempts=3,
                    backoff=Backoff(
                        initial=timedelta(milliseconds=100), cap=timedelta(milliseconds=100)
                    ),
                )
            }
        },
    }
}

_url = urlsplit(os.environ.get("WORKQUEUE_DATABASE_URL", "postgresql:///workqueue"))
SECRET_KEY = "the tasks test project's key, not a secret"
INSTALLED_APPS = ["django_tasks"]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": _url.path.lstrip("/"),
        "USER": _url.username or "",
        "PASSWORD": _url.password or "",
        "HOST": _url.hostname or "",
        "PORT": str(_url.port or ""),
    }
}
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
