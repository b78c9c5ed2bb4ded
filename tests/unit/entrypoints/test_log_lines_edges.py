"""Log lines at their edges: every kind of field value, tracebacks, defaults, non-ASCII text."""

from __future__ import annotations

import io
import json
import logging
import sys
from pathlib import Path

import pytest

from entrypoints.worker.log_format import (
    JsonLineFormatter,
    TextLineFormatter,
    configure_logging,
    event_fields,
)


def record(message: str, **extra: object) -> logging.LogRecord:
    logger = logging.getLogger("workqueue.executor")
    return logger.makeRecord(logger.name, logging.INFO, __file__, 1, message, (), None, extra=extra)


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
