"""Settings at their edges: default places and names, the longest durations, every unit."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from entrypoints.worker.durations import parse_duration
from entrypoints.worker.settings import (
    SettingsError,
    WorkerSettings,
    _describe,
    default_embedded_data_dir,
    default_worker_id,
    load_settings,
)


def test_the_worker_id_ends_in_six_random_hex_digits() -> None:
    assert re.fullmatch(r".+:\d+:[0-9a-f]{6}", default_worker_id())


def test_a_user_without_xdg_state_home_keeps_the_data_under_local_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))

    assert default_embedded_data_dir() == tmp_path / ".local" / "state" / "workqueue" / "pgdata"


@pytest.mark.parametrize(
    ("text", "duration"),
    [
        ("250ms", timedelta(milliseconds=250)),
        ("90", timedelta(seconds=90)),
        ("90s", timedelta(seconds=90)),
        ("2m", timedelta(minutes=2)),
        ("24H", timedelta(hours=24)),
        ("30d", timedelta(days=30)),
        (" 1.5 ", timedelta(seconds=1.5)),
        (7, timedelta(seconds=7)),
        (0.25, timedelta(milliseconds=250)),
    ],
)
def test_a_duration_is_seconds_or_a_number_with_a_unit(text: object, duration: timedelta) -> None:
    assert parse_duration(text) == duration


@pytest.mark.parametrize("value", [True, "P30D", "soon", timedelta(hours=1)])
def test_what_is_not_a_number_of_seconds_is_left_for_pydantic(value: object) -> None:
    assert parse_duration(value) == value


@pytest.mark.parametrize("text", ["1" + "0" * 20, "100000000000d"])
def test_a_duration_too_long_for_a_timedelta_is_refused_as_a_value_error(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_duration(text)

    assert str(refused.value) == "is too long a duration"


def test_the_longest_duration_is_a_century(monkeypatch: pytest.MonkeyPatch) -> None:
    assert WorkerSettings(retention=timedelta(days=36500)).retention == timedelta(days=36500)
    monkeypatch.setenv("WORKQUEUE_RETENTION", "36501d")

    with pytest.raises(SettingsError) as refused:
        load_settings()

    assert str(refused.value) == "invalid setting WORKQUEUE_RETENTION: must be at most 36500 days"


def test_a_too_long_duration_in_the_environment_names_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WORKQUEUE_LEASE_DURATION", "1" + "0" * 20)

    with pytest.raises(SettingsError) as refused:
        load_settings()

    assert str(refused.value) == (
        "invalid setting WORKQUEUE_LEASE_DURATION: is too long a duration"
    )


def test_several_bad_settings_are_separated_by_semicolons(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKQUEUE_MAX_STALLS", "0")
    monkeypatch.setenv("WORKQUEUE_POLL_INTERVAL", "0")

    with pytest.raises(SettingsError) as refused:
        load_settings()

    assert str(refused.value) == (
        "invalid setting WORKQUEUE_POLL_INTERVAL: must be a positive duration; "
        "invalid setting WORKQUEUE_MAX_STALLS: must be at least 1"
    )


def test_an_unknown_setting_is_named_by_its_variable() -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(**{"no_such_setting": 1})

    assert str(refused.value) == (
        "invalid setting WORKQUEUE_NO_SUCH_SETTING: Extra inputs are not permitted"
    )


@pytest.mark.parametrize("location", [(), (0,)])
def test_a_problem_not_tied_to_one_setting_is_said_of_the_settings(
    location: tuple[int, ...],
) -> None:
    # pydantic reports an error of the whole model without a field name; load_settings
    # passes such an error through this wording.
    detail = {"loc": location, "msg": "Value error, the pool cannot hold them", "type": "x"}

    assert _describe(detail) == "invalid settings: the pool cannot hold them"  # type: ignore[arg-type]
