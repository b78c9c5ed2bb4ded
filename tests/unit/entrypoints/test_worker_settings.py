"""Worker settings: documented defaults, durations in seconds, one clear line per mistake."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from entrypoints.worker.settings import (
    SettingsError,
    WorkerSettings,
    default_embedded_data_dir,
    load_settings,
)

SECRET = "hunter2-secret"


def test_the_defaults_are_the_documented_ones() -> None:
    settings = load_settings()

    assert settings.poll_interval == timedelta(seconds=5)
    assert settings.heartbeat_interval == timedelta(seconds=2)
    assert settings.lease_duration == timedelta(seconds=60)
    assert settings.max_stalls == 3
    assert settings.retention == timedelta(days=30)
    assert settings.token_cleanup_interval == timedelta(hours=24)
    assert settings.retention_interval == timedelta(hours=24)
    assert settings.database_url is None
    assert settings.migrate_on_start is True
    assert settings.log_format == "text"
    assert settings.log_level == "INFO"


def test_the_worker_id_names_the_host_and_process_and_differs_per_settings() -> None:
    first, second = load_settings().worker_id, load_settings().worker_id

    assert first != second
    assert first.count(":") == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("60", timedelta(seconds=60)),
        ("1.5", timedelta(seconds=1.5)),
        ("500ms", timedelta(milliseconds=500)),
        ("10s", timedelta(seconds=10)),
        ("15m", timedelta(minutes=15)),
        ("24h", timedelta(hours=24)),
        ("30d", timedelta(days=30)),
        ("P30D", timedelta(days=30)),
    ],
)
def test_durations_are_read_from_the_environment_as_seconds_or_with_a_unit(
    monkeypatch: pytest.MonkeyPatch, text: str, expected: timedelta
) -> None:
    monkeypatch.setenv("WORKQUEUE_RETENTION", text)

    assert load_settings().retention == expected


def test_every_setting_is_read_from_its_workqueue_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WORKQUEUE_LEASE_DURATION", "90")
    monkeypatch.setenv("WORKQUEUE_MAX_STALLS", "5")
    monkeypatch.setenv("WORKQUEUE_LOG_FORMAT", "json")
    monkeypatch.setenv("WORKQUEUE_LOG_LEVEL", "debug")
    monkeypatch.setenv("WORKQUEUE_MIGRATE_ON_START", "false")
    monkeypatch.setenv("WORKQUEUE_EMBEDDED_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("WORKQUEUE_WORKER_ID", "worker-7")

    settings = load_settings()

    assert settings.lease_duration == timedelta(seconds=90)
    assert settings.max_stalls == 5
    assert settings.log_format == "json"
    assert settings.log_level == "DEBUG"
    assert settings.migrate_on_start is False
    assert settings.embedded_data_dir == tmp_path
    assert settings.worker_id == "worker-7"


def test_an_empty_database_url_means_the_embedded_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WORKQUEUE_DATABASE_URL", "")

    assert load_settings().database_url is None


def test_an_override_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKQUEUE_LOG_FORMAT", "text")

    assert load_settings(log_format="json").log_format == "json"


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {"WORKQUEUE_HEARTBEAT_INTERVAL": "60"},
            "invalid setting WORKQUEUE_HEARTBEAT_INTERVAL: "
            "must be less than WORKQUEUE_LEASE_DURATION (60.0)",
        ),
        (
            {"WORKQUEUE_HEARTBEAT_INTERVAL": "10", "WORKQUEUE_LEASE_DURATION": "5"},
            "invalid setting WORKQUEUE_HEARTBEAT_INTERVAL: "
            "must be less than WORKQUEUE_LEASE_DURATION (5.0)",
        ),
        (
            {"WORKQUEUE_POLL_INTERVAL": "0"},
            "invalid setting WORKQUEUE_POLL_INTERVAL: must be a positive duration",
        ),
        (
            {"WORKQUEUE_LEASE_DURATION": "-1"},
            "invalid setting WORKQUEUE_LEASE_DURATION: must be a positive duration",
        ),
        (
            {"WORKQUEUE_HEARTBEAT_INTERVAL": "0"},
            "invalid setting WORKQUEUE_HEARTBEAT_INTERVAL: must be a positive duration",
        ),
        (
            {"WORKQUEUE_RETENTION": "0s"},
            "invalid setting WORKQUEUE_RETENTION: must be a positive duration",
        ),
        (
            {"WORKQUEUE_RETENTION_INTERVAL": "0"},
            "invalid setting WORKQUEUE_RETENTION_INTERVAL: must be a positive duration",
        ),
        (
            {"WORKQUEUE_TOKEN_CLEANUP_INTERVAL": "0"},
            "invalid setting WORKQUEUE_TOKEN_CLEANUP_INTERVAL: must be a positive duration",
        ),
        (
            {"WORKQUEUE_POLL_INTERVAL": "soon"},
            "invalid setting WORKQUEUE_POLL_INTERVAL: Input should be a valid timedelta",
        ),
        ({"WORKQUEUE_MAX_STALLS": "0"}, "invalid setting WORKQUEUE_MAX_STALLS: must be at least 1"),
        (
            {"WORKQUEUE_LOG_FORMAT": "xml"},
            "invalid setting WORKQUEUE_LOG_FORMAT: Input should be 'text' or 'json'",
        ),
        (
            {"WORKQUEUE_LOG_LEVEL": "LOUD"},
            "invalid setting WORKQUEUE_LOG_LEVEL: must be one of DEBUG, INFO, WARNING",
        ),
        (
            {"WORKQUEUE_POOL_MIN_SIZE": "5", "WORKQUEUE_POOL_MAX_SIZE": "2"},
            "invalid setting WORKQUEUE_POOL_MAX_SIZE: must be at least WORKQUEUE_POOL_MIN_SIZE (5)",
        ),
        (
            {"WORKQUEUE_RETENTION_BATCH_SIZE": "0"},
            "invalid setting WORKQUEUE_RETENTION_BATCH_SIZE: must be at least 1",
        ),
        (
            {"WORKQUEUE_CONNECT_ATTEMPTS": "0"},
            "invalid setting WORKQUEUE_CONNECT_ATTEMPTS: must be at least 1",
        ),
        (
            {"WORKQUEUE_DATABASE_URL": f"mysql://app:{SECRET}@db/queue"},
            "invalid setting WORKQUEUE_DATABASE_URL: must be a postgresql:// URL",
        ),
        (
            {"WORKQUEUE_DATABASE_URL": f"postgresql://app:{SECRET}@db:port/queue"},
            "invalid setting WORKQUEUE_DATABASE_URL: is not a parsable database URL",
        ),
        (
            {"WORKQUEUE_DATABASE_URL": f"postgresql://app:{SECRET}@[db/queue"},
            "invalid setting WORKQUEUE_DATABASE_URL: is not a parsable database URL",
        ),
    ],
)
def test_an_unusable_value_fails_with_one_line_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], message: str
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)

    with pytest.raises(SettingsError) as raised:
        load_settings()

    text = str(raised.value)
    assert text.startswith(message)
    assert "\n" not in text
    assert SECRET not in text


def test_several_mistakes_are_named_together_on_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WORKQUEUE_MAX_STALLS", "0")
    monkeypatch.setenv("WORKQUEUE_LOG_FORMAT", "xml")

    with pytest.raises(SettingsError) as raised:
        load_settings()

    assert "WORKQUEUE_MAX_STALLS" in str(raised.value)
    assert "WORKQUEUE_LOG_FORMAT" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_the_database_password_never_shows_in_the_settings_repr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WORKQUEUE_DATABASE_URL", f"postgresql://app:{SECRET}@db:5432/queue")

    settings = load_settings()

    assert SECRET not in repr(settings)
    assert SECRET not in str(settings)
    assert settings.database_url is not None
    assert settings.database_url.get_secret_value() == f"postgresql://app:{SECRET}@db:5432/queue"


def test_the_default_data_dir_as_root_is_under_var_lib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 0)

    assert default_embedded_data_dir() == Path("/var/lib/workqueue/pgdata")


def test_the_default_data_dir_of_a_user_is_their_xdg_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))

    assert default_embedded_data_dir() == tmp_path / "workqueue" / "pgdata"


def test_settings_are_frozen() -> None:
    settings = WorkerSettings()

    with pytest.raises(ValueError, match="frozen"):
        settings.max_stalls = 9  # type: ignore[misc]
