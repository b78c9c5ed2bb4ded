"""``workqueue web``: the admin view, its JSON API, ``/metrics`` and ``/healthz``.

Needs the ``web`` extra (``pip install 'workqueue[web]'``): Starlette, Jinja2,
uvicorn and prometheus-client. Read-only: every route reads ``work_items`` through
the :class:`~domain.WorkMonitor` port (docs/adr/0020). The modules:
:mod:`~entrypoints.web.app` (``create_app``), :mod:`~entrypoints.web.container`
(the composition root), :mod:`~entrypoints.web.run` (``serve_web``),
:mod:`~entrypoints.web.settings`. This package itself imports nothing, so the
CLI can name :class:`~entrypoints.web.listen.ListenError` without the extra.
"""

from __future__ import annotations

__all__: list[str] = []
