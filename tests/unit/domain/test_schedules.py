"""A periodic schedule: a payload, a positive interval, a usable dedup key."""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

import pytest

from workqueue.domain import InvalidDedupKeyError, WorkPayload, WorkSchedule


class Chore(StrEnum):
    SWEEP = "sweep"


class Sweep(WorkPayload):
    kind = Chore.SWEEP


class TestSchedules:
    def test_a_schedule_of_zero_interval_is_refused_naming_its_kind(self) -> None:
        with pytest.raises(ValueError) as raised:
            WorkSchedule(payload=Sweep(), interval=timedelta(0))
        assert str(raised.value) == (
            "schedule of 'sweep': interval must be a positive timedelta, not datetime.timedelta(0)"
        )

    def test_a_schedule_of_the_shortest_positive_interval_is_accepted(self) -> None:
        schedule = WorkSchedule(payload=Sweep(), interval=timedelta(microseconds=1))
        assert (schedule.kind, schedule.dedup_key) == ("sweep", "periodic")

    def test_a_schedule_with_an_unusable_dedup_key_is_refused(self) -> None:
        with pytest.raises(InvalidDedupKeyError):
            WorkSchedule(payload=Sweep(), interval=timedelta(hours=1), dedup_key=" ")
