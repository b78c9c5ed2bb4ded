"""A progress snapshot that is encoded once, however often it is written.

A handler reports progress as a JSON value; a heartbeat writes it every interval
and the outcome writes it once more. :class:`ProgressSnapshot` keeps both forms of
one snapshot, its value and its compact JSON text, and makes each from the other at
most once, when first asked: the executor encodes a report once (to measure it),
and every write of it sends that same text. The store port's writes take a plain
JSON value or a snapshot; :func:`progress_value` is what a store that keeps values
(the in-memory one) reads of either.
"""

from __future__ import annotations

import json
from enum import Enum

from pydantic import JsonValue

__all__ = ["SNAPSHOT_JSON", "ProgressSnapshot", "progress_value"]

SNAPSHOT_JSON = json.JSONEncoder(allow_nan=False, ensure_ascii=False, separators=(",", ":"))
"""How a snapshot is encoded: compact UTF-8 JSON, with no NaN or infinity (JSON has none)."""


class _Form(Enum):
    UNDECODED = "undecoded"
    """The value of a snapshot built from its text, until it is first asked for."""


class ProgressSnapshot:
    """One progress snapshot, as a JSON value and as its JSON text.

    Build it from a value already known to be JSON (:meth:`of_value`, e.g. the
    progress a stored item carries) or from text :data:`SNAPSHOT_JSON` produced
    (:meth:`of_json`); :meth:`text` and :meth:`value` give either form. It is never
    changed afterwards.
    """

    __slots__ = ("_json", "_value")

    def __init__(self, value: JsonValue | _Form, text: str | None) -> None:
        self._value = value
        self._json = text

    @classmethod
    def of_value(cls, value: JsonValue) -> ProgressSnapshot:
        """The snapshot of ``value``; its text is encoded when first asked for."""
        return cls(value, None)

    @classmethod
    def of_json(cls, text: str) -> ProgressSnapshot:
        """The snapshot whose JSON text is ``text``; its value is decoded when first asked for."""
        return cls(_Form.UNDECODED, text)

    def text(self) -> str:
        """The snapshot as compact JSON text, encoded at most once.

        :raises ValueError: if the value, given to :meth:`of_value`, is not JSON.
        """
        text = self._json
        if text is None:
            # Only a snapshot built from its value lacks its text.
            text = self._json = SNAPSHOT_JSON.encode(self._value)
        return text

    def value(self) -> JsonValue:
        """The snapshot as a JSON value, decoded at most once (a copy of what was reported)."""
        value = self._value
        if value is _Form.UNDECODED:
            value = self._value = json.loads(self.text())
        return value


def progress_value(progress: JsonValue | ProgressSnapshot) -> JsonValue:
    """The JSON value of progress given to a store's write, as a snapshot or a plain value."""
    if isinstance(progress, ProgressSnapshot):
        return progress.value()
    return progress
