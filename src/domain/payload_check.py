"""The payload check an enqueue makes before it writes anything."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from domain.errors import InvalidPayloadError
from domain.payload import WorkPayload

__all__ = ["checked_payload_json"]


def checked_payload_json(payload: WorkPayload) -> dict[str, Any]:
    """The JSON object to store for ``payload``, after validating it again.

    A payload built with ``model_construct`` skipped validation, so it is dumped and
    validated afresh against its own model; what gets stored is the validated
    model's JSON.

    :raises InvalidPayloadError: naming the kind and the offending field, if the
        payload cannot be dumped as JSON or does not validate against its model.
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
    return validated.to_json()
