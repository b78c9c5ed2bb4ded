"""One line per event: readable text for people, JSON lines for log collectors.

The application logs through stdlib loggers named ``workqueue.*`` and puts the
event's facts in ``extra={...}``; both formats write those fields. Whatever the
format, a password embedded in a URL is masked on the way out, so a DSN that
slips into an error message never reaches the log.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from typing import Literal, TextIO

__all__ = [
    "JsonLineFormatter",
    "LogFormat",
    "TextLineFormatter",
    "configure_logging",
    "event_fields",
    "mask_url_passwords",
]

LogFormat = Literal["text", "json"]

# Attributes every LogRecord has; anything else on a record came from `extra`.
_RECORD_ATTRIBUTES = frozenset(
    vars(logging.LogRecord("", logging.INFO, "", 0, "", None, None)).keys()
) | {"message", "asctime", "taskName"}

# scheme://user:password@ -> scheme://user:***@ ; stops at quotes and whitespace so a
# JSON line stays valid JSON after masking.
_URL_PASSWORD = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@\"']*:)[^\s@/\"']+@")

# What makes a text field's value need quotes: whitespace (as str.isspace sees it),
# a quote, or an equals sign.
_NEEDS_QUOTES = re.compile(r'[\s"=]')

# Any field value is written (str() of what JSON cannot hold), non-ASCII text as it is.
_JSON_LINE = json.JSONEncoder(default=str, ensure_ascii=False)

# Third-party loggers that narrate their internals at INFO (pgserver logs every
# command it runs); the worker's own events are what an operator reads.
# uvicorn.error: the admin view logs where it listens itself; uvicorn would repeat it.
_QUIET_LOGGERS = ("pgserver", "asyncio", "filelock", "fasteners", "uvicorn.error")


def mask_url_passwords(text: str) -> str:
    """Replace the password of every ``scheme://user:password@`` in ``text`` by ``***``."""
    # Every match holds "://": most lines have none, and a substring test is far
    # cheaper than letting the pattern try each letter of the line.
    if "://" not in text:
        return text
    return _URL_PASSWORD.sub(r"\1***@", text)


def event_fields(record: logging.LogRecord) -> dict[str, object]:
    """The ``extra`` fields the caller attached to ``record``, in the order given."""
    return {
        key: value
        for key, value in vars(record).items()
        if key not in _RECORD_ATTRIBUTES and not key.startswith("_")
    }


def _text_value(value: object) -> str:
    # Integers and finite floats are written as json.dumps writes them, without its
    # cost: they are most of the fields (NaN and infinities are spelled its way below).
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return repr(value)
    if isinstance(value, str) and value and _NEEDS_QUOTES.search(value) is None:
        return value
    # Quoted text, a number, or compact JSON: still one token of the line.
    return json.dumps(value, default=str, separators=(",", ":"))


class _EventLineFormatter(logging.Formatter):
    """What both formats share: a record's time, its date and second rendered once per second."""

    # The last second rendered and its text, replaced on the instance as seconds pass;
    # it starts as a real pair, so no "nothing cached yet" case is needed.
    _second_text: tuple[int, str] = (0, "1970-01-01T00:00:00")

    def _timestamp(self, record: logging.LogRecord) -> str:
        """``record.created`` in UTC to the millisecond, as ``datetime.fromtimestamp`` has it."""
        fraction, whole = math.modf(record.created)
        # Rounded to the microsecond half to even, a million carried into the second,
        # as datetime does; then cut (not rounded) to the millisecond, as isoformat does.
        carry, micro = divmod(round(fraction * 1_000_000), 1_000_000)
        second = int(whole) + carry
        cached, text = self._second_text
        if second != cached:
            text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
            self._second_text = (second, text)
        return f"{text}.{micro // 1000:03d}Z"


class TextLineFormatter(_EventLineFormatter):
    """``2025-01-01T12:00:00.000Z INFO workqueue.executor: claimed item id=3 kind=...``."""

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={_text_value(v)}" for k, v in event_fields(record).items())
        line = f"{self._timestamp(record)} {record.levelname} {record.name}: {record.getMessage()}"
        if fields:
            line = f"{line} {fields}"
        if record.exc_info:
            # A traceback is the one thing allowed to span lines: it is read, not parsed.
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return mask_url_passwords(line)


class JsonLineFormatter(_EventLineFormatter):
    """One JSON object per line: time, level, logger, message, then the extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, object] = {
            "time": self._timestamp(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in event_fields(record).items():
            # An extra named like a base key must not overwrite it.
            document[key if key not in document else f"extra_{key}"] = value
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return mask_url_passwords(_JSON_LINE.encode(document))


class _EventLineHandler(logging.StreamHandler[TextIO]):
    """The handler :func:`configure_logging` installs, so it can find it again."""


def configure_logging(
    log_format: LogFormat, level: str | int = "INFO", *, stream: TextIO | None = None
) -> None:
    """Send every log record to ``stream`` (stderr by default) in ``log_format``.

    Replaces the handler an earlier call installed, so calling it twice does not
    double lines; handlers installed by others (a test harness) stay.
    """
    # A StreamHandler given no stream writes to stderr.
    handler = _EventLineHandler(stream)
    formatter = JsonLineFormatter() if log_format == "json" else TextLineFormatter()
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in root.handlers[:]:
        if isinstance(old, _EventLineHandler):
            root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
