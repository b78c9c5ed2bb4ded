"""Any value in any ``WORKQUEUE_*`` variable: usable settings, or one line naming it and exit 2.

Nothing an operator can type may pass the settings and then break the worker at
its first claim (a lease too long to add to now, a stall limit too large for
PostgreSQL's integer, a worker id that is not text), nor crash the CLI with a
traceback instead of saying which variable is wrong.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workqueue.domain import unstorable_character
from workqueue.entrypoints.cli import main
from workqueue.entrypoints.worker.container import WorkerContainer
from workqueue.entrypoints.worker.settings import (
    SettingsError,
    WorkerSettings,
    env_name,
    load_settings,
)

PG_INTEGER_MAX = 2**31 - 1

COUNTS = [
    "max_stalls",
    "connect_attempts",
    "pool_min_size",
    "pool_max_size",
    "concurrency",
    "max_error_length",
    "max_progress_bytes",
    "retention_batch_size",
    "token_cleanup_batch_size",
]
DURATIONS = [
    "poll_interval",
    "lease_duration",
    "heartbeat_interval",
    "retention",
    "retention_interval",
    "token_cleanup_interval",
]

# What the environment can carry: no NUL, and of the surrogates only those that
# stand for undecodable bytes (os.environ decodes with surrogateescape).
ENVIRONMENT_TEXT = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00")
    | st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF),
    max_size=30,
)
DURATION_TEXT = st.one_of(
    st.integers().map(str),
    st.floats(allow_nan=False).map(repr),
    st.builds(
        lambda number, unit: f"{number}{unit}",
        st.integers(min_value=-(10**12), max_value=10**12),
        st.sampled_from(["", "ms", "s", "m", "h", "d"]),
    ),
    st.integers(min_value=1, max_value=500).map(lambda digits: "9" * digits),
    ENVIRONMENT_TEXT,
)


@contextmanager
def environment(field: str, value: str) -> Iterator[None]:
    """The process environment with no ``WORKQUEUE_*`` variable but this one."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("WORKQUEUE_")}
    with mock.patch.dict(os.environ, {**kept, env_name(field): value}, clear=True):
        yield


def loaded(field: str, value: str) -> WorkerSettings | SettingsError:
    with environment(field, value):
        try:
            return load_settings()
        except SettingsError as error:
            return error


def assert_refused_naming(error: SettingsError, field: str) -> None:
    # The line may blame the variable that disagrees with this one (a minimum above
    # the maximum, a heartbeat slower than the lease); it names both.
    assert str(error).startswith("invalid setting WORKQUEUE_")
    assert env_name(field) in str(error)
    assert "\n" not in str(error)


@given(field=st.sampled_from(COUNTS), value=st.integers())
def test_a_count_is_usable_by_postgresql_or_refused_naming_its_variable(
    field: str, value: int
) -> None:
    settings = loaded(field, str(value))

    if isinstance(settings, SettingsError):
        assert_refused_naming(settings, field)
    else:
        assert 1 <= getattr(settings, field) <= PG_INTEGER_MAX


@given(field=st.sampled_from(DURATIONS), text=DURATION_TEXT)
def test_a_duration_is_usable_from_now_on_or_refused_naming_its_variable(
    field: str, text: str
) -> None:
    settings = loaded(field, text)

    if isinstance(settings, SettingsError):
        assert_refused_naming(settings, field)
    else:
        duration: timedelta = getattr(settings, field)
        now = datetime.now(UTC)
        # A lease is added to now at every claim, a retention taken from it.
        assert duration > timedelta(0)
        assert now - duration < now < now + duration


@given(field=st.sampled_from(list(WorkerSettings.model_fields)), text=ENVIRONMENT_TEXT)
def test_any_text_in_any_variable_loads_or_is_refused_naming_it(field: str, text: str) -> None:
    settings = loaded(field, text)

    if isinstance(settings, SettingsError):
        assert_refused_naming(settings, field)
    else:
        # Text that reaches the database must be text it can store.
        assert unstorable_character(settings.worker_id) is None


def never_built(settings: WorkerSettings) -> WorkerContainer:
    raise AssertionError("a command ran with settings that should have been refused")


OUT_OF_RANGE = st.tuples(
    st.sampled_from(COUNTS), st.sampled_from(["0", "-1", "2147483648", "10" * 20, "many"])
) | st.tuples(
    st.sampled_from(DURATIONS),
    st.sampled_from(["0", "-1", "9" * 400, "36501d", "99999999999999d", "soon"]),
)


@given(
    setting=OUT_OF_RANGE,
    command=st.sampled_from([["worker"], ["status"], ["migrate"], ["enqueue", "token_cleanup"]]),
)
def test_a_setting_out_of_range_stops_every_command_with_one_line_and_exit_two(
    setting: tuple[str, str], command: list[str]
) -> None:
    field, text = setting
    out, err = io.StringIO(), io.StringIO()
    with environment(field, text):
        status = main(command, container_factory=never_built, out=out, err=err)

    assert status == 2
    assert out.getvalue() == ""
    assert err.getvalue().startswith("workqueue: invalid setting WORKQUEUE_")
    assert env_name(field) in err.getvalue()
    assert err.getvalue().count("\n") == 1


@pytest.mark.parametrize(
    ("field", "text", "message"),
    [
        ("retention", "3153600001", "must be at most 36500 days"),
        ("lease_duration", "36501d", "must be at most 36500 days"),
        ("poll_interval", "9" * 400, "is too long a duration"),
        ("retention", "-99999999999999d", "is too long a duration"),
        ("max_stalls", "2147483648", "must be at most 2147483647"),
        ("pool_max_size", "2147483648", "must be at most 2147483647"),
        ("worker_id", "host-\udcff", "must be UTF-8 text (it holds a lone surrogate)"),
    ],
)
def test_each_limit_says_what_it_is(field: str, text: str, message: str) -> None:
    refused = loaded(field, text)

    assert isinstance(refused, SettingsError)
    assert str(refused) == f"invalid setting {env_name(field)}: {message}"


@pytest.mark.parametrize(
    ("field", "text", "expected"),
    [
        ("retention", "36500d", timedelta(days=36500)),
        ("retention", "3153600000", timedelta(days=36500)),
        ("max_stalls", "2147483647", 2147483647),
        ("pool_max_size", "2147483647", 2147483647),
        ("worker_id", "h\u00f6st-\u20ac", "h\u00f6st-\u20ac"),
    ],
)
def test_the_largest_values_allowed_are_accepted(field: str, text: str, expected: object) -> None:
    settings = loaded(field, text)

    assert isinstance(settings, WorkerSettings)
    assert getattr(settings, field) == expected
