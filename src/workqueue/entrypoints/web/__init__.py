"""``workqueue web``: the admin view, its JSON API, ``/metrics`` and ``/healthz``.

Needs the ``web`` extra (``pip install 'workqueue-pg[web]'``): Starlette, Jinja2,
uvicorn and prometheus-client. Read-only: every route reads ``work_items`` through
the :class:`~workqueue.domain.WorkMonitor` port (docs/adr/0020). The modules:
:mod:`~workqueue.entrypoints.web.app` (``create_app``), :mod:`~workqueue.entrypoints.web.container`
(the composition root), :mod:`~workqueue.entrypoints.web.run` (``serve_web``),
:mod:`~workqueue.entrypoints.web.settings`. This package itself imports nothing, so the
CLI can name :class:`~workqueue.entrypoints.web.listen.ListenError` without the extra.
"""

from __future__ import annotations

__all__: list[str] = []
