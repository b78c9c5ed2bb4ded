"""The WorkSchedule port: one per periodic kind."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from workqueue.domain.dedup import check_dedup_key
from workqueue.domain.payload import WorkPayload

__all__ = ["PERIODIC_DEDUP_KEY", "WorkSchedule"]

PERIODIC_DEDUP_KEY = "periodic"


@dataclass(frozen=True, slots=True)
class WorkSchedule:
    """A periodic kind: the payload to enqueue and how often.

    There is no timer: every worker's scheduler asks the queue to enqueue the payload
    with ``dedup_key`` if the kind is due (from the table), in one atomic step, so
    workers that find it due together produce one item.
    """

    payload: WorkPayload
    interval: timedelta
    dedup_key: str = PERIODIC_DEDUP_KEY

    def __post_init__(self) -> None:
        if self.interval <= timedelta(0):
            raise ValueError(f"schedule interval for {self.kind!r} must be positive")
        check_dedup_key(self.dedup_key)

    @property
    def kind(self) -> str:
        """The periodic kind's name."""
        return self.payload.kind_name()
