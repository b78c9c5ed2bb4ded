"""What each periodic kind's schedule has come to, for ``workqueue schedules``,
the web view and ``/api/schedules``: one document per schedule, or text.

A schedule's document: its ``kind``; ``interval_seconds`` or ``cron`` (with
``timezone`` and ``overlap``), the other null; ``last_fire_at``, the fire time its
calendar last took a turn at; ``next_run_at``, when it is next due (in the past:
due now; null: an interval after its live item finishes); ``last_item``, its
newest item (id, status, enqueued_at, finished_at) or null. Times are ISO 8601
UTC.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import JsonValue

from workqueue.domain import ScheduleTurn, WorkSchedule
from workqueue.entrypoints.timestamps import iso_timestamp

__all__ = ["render_schedules", "schedule_document"]


def schedule_document(
    schedule: WorkSchedule, turn: ScheduleTurn, now: datetime
) -> dict[str, JsonValue]:
    """One schedule as the JSON document says it (see the module's docstring)."""
    newest = turn.newest
    return {
        "kind": schedule.kind,
        "interval_seconds": (
            None if schedule.interval is None else schedule.interval.total_seconds()
        ),
        "cron": schedule.cron,
        "timezone": None if schedule.cron is None else schedule.timezone,
        "overlap": None if schedule.cron is None else schedule.overlap.value,
        "last_fire_at": iso_timestamp(turn.fired_at),
        "next_run_at": iso_timestamp(schedule.next_due(now, newest=newest, fired_at=turn.fired_at)),
        "last_item": None
        if newest is None
        else {
            "id": newest.id,
            "status": newest.status.value,
            "enqueued_at": iso_timestamp(newest.enqueued_at),
            "finished_at": iso_timestamp(newest.finished_at),
        },
    }


def _when(schedule: WorkSchedule) -> str:
    if schedule.interval is not None:
        return f"every {schedule.interval.total_seconds():g} s"
    return (
        f"cron {schedule.cron!r} in {schedule.timezone}, "
        f"a fire time while one runs: {schedule.overlap.value}"
    )


def _next(schedule: WorkSchedule, turn: ScheduleTurn, now: datetime) -> str:
    due = schedule.next_due(now, newest=turn.newest, fired_at=turn.fired_at)
    if due is None:
        return "an interval after its last item finishes"
    if due > now:
        return str(iso_timestamp(due))
    if due == now:
        return "now"
    return f"now (due since {iso_timestamp(due)})"


def _last(turn: ScheduleTurn) -> str:
    newest = turn.newest
    if newest is None:
        return "none"
    line = f"item {newest.id}, {newest.status.value}"
    if newest.finished_at is not None:
        line += f", finished {iso_timestamp(newest.finished_at)}"
    return line


def render_schedules(
    schedules: Sequence[WorkSchedule], turns: dict[str, ScheduleTurn], now: datetime
) -> str:
    """Every schedule as text: a heading, then its next run, last fire time and last run."""
    if not schedules:
        return "no periodic kinds"
    blocks = []
    for schedule in schedules:
        turn = turns[schedule.kind]
        lines = [f"{schedule.kind}: {_when(schedule)}", f"  next run: {_next(schedule, turn, now)}"]
        if schedule.cron is not None:
            lines.append(f"  last fire time: {iso_timestamp(turn.fired_at) or 'none yet'}")
        lines.append(f"  last run: {_last(turn)}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
