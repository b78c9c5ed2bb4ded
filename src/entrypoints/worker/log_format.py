"""One line per event: readable text for people, JSON lines for log collectors.

The application logs through stdlib loggers named ``workqueue.*`` and puts the
event's facts in ``extra={...}``; both formats write those fields. Whatever the
format, a password embedded in a URL is masked on the way out, so a DSN that
slips into an error message never reaches the log.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
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

# Any field value is written (str() of what JSON cannot hold), non-ASCII text as it is.
_JSON_LINE = json.JSONEncoder(default=str, ensure_ascii=False)

# Third-party loggers that narrate their internals at INFO (pgserver logs every
# command it runs); the worker's own events are what an operator reads.
_QUIET_LOGGERS = ("pgserver", "asyncio", "filelock", "fasteners")


def mask_url_passwords(text: str) -> str:
    """Replace the password of every ``scheme://user:password@`` in ``text`` by ``***``."""
    return _URL_PASSWORD.sub(r"\1***@", text)


def event_fields(record: logging.LogRecord) -> dict[str, object]:
    """The ``extra`` fields the caller attached to ``record``, in the order given."""
    return {
        key: value
        for key, value in vars(record).items()
        if key not in _RECORD_ATTRIBUTES and not key.startswith("_")
    }


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text_value(value: object) -> str:
    if isinstance(value, str) and value and not any(c.isspace() or c in '"=' for c in value):
        return value
    # Quoted text, a number, or compact JSON: still one token of the line.
    return json.dumps(value, default=str, separators=(",", ":"))


class TextLineFormatter(logging.Formatter):
    """``2025-01-01T12:00:00.000Z INFO workqueue.executor: claimed item id=3 kind=...``."""

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={_text_value(v)}" for k, v in event_fields(record).items())
        line = f"{_timestamp(record)} {record.levelname} {record.name}: {record.getMessage()}"
        if fields:
            line = f"{line} {fields}"
        if record.exc_info:
            # A traceback is the one thing allowed to span lines: it is read, not parsed.
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return mask_url_passwords(line)


class JsonLineFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, then the extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, object] = {
            "time": _timestamp(record),
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
