"""The JSON documents of the API, which the HTML pages show too.

One function per shape, so the page and ``/api/`` cannot drift apart: a
template renders the same dictionary the API sends. Timestamps are ISO 8601 in
UTC (``2026-01-01T00:00:05.250000Z``), durations are seconds.
"""

from __future__ import annotations

import json
from datetime import datetime

from pydantic import JsonValue

from workqueue.domain import KindCap, KindPause, WorkItem, WorkStatus
from workqueue.entrypoints.timestamps import iso_timestamp
from workqueue.entrypoints.web.overview import Overview, oldest_queued_age, totals_by_status

__all__ = [
    "cap_document",
    "compact_json",
    "heartbeat_age",
    "item_document",
    "lease_left",
    "overview_document",
    "pause_document",
    "pretty_json",
    "seconds_between",
]

_PRETTY = json.JSONEncoder(indent=2, ensure_ascii=False, sort_keys=True)
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def seconds_between(earlier: datetime, later: datetime) -> float:
    """Seconds from ``earlier`` to ``later``, to the millisecond."""
    return round((later - earlier).total_seconds(), 3)


def heartbeat_age(item: WorkItem, now: datetime) -> float | None:
    """Seconds since a running item's last heartbeat (or claim); None unless running.

    A queued or finished item may keep the heartbeat of an earlier attempt; its
    age would only suggest a liveness that is not there.
    """
    if item.status is not WorkStatus.RUNNING or item.heartbeat_at is None:
        return None
    return seconds_between(item.heartbeat_at, now)


def lease_left(item: WorkItem, now: datetime) -> float | None:
    """Seconds until a running item's lease runs out (negative once it has); else None."""
    if item.status is not WorkStatus.RUNNING or item.lease_expires_at is None:
        return None
    return seconds_between(now, item.lease_expires_at)


def pretty_json(value: JsonValue) -> str:
    """``value`` as indented JSON with sorted keys, for people."""
    return _PRETTY.encode(value)


def compact_json(value: JsonValue) -> str:
    """``value`` as JSON on one line with sorted keys, for a table cell."""
    return _COMPACT.encode(value)


def item_document(item: WorkItem, now: datetime) -> dict[str, JsonValue]:
    """Every column of ``item``, plus its heartbeat age and lease left at ``now``."""
    return {
        "id": item.id,
        "kind": item.kind,
        "status": item.status.value,
        "attempt": item.attempt,
        "stalls": item.stalls,
        "dedup_key": item.dedup_key,
        "worker_id": item.worker_id,
        "enqueued_at": iso_timestamp(item.enqueued_at),
        "priority": item.priority,
        "run_at": iso_timestamp(item.run_at),
        "started_at": iso_timestamp(item.started_at),
        "heartbeat_at": iso_timestamp(item.heartbeat_at),
        "lease_expires_at": iso_timestamp(item.lease_expires_at),
        "finished_at": iso_timestamp(item.finished_at),
        "heartbeat_age_seconds": heartbeat_age(item, now),
        "lease_left_seconds": lease_left(item, now),
        "payload": item.payload,
        "progress": item.progress,
        "error": item.error,
        "snoozes": item.snoozes,
        "failures": [
            {"attempt": failure.attempt, "at": iso_timestamp(failure.at), "error": failure.error}
            for failure in item.failures
        ],
        "result": item.result,
        "requeued_as": item.requeued_as,
    }


def pause_document(pause: KindPause) -> dict[str, JsonValue]:
    """A paused kind: since when, and why (null: no reason given)."""
    return {
        "kind": pause.kind,
        "paused_at": iso_timestamp(pause.paused_at),
        "reason": pause.reason,
    }


def cap_document(cap: KindCap) -> dict[str, JsonValue]:
    """A capped kind: at most how many run at once, how many run now, who set it and when."""
    return {
        "kind": cap.kind,
        "max_running": cap.max_running,
        "running": cap.running,
        "set_by": cap.source.value,
        "set_at": iso_timestamp(cap.set_at),
    }


def overview_document(overview: Overview) -> dict[str, JsonValue]:
    """The counts, the oldest queued items and the paused and capped kinds of ``overview``."""
    return {
        "now": iso_timestamp(overview.now),
        "statuses": [status.value for status in WorkStatus],
        "counts": {
            kind: {status.value: count for status, count in by_status.items()}
            for kind, by_status in overview.counts.items()
        },
        "totals": {status.value: count for status, count in totals_by_status(overview).items()},
        "finished_counted_at": iso_timestamp(overview.finished_counted_at),
        "oldest_queued": {
            kind: {
                "enqueued_at": iso_timestamp(enqueued_at),
                "age_seconds": seconds_between(enqueued_at, overview.now),
            }
            for kind, enqueued_at in overview.oldest_queued.items()
        },
        "oldest_queued_age_seconds": _rounded(oldest_queued_age(overview)),
        "paused": [pause_document(pause) for pause in overview.pauses],
        "capped": [cap_document(cap) for cap in overview.caps],
    }


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)
