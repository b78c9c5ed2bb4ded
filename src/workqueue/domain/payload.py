"""The base of every payload model."""

from __future__ import annotations

from enum import Enum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, JsonValue

from workqueue.domain.errors import PayloadDefinitionError

__all__ = ["DEFAULT_MAX_PAYLOAD_BYTES", "WorkPayload"]

DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576
"""The largest payload an enqueue takes unless its model says otherwise: 1 MiB of JSON."""


class WorkPayload(BaseModel):
    """A frozen pydantic model describing one item of work.

    Each concrete subclass declares the kind it belongs to as a class attribute::

        class TokenCleanup(WorkPayload):
            kind = WorkKind.TOKEN_CLEANUP

    A float field takes finite numbers only: NaN and Infinity (and a number too
    large for a float, such as ``1e400`` in JSON) are refused, as JSON cannot hold
    them.

    The kind is checked when the class is defined: a subclass without one, or with
    one that is not an enum member with a string value, raises
    :class:`~workqueue.domain.errors.PayloadDefinitionError` at once.
    """

    # JSON has no NaN or Infinity (PostgreSQL's jsonb refuses them): a float field
    # refuses them when the payload is built, as it refuses a missing field.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    kind: ClassVar[Enum]

    max_payload_bytes: ClassVar[int] = DEFAULT_MAX_PAYLOAD_BYTES
    """The largest payload of this model an enqueue takes, in bytes of its stored JSON
    (UTF-8); a larger one is refused with
    :class:`~workqueue.domain.errors.InvalidPayloadError` and nothing is written. A
    model may set its own: work that needs more data than that is better passed by
    reference (a row id, an object's key)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        kind = getattr(cls, "kind", None)
        if kind is None:
            raise PayloadDefinitionError(
                f"{cls.__qualname__} must declare its kind as a class attribute, "
                "e.g. `kind = WorkKind.TOKEN_CLEANUP`"
            )
        if not isinstance(kind, Enum) or not isinstance(kind.value, str):
            raise PayloadDefinitionError(
                f"{cls.__qualname__}.kind must be a member of a kind enum with string "
                f"values, not {kind!r}"
            )

    @classmethod
    def kind_name(cls) -> str:
        """The text stored in ``work_items.kind`` for this payload's kind."""
        value: str = cls.kind.value
        return value

    def to_json(self) -> dict[str, JsonValue]:
        """The JSON object stored in ``work_items.payload``."""
        return self.model_dump(mode="json")
