"""Worker settings: the documented defaults, durations in seconds or with a unit, one clear
line naming each mistake, and never a password."""

from __future__ import annotations

import re
import socket
from datetime import timedelta
from pathlib import Path

import pytest

from workqueue.adapters.postgres import DEFAULT_POOL_MAX_SIZE, DEFAULT_POOL_MIN_SIZE
from workqueue.application import (
    DEFAULT_CONCURRENCY,
    DEFAULT_EXECUTOR_SETTINGS,
    DEFAULT_MAX_STALLS,
    DEFAULT_POLL_INTERVAL,
)
from workqueue.domain import WorkQueueError
from workqueue.entrypoints.worker.database import pool_max_size_for
from workqueue.entrypoints.worker.durations import parse_duration
from workqueue.entrypoints.worker.handlers import DEFAULT_DELETE_BATCH_SIZE
from workqueue.entrypoints.worker.settings import (
    SettingsError,
    WorkerSettings,
    _describe,
    default_embedded_data_dir,
    default_worker_id,
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
            "invalid setting WORKQUEUE_POLL_INTERVAL: expected a duration like 30s, 5m, 1h "
            "or a number of seconds",
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


@pytest.mark.parametrize("value", [True, "P30D", "-pt5m", "01:30:00", timedelta(hours=1)])
def test_what_pydantic_reads_as_a_duration_is_left_for_it(value: object) -> None:
    assert parse_duration(value) == value


@pytest.mark.parametrize("text", ["5x", "soon", "", "1 hour", "5 m s"])
def test_text_that_is_no_duration_is_told_what_a_duration_looks_like(text: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_duration(text)

    assert str(refused.value) == "expected a duration like 30s, 5m, 1h or a number of seconds"


def test_a_setting_that_is_no_duration_names_the_setting_and_the_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WORKQUEUE_LEASE_DURATION", "5x")

    with pytest.raises(SettingsError) as refused:
        load_settings()

    assert str(refused.value) == (
        "invalid setting WORKQUEUE_LEASE_DURATION: "
        "expected a duration like 30s, 5m, 1h or a number of seconds"
    )


def test_an_iso_duration_is_read_by_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKQUEUE_RETENTION", "P7D")

    assert load_settings().retention == timedelta(days=7)


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


def test_each_default_is_the_one_of_the_code_that_reads_the_setting() -> None:
    settings = load_settings()

    assert settings.poll_interval == DEFAULT_POLL_INTERVAL
    assert settings.lease_duration == DEFAULT_EXECUTOR_SETTINGS.lease_duration
    assert settings.heartbeat_interval == DEFAULT_EXECUTOR_SETTINGS.heartbeat_interval
    assert settings.max_error_length == DEFAULT_EXECUTOR_SETTINGS.max_error_length
    assert settings.max_progress_bytes == DEFAULT_EXECUTOR_SETTINGS.max_progress_bytes
    assert settings.max_stalls == DEFAULT_MAX_STALLS
    assert settings.concurrency == DEFAULT_CONCURRENCY
    assert (settings.pool_min_size, pool_size(settings)) == (
        DEFAULT_POOL_MIN_SIZE,
        DEFAULT_POOL_MAX_SIZE,
    )
    assert settings.retention_batch_size == settings.token_cleanup_batch_size
    assert settings.retention_batch_size == DEFAULT_DELETE_BATCH_SIZE


def test_the_pool_holds_four_connections_at_most_unless_told_otherwise() -> None:
    settings = load_settings()

    assert (settings.pool_min_size, pool_size(settings)) == (1, 4)
    assert settings.concurrency == 1
    assert (settings.max_error_length, settings.max_progress_bytes) == (4000, 65536)
    assert settings.retention_batch_size == settings.token_cleanup_batch_size == 1000
    assert settings.connect_attempts == 5


def pool_size(settings: WorkerSettings) -> int:
    """The most connections the worker's pool opens with these settings."""
    return pool_max_size_for(
        settings.pool_max_size, concurrency=settings.concurrency, min_size=settings.pool_min_size
    )


class TestThePoolIsSizedForTheConcurrency:
    def test_each_lane_beyond_the_first_gets_one_more_connection(self) -> None:
        assert (
            pool_size(load_settings(concurrency=20)) - pool_size(load_settings(concurrency=19)) == 1
        )

    def test_lanes_get_one_for_their_shared_heartbeats_and_one_for_their_completions(
        self,
    ) -> None:
        # 4 for the first lane, 1 for the second, 2 for what the lanes share.
        assert pool_size(load_settings(concurrency=2)) == 7
        assert pool_size(load_settings(concurrency=20)) == 25

    def test_a_configured_largest_size_wins_over_the_concurrency(self) -> None:
        assert pool_size(load_settings(concurrency=20, pool_max_size=6)) == 6

    def test_a_sized_pool_never_falls_below_its_minimum(self) -> None:
        assert pool_size(load_settings(concurrency=2, pool_min_size=9)) == 9

    def test_a_concurrency_read_from_the_environment_is_a_count(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_CONCURRENCY", "8")

        assert load_settings().concurrency == 8

    def test_a_concurrency_of_zero_is_refused_with_one_line(self) -> None:
        with pytest.raises(SettingsError) as refused:
            load_settings(concurrency="0")

        assert str(refused.value) == "invalid setting WORKQUEUE_CONCURRENCY: must be at least 1"


def test_a_pool_of_no_connections_is_refused_even_when_its_minimum_is_bad_too() -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(pool_min_size=0, pool_max_size=0)

    assert str(refused.value) == (
        "invalid setting WORKQUEUE_POOL_MIN_SIZE: must be at least 1; "
        "invalid setting WORKQUEUE_POOL_MAX_SIZE: must be at least 1"
    )


def test_a_default_passes_the_same_checks_as_a_given_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A host name no database can store makes a default worker id that is refused.
    monkeypatch.setattr(socket, "gethostname", lambda: "bad\x00host")

    with pytest.raises(SettingsError) as refused:
        load_settings()

    assert str(refused.value) == (
        "invalid setting WORKQUEUE_WORKER_ID: must be UTF-8 text (it holds a NUL character)"
    )


def test_a_settings_error_is_one_of_the_queues_errors() -> None:
    assert issubclass(SettingsError, WorkQueueError)


def test_a_pool_may_open_exactly_its_minimum() -> None:
    settings = load_settings(pool_min_size=3, pool_max_size=3)

    assert (settings.pool_min_size, settings.pool_max_size) == (3, 3)


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("database_url", "postgresql://app@db/my queue", "must not contain whitespace"),
        ("worker_id", "   ", "must not be blank"),
        ("worker_id", "w\ud800", "must be UTF-8 text (it holds a lone surrogate)"),
    ],
)
def test_text_no_setting_can_use_is_refused_saying_why(
    setting: str, value: str, message: str
) -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(**{setting: value})

    assert str(refused.value) == f"invalid setting WORKQUEUE_{setting.upper()}: {message}"


class TestTheSettingsOfAPooledDatabase:
    def test_by_default_the_database_is_no_pooler_and_the_listener_uses_its_url(self) -> None:
        settings = load_settings()

        assert (settings.transaction_pooling, settings.listen_database_url) == (False, None)

    def test_the_listen_url_is_checked_like_the_database_url_and_never_shown(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_TRANSACTION_POOLING", "true")
        monkeypatch.setenv("WORKQUEUE_LISTEN_DATABASE_URL", f"postgresql://u:{SECRET}@db/q")

        settings = load_settings()

        assert settings.transaction_pooling is True
        assert settings.listen_database_url is not None
        assert SECRET not in repr(settings)
        with pytest.raises(SettingsError) as refused:
            load_settings(listen_database_url=f"mysql://u:{SECRET}@db/q")
        assert str(refused.value) == (
            "invalid setting WORKQUEUE_LISTEN_DATABASE_URL: must be a postgresql:// URL"
        )


@pytest.mark.parametrize(
    "reference", ["myapp", "myapp.work", "myapp.work:app", " my_app.jobs:kinds "]
)
def test_an_application_is_a_dotted_module_and_an_optional_attribute(reference: str) -> None:
    assert WorkerSettings(app=reference).app == reference.strip()


@pytest.mark.parametrize(
    "reference", ["my-app", "myapp.", "myapp:", "myapp:not-an-attribute", ":app"]
)
def test_an_application_that_is_no_module_reference_is_refused_naming_the_setting(
    reference: str,
) -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(app=reference)

    assert str(refused.value) == (
        "invalid setting WORKQUEUE_APP: must be MODULE[:ATTRIBUTE], e.g. myapp.work:app"
    )
