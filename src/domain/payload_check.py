"""The payload check an enqueue makes before it writes anything."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from domain.errors import InvalidPayloadError
from domain.payload import WorkPayload
from domain.storable import unstorable_character

__all__ = ["checked_payload_json"]


def checked_payload_json(payload: WorkPayload) -> dict[str, Any]:
    """The JSON object to store for ``payload``, after validating it again.

    A payload built with ``model_construct`` skipped validation, so it is dumped and
    validated afresh against its own model; what gets stored is the validated
    model's JSON.

    :raises InvalidPayloadError: naming the kind and the offending field, if the
        payload cannot be dumped as JSON, does not validate against its model, or
        holds text no store can hold (a NUL character, a lone surrogate).
    """
    kind = payload.kind_name()
    try:
        # warnings=False: a mistyped field is reported below as a validation error,
        # not as a serializer warning.
        dumped = payload.model_dump(mode="json", warnings=False)
    except PydanticSerializationError as error:
        raise InvalidPayloadError(kind, f"not serialisable as JSON: {error}") from error
    try:
        validated = type(payload).model_validate(dumped)
    except ValidationError as error:
        detail = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc']) or '<payload>'}: {problem['msg']}"
            for problem in error.errors()
        )
        raise InvalidPayloadError(kind, detail) from error
    stored = validated.to_json()
    # The payload as given, too: dumping to JSON silently rewrites a dict key that
    # holds a lone surrogate, so only the original still shows it. Most payloads
    # dump alike both ways, and then one walk answers for both.
    given = payload.model_dump(warnings=False)
    problem = _unstorable_text(given, ())
    if problem is None and given != stored:
        problem = _unstorable_text(stored, ())
    if problem is not None:
        raise InvalidPayloadError(kind, problem)
    return stored


def _unstorable_text(value: object, path: tuple[object, ...]) -> str | None:
    """``"<field path>: why"`` for the first text in ``value`` no store can hold, else None.

    Runs for every enqueued payload, so the field path is spelled out only for a
    problem found, never on the way down.
    """
    if isinstance(value, str):
        character = unstorable_character(value)
        return None if character is None else f"{_spelled_path(path)}: text holds {character}"
    if isinstance(value, dict):
        for key, item in value.items():
            character = unstorable_character(key)
            if character is not None:
                return f"{_spelled_path(path)}: a key holds {character}"
            problem = _unstorable_text(item, (*path, key))
            if problem is not None:
                return problem
    if isinstance(value, list | tuple | set | frozenset):
        for index, item in enumerate(value):
            problem = _unstorable_text(item, (*path, index))
            if problem is not None:
                return problem
    return None


def _spelled_path(path: tuple[object, ...]) -> str:
    return ".".join(str(part) for part in path) or "<payload>"
