"""The executor's settings: the queue's defaults, typed durations, and a refusal
naming the setting for values that cannot work together."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from service_bench import seconds

from workqueue.application import (
    DEFAULT_EXECUTOR_SETTINGS,
    DEFAULT_MAX_PROGRESS_BYTES,
    DEFAULT_MAX_STALLS,
    DEFAULT_POLL_INTERVAL,
    ExecutorSettings,
)


class TestSettings:
    @pytest.mark.parametrize(
        ("changes", "named"),
        [
            ({"heartbeat_interval": seconds(0)}, "heartbeat_interval"),
            ({"lease_duration": seconds(-1)}, "lease_duration"),
            ({"max_error_length": 0}, "max_error_length"),
            ({"max_progress_bytes": 0}, "max_progress_bytes"),
            (
                {"heartbeat_interval": seconds(60), "lease_duration": seconds(60)},
                "heartbeat_interval",
            ),
        ],
    )
    def test_inconsistent_settings_are_refused_naming_the_setting(
        self, changes: dict[str, Any], named: str
    ) -> None:
        with pytest.raises(ValueError, match=named):
            ExecutorSettings(**changes)

    def test_the_defaults_are_a_two_second_heartbeat_on_a_sixty_second_lease(self) -> None:
        settings = ExecutorSettings()
        assert (settings.heartbeat_interval, settings.lease_duration) == (seconds(2), seconds(60))
        assert (settings.max_error_length, settings.max_progress_bytes) == (4000, 65536)


class TestTheQueuesDefaults:
    def test_each_default_is_exported_once_with_its_type(self) -> None:
        defaults = (
            DEFAULT_EXECUTOR_SETTINGS,
            DEFAULT_MAX_PROGRESS_BYTES,
            DEFAULT_POLL_INTERVAL,
            DEFAULT_MAX_STALLS,
        )

        assert defaults == (
            ExecutorSettings(
                heartbeat_interval=timedelta(seconds=2),
                lease_duration=timedelta(seconds=60),
                max_error_length=4000,
                max_progress_bytes=65536,
            ),
            65536,
            timedelta(seconds=5),
            3,
        )


class TestRefusalsInFull:
    @pytest.mark.parametrize(
        ("changes", "message"),
        [
            ({"heartbeat_interval": seconds(0)}, "heartbeat_interval must be positive, not 0 s"),
            ({"lease_duration": seconds(-0.5)}, "lease_duration must be positive, not -0.5 s"),
            ({"max_error_length": -3}, "max_error_length must be positive, not -3"),
            ({"max_progress_bytes": 0}, "max_progress_bytes must be positive, not 0"),
            (
                {"heartbeat_interval": seconds(30), "lease_duration": seconds(30)},
                "heartbeat_interval (30 s) must be shorter than lease_duration (30 s)",
            ),
            (
                {"heartbeat_interval": seconds(90)},
                "heartbeat_interval (90 s) must be shorter than lease_duration (60 s)",
            ),
        ],
    )
    def test_a_refusal_is_one_line_naming_the_setting_and_its_value(
        self, changes: dict[str, Any], message: str
    ) -> None:
        with pytest.raises(ValueError) as refused:
            ExecutorSettings(**changes)

        assert str(refused.value) == message

    @pytest.mark.parametrize("name", ["heartbeat_interval", "lease_duration"])
    def test_a_duration_given_as_a_number_of_seconds_is_refused_naming_the_setting(
        self, name: str
    ) -> None:
        with pytest.raises(TypeError) as refused:
            ExecutorSettings(**{name: 30.0})  # type: ignore[arg-type]

        assert str(refused.value) == f"{name} must be a timedelta, not 30.0"


class TestTheSmallestLimits:
    def test_executor_settings_accept_a_one_byte_progress_limit(self) -> None:
        assert ExecutorSettings(max_progress_bytes=1).max_progress_bytes == 1

    def test_a_one_character_error_limit_and_a_heartbeat_just_inside_the_lease_are_accepted(
        self,
    ) -> None:
        settings = ExecutorSettings(
            heartbeat_interval=timedelta(seconds=59, microseconds=999999), max_error_length=1
        )

        assert settings.max_error_length == 1
        assert settings.lease_duration - settings.heartbeat_interval == timedelta(microseconds=1)
