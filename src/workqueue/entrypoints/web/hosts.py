"""The hosts the view serves: a request whose ``Host`` header names another gets a 400.

A browser sends, in ``Host``, the name the page it runs asked for. A page of
another site whose DNS name is made to point at this machine (DNS rebinding)
reaches the view under that site's name: it would be same-origin with the view
and could read it, or post a cancel with a token it read. Refusing any name the
view does not serve ends that, on every route (``/metrics`` and ``/healthz``
too: one rule, and they are not public either). The view serves the host it is
bound to, this machine's own names (:data:`LOCAL_HOSTS`) and the names
``WORKQUEUE_WEB_ALLOWED_HOSTS`` adds (a proxy's public name); ``*`` serves any.
Names are compared without port, case or final dot, an IPv6 address without its
brackets (docs/adr/0033).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "ANY_HOST",
    "LOCAL_HOSTS",
    "REFUSED",
    "AllowedHosts",
    "host_key",
    "host_name",
    "served_hosts",
]

logger = logging.getLogger("workqueue.web")

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
"""This machine's own names, served whatever the view is bound to."""

ANY_HOST = "*"
"""In the served hosts: every host is served (behind a proxy that checks ``Host`` itself)."""

REFUSED = (
    "Refused: the Host header names no host this view serves (see WORKQUEUE_WEB_ALLOWED_HOSTS).\n"
)
"""The body of the 400 a request for another host gets."""
# How much of a refused Host header the log line quotes.
_LOGGED_HOST = 100


def host_key(name: str) -> str:
    """``name`` as the served hosts hold it: lower-case, no final dot, no IPv6 brackets."""
    key = name.lower().removesuffix(".")
    if key.startswith("[") and key.endswith("]"):
        return key[1:-1]
    return key


def host_name(header: str) -> str:
    """The host a ``Host`` header names, as :func:`host_key` writes it; "" if malformed."""
    if header.startswith("["):
        address, closed, port = header[1:].partition("]")
        # "[address]" or "[address]:port", nothing else.
        well_formed = closed and (not port or port.startswith(":"))
        return host_key(address) if well_formed else ""
    return host_key(header.partition(":")[0])


def served_hosts(bound: str, more: Iterable[str]) -> frozenset[str]:
    """The hosts a view bound to ``bound`` serves: that one, :data:`LOCAL_HOSTS` and ``more``."""
    return frozenset(host_key(name) for name in (bound, *LOCAL_HOSTS, *more))


class AllowedHosts:
    """ASGI middleware answering 400 to a request for a host not in ``hosts`` (see module)."""

    def __init__(self, app: ASGIApp, hosts: Collection[str]) -> None:
        self._app = app
        self._hosts = frozenset(host_key(name) for name in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # no request, no host
            await self._app(scope, receive, send)
            return
        header = _host_header(scope)
        if ANY_HOST in self._hosts or host_name(header) in self._hosts:
            await self._app(scope, receive, send)
            return
        logger.warning(
            "refused a request for host %r: not a host this view serves "
            "(WORKQUEUE_WEB_ALLOWED_HOSTS)",
            header[:_LOGGED_HOST],
        )
        # A plain response reads nothing of the request (receive is handed on unused).
        await PlainTextResponse(REFUSED, status_code=400)(scope, receive, send)  # pragma: no mutate


def _host_header(scope: Scope) -> str:
    """The request's ``Host`` header, "" when it has none (ASGI lower-cases header names)."""
    for name, value in scope["headers"]:
        if name == b"host":
            # Bytes that are not UTF-8 are replaced: such a header names no host.
            text: str = value.decode(errors="replace")
            return text
    return ""
