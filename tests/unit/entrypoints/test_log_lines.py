"""Log lines: one per event, text or JSON, with the event's fields, to the character, and
never a password."""

from __future__ import annotations

import io
import json
import logging
import sys
from enum import IntEnum, StrEnum
from pathlib import Path

import pytest

from workqueue.entrypoints.worker import log_format
from workqueue.entrypoints.worker.log_format import (
    JsonLineFormatter,
    TextLineFormatter,
    configure_logging,
    event_fields,
    mask_url_passwords,
)

SECRET = "pa55word"


def record(
    message: str = "event", *args: object, created: float | None = None, **extra: object
) -> logging.LogRecord:
    logger = logging.getLogger("workqueue.executor")
    made = logger.makeRecord(
        logger.name, logging.INFO, __file__, 1, message, args, None, extra=extra
    )
    if created is not None:
        made.created = created
    return made


def test_a_text_line_carries_the_message_and_the_extra_fields() -> None:
    line = TextLineFormatter().format(
        record("token_cleanup item %d succeeded", 3, item_id=3, kind="token_cleanup", seconds=0.5)
    )

    assert "INFO workqueue.executor: token_cleanup item 3 succeeded" in line
    assert line.endswith("item_id=3 kind=token_cleanup seconds=0.5")
    assert "\n" not in line


def test_a_text_field_with_spaces_is_quoted_so_the_line_stays_parsable() -> None:
    line = TextLineFormatter().format(record("failed", error="boom: it broke"))

    assert 'error="boom: it broke"' in line


def test_a_json_line_is_one_object_with_the_extra_fields() -> None:
    line = JsonLineFormatter().format(
        record("periodic %s enqueued", "token_cleanup", kind="token_cleanup", item_id=9)
    )

    document = json.loads(line)
    assert document["message"] == "periodic token_cleanup enqueued"
    assert document["level"] == "INFO"
    assert document["logger"] == "workqueue.executor"
    assert document["kind"] == "token_cleanup"
    assert document["item_id"] == 9
    assert document["time"].endswith("Z")
    assert "\n" not in line


def test_an_extra_field_cannot_overwrite_the_message_of_a_json_line() -> None:
    document = json.loads(JsonLineFormatter().format(record("real", level_name="x", time="t")))

    assert document["message"] == "real"
    assert document["extra_time"] == "t"


def test_a_json_line_keeps_an_exception_as_a_field() -> None:
    try:
        raise ValueError("bad thing")
    except ValueError:
        import sys

        failing = record("it failed")
        failing.exc_info = sys.exc_info()
    document = json.loads(JsonLineFormatter().format(failing))

    assert "ValueError: bad thing" in document["exception"]


@pytest.mark.parametrize("formatter", [TextLineFormatter(), JsonLineFormatter()])
def test_a_password_in_a_url_never_reaches_the_line(formatter: logging.Formatter) -> None:
    line = formatter.format(
        record(
            "cannot reach postgresql://app:%s@db:5432/queue",
            SECRET,
            database=f"postgresql://app:{SECRET}@db/queue",
        )
    )

    assert SECRET not in line
    assert "postgresql://app:***@db" in line


def test_masking_leaves_a_url_without_password_alone() -> None:
    text = "postgresql://postgres:@/postgres?host=/var/lib/workqueue/pgdata and https://x.org/a"

    assert mask_url_passwords(text) == text


def test_configuring_twice_does_not_write_each_line_twice() -> None:
    stream = io.StringIO()
    configure_logging("text", "INFO", stream=stream)
    configure_logging("json", "INFO", stream=stream)

    logging.getLogger("workqueue.test").info("once")

    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["message"] == "once"


def test_the_level_setting_hides_less_severe_lines() -> None:
    stream = io.StringIO()
    configure_logging("text", "WARNING", stream=stream)

    logging.getLogger("workqueue.test").info("hidden")
    logging.getLogger("workqueue.test").warning("shown")

    assert "hidden" not in stream.getvalue()
    assert "shown" in stream.getvalue()


def fields_of(line: str) -> str:
    return line.split(": ", 1)[1].split(" ", 1)[1]


def test_a_text_field_is_bare_when_it_can_be_and_json_when_it_cannot() -> None:
    line = TextLineFormatter().format(
        record(
            "event",
            word="XRAY",
            spaced="two words",
            quoted='say "hi"',
            assigned="a=b",
            empty="",
            count=3,
            ratio=0.5,
            flag=True,
            nothing=None,
            ids=[1, 2],
            mapping={"a": 1},
            where=Path("/srv/pgdata"),
        )
    )

    assert fields_of(line) == (
        'word=XRAY spaced="two words" quoted="say \\"hi\\"" assigned="a=b" empty="" count=3 '
        'ratio=0.5 flag=true nothing=null ids=[1,2] mapping={"a":1} where="/srv/pgdata"'
    )


def test_attributes_a_handler_adds_privately_are_not_fields() -> None:
    event = record("event", item_id=3)
    event._cached = "internal"  # type: ignore[attr-defined]

    assert event_fields(event) == {"item_id": 3}


def test_a_text_line_ends_with_the_traceback_on_the_lines_after_it() -> None:
    try:
        raise ValueError("bad thing")
    except ValueError:
        failing = record("it failed", item_id=1)
        failing.exc_info = sys.exc_info()

    first, *rest = TextLineFormatter().format(failing).splitlines()

    assert first.endswith("INFO workqueue.executor: it failed item_id=1")
    assert rest[0] == "Traceback (most recent call last):"
    assert rest[-1] == "ValueError: bad thing"


def test_a_json_line_writes_any_field_value_and_keeps_non_ascii_text() -> None:
    line = JsonLineFormatter().format(record("café", where=Path("/srv/pgdata")))

    assert '"message": "café"' in line
    assert json.loads(line)["where"] == "/srv/pgdata"


def test_logging_is_text_at_info_unless_told_otherwise() -> None:
    stream = io.StringIO()
    configure_logging("text", stream=stream)

    logging.getLogger("workqueue.test").debug("hidden")
    logging.getLogger("workqueue.test").info("shown")

    (line,) = stream.getvalue().splitlines()
    assert line.endswith(" INFO workqueue.test: shown")


def test_without_a_stream_lines_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("json")

    logging.getLogger("workqueue.test").warning("to stderr")

    captured = capsys.readouterr()
    assert captured.out == ""
    assert json.loads(captured.err)["message"] == "to stderr"


def test_chatty_third_party_loggers_are_held_to_warnings() -> None:
    configure_logging("text", "DEBUG", stream=io.StringIO())

    levels = {
        name: logging.getLogger(name).level
        for name in ("pgserver", "asyncio", "filelock", "fasteners")
    }

    assert levels == dict.fromkeys(levels, logging.WARNING)


# 2026-01-01T00:00:00Z: a second boundary that also changes the date.
NEW_YEAR = 1767225600


class Kind(StrEnum):
    DRAIN = "bench_drain"


class Priority(IntEnum):
    HIGH = 3


def text_at(formatter: logging.Formatter, created: float) -> str:
    return formatter.format(record(created=created))


def test_a_new_formatter_writes_the_time_of_its_first_line_in_the_first_second() -> None:
    assert (
        text_at(TextLineFormatter(), 0.25)
        == "1970-01-01T00:00:00.250Z INFO workqueue.executor: event"
    )


def test_a_new_formatter_writes_the_time_of_its_first_line_in_a_later_second() -> None:
    assert (
        text_at(TextLineFormatter(), 1.25)
        == "1970-01-01T00:00:01.250Z INFO workqueue.executor: event"
    )


def test_the_time_follows_each_line_across_a_second_and_a_date_and_back() -> None:
    formatter = TextLineFormatter()

    times = [
        text_at(formatter, created).split(" ", 1)[0]
        for created in (
            NEW_YEAR - 0.75,
            NEW_YEAR - 0.001,
            NEW_YEAR,
            NEW_YEAR + 0.5,
            NEW_YEAR - 0.75,
            NEW_YEAR + 61.007,
        )
    ]

    assert times == [
        "2025-12-31T23:59:59.250Z",
        "2025-12-31T23:59:59.999Z",
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.500Z",
        "2025-12-31T23:59:59.250Z",
        "2026-01-01T00:01:01.007Z",
    ]


def test_milliseconds_are_cut_not_rounded_and_padded_to_three_digits() -> None:
    formatter = TextLineFormatter()

    assert text_at(formatter, NEW_YEAR + 0.0019).startswith("2026-01-01T00:00:00.001Z ")
    assert text_at(formatter, 5.8999992).startswith("1970-01-01T00:00:05.899Z ")
    assert text_at(formatter, 5.06).startswith("1970-01-01T00:00:05.060Z ")


def test_a_time_within_half_a_microsecond_of_the_next_second_is_written_as_that_second() -> None:
    formatter = TextLineFormatter()

    assert text_at(formatter, NEW_YEAR - 0.0000005).startswith("2026-01-01T00:00:00.000Z ")
    assert text_at(formatter, NEW_YEAR - 0.0000007).startswith("2025-12-31T23:59:59.999Z ")


def test_a_json_line_carries_the_same_time() -> None:
    formatter = JsonLineFormatter()

    times = [
        json.loads(formatter.format(record(created=created)))["time"]
        for created in (NEW_YEAR - 0.001, NEW_YEAR + 0.5)
    ]

    assert times == ["2025-12-31T23:59:59.999Z", "2026-01-01T00:00:00.500Z"]


def test_numbers_and_plain_words_are_written_without_json_dumps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("json.dumps was called")

    monkeypatch.setattr(log_format.json, "dumps", refuse)
    line = TextLineFormatter().format(
        record(
            item_id=123456,
            below=-12,
            huge=10**20,
            seconds=0.5,
            negative_zero=-0.0,
            tiny=1e-05,
            large=1e300,
            word="XRAY",
            accented="café",
            kind=Kind.DRAIN,
        )
    )

    assert fields_of(line) == (
        "item_id=123456 below=-12 huge=100000000000000000000 seconds=0.5 negative_zero=-0.0 "
        "tiny=1e-05 large=1e+300 word=XRAY accented=café kind=bench_drain"
    )


def test_values_that_are_not_plain_numbers_or_words_are_written_as_json_writes_them() -> None:
    line = TextLineFormatter().format(
        record(
            nan=float("nan"),
            inf=float("inf"),
            minus_inf=float("-inf"),
            yes=True,
            no=False,
            nothing=None,
            priority=Priority.HIGH,
            empty="",
            spaced="two words",
            tabbed="a\tb",
            broken="line\nbreak",
            nbsp="\u00a0x",
            separator="\x1c",
            quoted='say "hi"',
            assigned="a=b",
            spaced_accent="naïve word",
            ids=[1, 2.5],
            mapping={"a": None},
            where=Path("/srv/pgdata"),
        )
    )

    assert fields_of(line) == (
        "nan=NaN inf=Infinity minus_inf=-Infinity yes=true no=false nothing=null priority=3 "
        'empty="" spaced="two words" tabbed="a\\tb" broken="line\\nbreak" nbsp="\\u00a0x" '
        'separator="\\u001c" quoted="say \\"hi\\"" assigned="a=b" '
        'spaced_accent="na\\u00efve word" ids=[1,2.5] mapping={"a":null} where="/srv/pgdata"'
    )


def test_a_json_line_writes_every_value_as_before() -> None:
    line = JsonLineFormatter().format(
        record("done", created=NEW_YEAR, item_id=7, seconds=0.5, kind=Kind.DRAIN, flag=None)
    )

    assert line == (
        '{"time": "2026-01-01T00:00:00.000Z", "level": "INFO", "logger": "workqueue.executor", '
        '"message": "done", "item_id": 7, "seconds": 0.5, "kind": "bench_drain", "flag": null}'
    )


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("postgresql://app:pa55word@db/q", "postgresql://app:***@db/q"),
        ("redis://:pa55word@cache:6379", "redis://:***@cache:6379"),
        ("postgres://u:pa:55:word@h", "postgres://u:***@h"),
        ("db+asyncpg.v2-x://u:pa55word@h", "db+asyncpg.v2-x://u:***@h"),
        (
            "from postgresql://a:one@h1/x to 'mysql://b:two@h2' and \"x://c:three@h3\"",
            "from postgresql://a:***@h1/x to 'mysql://b:***@h2' and \"x://c:***@h3\"",
        ),
        ("postgresql://app@db/q", "postgresql://app@db/q"),
        ("no scheme app:pa55word@db", "no scheme app:pa55word@db"),
    ],
)
def test_masking_replaces_each_url_password_it_finds(text: str, masked: str) -> None:
    assert mask_url_passwords(text) == masked


def test_a_line_without_a_url_comes_back_unchanged() -> None:
    text = "item 3 succeeded in 0.002 s (attempt 1) user:pa55word@host"

    assert mask_url_passwords(text) is text


def test_a_text_line_masks_a_password_in_its_message_and_in_its_fields() -> None:
    line = TextLineFormatter().format(
        record(
            f"cannot reach postgresql://app:{SECRET}@db/q",
            created=NEW_YEAR,
            database=f"postgresql://app:{SECRET}@db/q",
            spaced=f"at redis://:{SECRET}@cache now",
        )
    )

    assert line == (
        "2026-01-01T00:00:00.000Z INFO workqueue.executor: cannot reach postgresql://app:***@db/q "
        'database=postgresql://app:***@db/q spaced="at redis://:***@cache now"'
    )


def test_a_json_line_masks_a_password_in_its_message_and_in_its_fields() -> None:
    line = JsonLineFormatter().format(
        record(
            f"cannot reach postgresql://app:{SECRET}@db/q",
            created=NEW_YEAR,
            database=f"postgresql://app:{SECRET}@db/q",
        )
    )

    assert line == (
        '{"time": "2026-01-01T00:00:00.000Z", "level": "INFO", "logger": "workqueue.executor", '
        '"message": "cannot reach postgresql://app:***@db/q", '
        '"database": "postgresql://app:***@db/q"}'
    )


@pytest.mark.parametrize("formatter", [TextLineFormatter(), JsonLineFormatter()])
def test_a_password_in_a_traceback_is_masked_too(formatter: logging.Formatter) -> None:
    try:
        raise ConnectionError(f"refused: postgresql://app:{SECRET}@db/q")
    except ConnectionError:
        failing = record("it failed")
        failing.exc_info = sys.exc_info()

    line = formatter.format(failing)

    assert SECRET not in line
    assert "ConnectionError: refused: postgresql://app:***@db/q" in line
