"""``workqueue web``: the admin view, its JSON API, ``/metrics`` and ``/healthz``.

Needs the ``web`` extra (``pip install 'workqueue[web]'``): Starlette, Jinja2,
uvicorn and prometheus-client. Read-only: every route reads ``work_items`` through
the :class:`~domain.WorkMonitor` port (docs/adr/0020).
"""

from __future__ import annotations

from entrypoints.web.app import create_app
from entrypoints.web.reads import WebServices
from entrypoints.web.settings import WebSettings, load_web_settings

__all__ = ["WebServices", "WebSettings", "create_app", "load_web_settings"]
