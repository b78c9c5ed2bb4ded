"""The executor's settings: the queue's defaults, typed durations, and a refusal
naming the setting for values that cannot work together."""

from __future__ import annotations

import pytest
from service_bench import seconds

from application import (
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
        self, changes: dict[str, float], named: str
    ) -> None:
        with pytest.raises(ValueError, match=named):
            ExecutorSettings(**changes)  # type: ignore[arg-type]

    def test_the_defaults_are_a_two_second_heartbeat_on_a_sixty_second_lease(self) -> None:
        settings = ExecutorSettings()
        assert (settings.heartbeat_interval, settings.lease_duration) == (seconds(2), seconds(60))
        assert (settings.max_error_length, settings.max_progress_bytes) == (4000, 65536)


class TestTheSmallestLimits:
    def test_executor_settings_accept_a_one_byte_progress_limit(self) -> None:
        assert ExecutorSettings(max_progress_bytes=1).max_progress_bytes == 1
