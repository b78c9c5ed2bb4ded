"""The one error of ``workqueue web`` that is its own: the address cannot be listened on.

Kept in a module that imports only the domain, so the CLI's exit statuses can name it
without the ``web`` extra installed.
"""

from __future__ import annotations

from workqueue.domain import WorkQueueError

__all__ = ["ListenError"]


class ListenError(WorkQueueError, RuntimeError):
    """The view cannot listen on its host and port (taken, or not an address here).

    The message is one line naming the address and the reason.
    """
