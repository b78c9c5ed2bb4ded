"""Log lines: one per event, text or JSON, with the event's fields and no password."""

from __future__ import annotations

import io
import json
import logging

import pytest

from entrypoints.worker.log_format import (
    JsonLineFormatter,
    TextLineFormatter,
    configure_logging,
    mask_url_passwords,
)

SECRET = "pa55word"


def record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    logger = logging.getLogger("workqueue.executor")
    return logger.makeRecord(
        logger.name, logging.INFO, __file__, 1, message, args, None, extra=extra
    )


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
