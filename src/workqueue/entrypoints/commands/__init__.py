"""The short-lived CLI commands: ``migrate``, ``status``, ``show``, ``schedules``,
``enqueue``, ``cancel``, ``requeue`` (an item, or a kind's items), ``pause``, ``resume``, ``cap``.

Each takes a container (so tests can hand it one wired to in-memory adapters)
and a stream for its output, and raises on failure; :mod:`workqueue.entrypoints.cli` turns
the error into one line and an exit status.
"""

from __future__ import annotations

from workqueue.entrypoints.commands.bulk import (
    BULK_FLAGS,
    bulk_arguments_problem,
    cancel_queued_of_kind,
    requeue_failed_of_kind,
)
from workqueue.entrypoints.commands.cancel import cancel_item, requeue_item
from workqueue.entrypoints.commands.cap import cap_text, cap_work
from workqueue.entrypoints.commands.enqueue import (
    delay_text,
    enqueue_work,
    payload_file_text,
    run_at_text,
)
from workqueue.entrypoints.commands.migrate import migrate_database
from workqueue.entrypoints.commands.pause import pause_work, resume_work
from workqueue.entrypoints.commands.schedules import list_schedules
from workqueue.entrypoints.commands.show import show_item
from workqueue.entrypoints.commands.status import show_status

__all__ = [
    "BULK_FLAGS",
    "bulk_arguments_problem",
    "cancel_item",
    "cancel_queued_of_kind",
    "cap_text",
    "cap_work",
    "delay_text",
    "enqueue_work",
    "list_schedules",
    "migrate_database",
    "pause_work",
    "payload_file_text",
    "requeue_failed_of_kind",
    "requeue_item",
    "resume_work",
    "run_at_text",
    "show_item",
    "show_status",
]
