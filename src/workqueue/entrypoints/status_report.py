"""What ``workqueue status`` shows: counts, live items, recent failures. Read-only.

Everything comes from the read-only WorkMonitor, through the same reads as the
web view, but the caps (docs/adr/0035), which the store reads
(``WorkStore.caps``); nothing is written, so status is safe to run beside live
workers.
Every running item is listed, however long the backlog; the queued and failed
lists are bounded, so a queue with a million items still answers with a
screenful (the counts say how many there are).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from pydantic import JsonValue

from workqueue.domain import (
    UNSUCCESSFUL_STATUSES,
    CapSource,
    Clock,
    KindCap,
    KindPause,
    WorkItem,
    WorkMonitor,
    WorkStatus,
    WorkStore,
)
from workqueue.entrypoints.timestamps import iso_timestamp

__all__ = [
    "ACTIVE_LIMIT",
    "FAILURE_LIMIT",
    "SET_BY",
    "StatusReport",
    "gather_status",
    "render_json",
    "render_text",
]

ACTIVE_LIMIT = 50
"""The most queued items listed (oldest first: next to be claimed). Running items are all listed."""

FAILURE_LIMIT = 10
"""The most unsuccessful items listed (the latest finished first)."""

SET_BY: Mapping[CapSource, str] = {
    CapSource.POLICY: "its policy",
    CapSource.OPERATOR: "an operator",
}
"""Who set a cap, as a line says it: ``set by an operator``."""

_ERROR_PREVIEW = 200
# Text for a terminal keeps non-ASCII characters as they are; a progress snapshot in
# a line is compact and in a stable key order, the --json document indented.
_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, sort_keys=True)
_DOCUMENT_JSON = json.JSONEncoder(indent=2, ensure_ascii=False)
_STATUS_ORDER = tuple(WorkStatus)


@dataclass(frozen=True, slots=True)
class StatusReport:
    """One look at the queue, taken at :attr:`now` on the store's clock."""

    database: str
    now: datetime
    counts: dict[str, dict[WorkStatus, int]]
    active: list[WorkItem]
    failures: list[WorkItem]
    pauses: list[KindPause]
    caps: list[KindCap]

    # Methods, not properties: mutmut skips decorated functions (docs/adr/0006).
    def active_total(self) -> int:
        """How many items are queued or running, listed or not."""
        return sum(
            by_status.get(WorkStatus.QUEUED, 0) + by_status.get(WorkStatus.RUNNING, 0)
            for by_status in self.counts.values()
        )

    def failed_total(self) -> int:
        """How many unsuccessful (failed or cancelled) items the table holds, listed or not."""
        return sum(
            count
            for by_status in self.counts.values()
            for status, count in by_status.items()
            if status in UNSUCCESSFUL_STATUSES
        )

    def heartbeat_age(self, item: WorkItem) -> float | None:
        """Seconds since a running ``item``'s last heartbeat (or claim); None unless running.

        A queued item may keep the heartbeat of an earlier attempt; its age would
        only suggest a liveness that is not there.
        """
        if item.status is not WorkStatus.RUNNING or item.heartbeat_at is None:
            return None
        return round((self.now - item.heartbeat_at).total_seconds(), 1)


async def gather_status(
    monitor: WorkMonitor,
    clock: Clock,
    *,
    store: WorkStore,
    kinds: Iterable[str],
    database: str,
    active_limit: int = ACTIVE_LIMIT,
    failure_limit: int = FAILURE_LIMIT,
) -> StatusReport:
    """Read the report from ``monitor``, and the caps from ``store``. ``kinds`` are listed
    even when they have no items.

    ``active`` holds every running item, then the oldest ``active_limit`` queued ones.

    :raises StoreUnavailableError: if the store cannot be reached.
    """
    counts: dict[str, dict[WorkStatus, int]] = {kind: {} for kind in kinds}
    for part in (await monitor.count_live(), await monitor.count_finished()):
        for (kind, status), count in part.items():
            counts.setdefault(kind, {})[WorkStatus(status)] = count
    running = await monitor.running()
    queued = await monitor.queued(limit=active_limit)
    failures = await monitor.recent_unsuccessful(limit=failure_limit)
    pauses = await monitor.paused_kinds()
    caps = await store.caps()
    return StatusReport(
        database=database,
        now=clock.now(),
        counts=dict(sorted(counts.items())),
        active=running + queued,
        failures=failures,
        pauses=pauses,
        caps=caps,
    )


def _compact_json(value: JsonValue) -> str:
    return _COMPACT_JSON.encode(value)


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    preview = lines[0] if lines else ""
    return preview if len(preview) <= _ERROR_PREVIEW else preview[: _ERROR_PREVIEW - 3] + "..."


def _timestamp(moment: datetime | None) -> str | None:
    return iso_timestamp(moment, timespec="seconds")


def render_text(report: StatusReport) -> str:
    """The report as aligned text for a terminal."""
    lines = [f"database: {report.database}", ""]
    width = max([len("kind"), *(len(kind) for kind in report.counts)])
    lines.append(f"{'kind':<{width}}  " + "  ".join(f"{s.value:>9}" for s in _STATUS_ORDER))
    for kind, by_status in report.counts.items():
        lines.append(
            f"{kind:<{width}}  " + "  ".join(f"{by_status.get(s, 0):>9}" for s in _STATUS_ORDER)
        )

    lines += ["", f"paused kinds: {len(report.pauses)}"]
    for pause in report.pauses:
        line = f"  {pause.kind} since {_timestamp(pause.paused_at)}"
        if pause.reason is not None:
            line += f": {_first_line(pause.reason)}"
        lines.append(line)

    lines += ["", f"capped kinds: {len(report.caps)}"]
    for cap in report.caps:
        lines.append(
            f"  {cap.kind} at most {cap.max_running} at once, {cap.running} held now,"
            f" set by {SET_BY[cap.source]} at {_timestamp(cap.set_at)}"
        )

    lines += ["", f"queued and running: {report.active_total()}"]
    if report.active_total() > len(report.active):
        queued_shown = sum(item.status is WorkStatus.QUEUED for item in report.active)
        lines[-1] += f" (every running and the oldest {queued_shown} queued shown)"
    for item in report.active:
        line = (
            f"  #{item.id} {item.kind} {item.status.value}"
            f" attempt={item.attempt} stalls={item.stalls}"
        )
        if item.priority:
            line += f" priority={item.priority}"
        if item.failures:
            line += f" failures={len(item.failures)}"
        if item.snoozes:
            line += f" snoozes={item.snoozes}"
        if item.run_at > report.now:  # only a queued item's can be still to come
            line += f" waits until {_timestamp(item.run_at)}"
        if item.status is WorkStatus.RUNNING:
            line += f" worker={item.worker_id} heartbeat={report.heartbeat_age(item)}s ago"
        if item.cancel_reason is not None:  # only a running item's can be set
            line += f" cancel requested: {_first_line(item.cancel_reason)}"
        if item.progress is not None:
            line += f" progress={_compact_json(item.progress)}"
        lines.append(line)

    lines += ["", f"failed or cancelled: {report.failed_total()}"]
    if report.failed_total() > len(report.failures):
        lines[-1] += f" (newest {len(report.failures)} shown)"
    for item in report.failures:
        lines.append(
            f"  #{item.id} {item.kind} {item.status.value}"
            f" attempt={item.attempt} stalls={item.stalls} "
            f"finished={_timestamp(item.finished_at)} error: {_first_line(item.error)}"
        )
    return "\n".join(lines)


def _item_document(report: StatusReport, item: WorkItem) -> dict[str, JsonValue]:
    return {
        "id": item.id,
        "kind": item.kind,
        "status": item.status.value,
        "attempt": item.attempt,
        "stalls": item.stalls,
        "dedup_key": item.dedup_key,
        "worker_id": item.worker_id,
        "enqueued_at": _timestamp(item.enqueued_at),
        "priority": item.priority,
        "run_at": _timestamp(item.run_at),
        "heartbeat_age_seconds": report.heartbeat_age(item),
        "finished_at": _timestamp(item.finished_at),
        "progress": item.progress,
        "error": item.error,
        "cancel_reason": item.cancel_reason,
        "snoozes": item.snoozes,
        "failures": [
            {"attempt": failure.attempt, "at": _timestamp(failure.at), "error": failure.error}
            for failure in item.failures
        ],
        "result": item.result,
    }


def render_json(report: StatusReport) -> str:
    """The report as one JSON document, for scripts."""
    document: dict[str, JsonValue] = {
        "database": report.database,
        "now": _timestamp(report.now),
        "counts": {
            kind: {status.value: by_status.get(status, 0) for status in _STATUS_ORDER}
            for kind, by_status in report.counts.items()
        },
        "paused": [
            {"kind": pause.kind, "paused_at": _timestamp(pause.paused_at), "reason": pause.reason}
            for pause in report.pauses
        ],
        "capped": [
            {
                "kind": cap.kind,
                "max_running": cap.max_running,
                "running": cap.running,
                "set_by": cap.source.value,
                "set_at": _timestamp(cap.set_at),
            }
            for cap in report.caps
        ],
        "active_total": report.active_total(),
        "active": [_item_document(report, item) for item in report.active],
        "failed_total": report.failed_total(),
        "recent_failures": [_item_document(report, item) for item in report.failures],
    }
    return _DOCUMENT_JSON.encode(document)
