"""The base of every payload model."""

from __future__ import annotations

from enum import Enum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, JsonValue

from workqueue.domain.errors import PayloadDefinitionError

__all__ = ["WorkPayload"]


class WorkPayload(BaseModel):
    """A frozen pydantic model describing one item of work.

    Each concrete subclass declares the kind it belongs to as a class attribute::

        class TokenCleanup(WorkPayload):
            kind = WorkKind.TOKEN_CLEANUP

    The kind is checked when the class is defined: a subclass without one, or with
    one that is not an enum member with a string value, raises
    :class:`~workqueue.domain.errors.PayloadDefinitionError` at once.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ClassVar[Enum]

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
