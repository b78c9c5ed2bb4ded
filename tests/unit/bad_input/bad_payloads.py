"""Generated bad (and good) enqueues, shared by the in-memory and the PostgreSQL tests.

Import it as ``unit.bad_input.bad_payloads`` (tests/ is on the path through its
conftest), so both test trees use one copy of the model and the strategies.

:class:`Parcel` has a field of every common shape. The strategies make:

- :func:`valid_parcels`: parcels the store can hold, to show what is accepted;
- :func:`mistyped_parcels`: parcels built with ``model_construct`` around a value
  their model refuses, with the name of the field that holds it;
- :func:`parcels_with_unstorable`: valid parcels whose text holds a character
  PostgreSQL text and jsonb cannot (NUL, a lone surrogate), with the field's name;
- :func:`payloads_with_numbers_json_cannot_hold`: a float field (of a parcel built
  with ``model_construct``) or a free-form JSON field (of a :class:`Ledger`) that
  holds NaN, Infinity or -Infinity, with the field's path;
- :data:`UNUSABLE_DEDUP_KEYS` and :data:`USABLE_DEDUP_KEYS`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from workqueue.domain import MAX_DEDUP_KEY_LENGTH, WorkPayload

__all__ = [
    "FIELDS",
    "NOT_FINITE",
    "UNSTORABLE_CHARACTERS",
    "UNUSABLE_DEDUP_KEYS",
    "USABLE_DEDUP_KEYS",
    "Dimensions",
    "Ledger",
    "Parcel",
    "ParcelKind",
    "json_values",
    "mistyped_parcels",
    "parcels_with_unstorable",
    "payloads_with_numbers_json_cannot_hold",
    "storable_text",
    "valid_parcels",
]


class ParcelKind(StrEnum):
    PARCEL = "bad_input_parcel"


class Dimensions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    width: int = 1
    height: int = 1


class Parcel(WorkPayload):
    """A payload with fields of every shape: numbers, text, flags, lists, maps, a literal..."""

    kind = ParcelKind.PARCEL

    count: int = 0
    label: str = ""
    weight: float = 0.0
    fragile: bool = False
    tags: tuple[str, ...] = ()
    size: Literal["small", "large"] = "small"
    notes: dict[str, str] = Field(default_factory=dict)
    dimensions: Dimensions = Dimensions()


FIELDS = tuple(Parcel.model_fields)

# Text PostgreSQL cannot store: jsonb refuses \u0000, text refuses NUL bytes, and a
# lone surrogate has no UTF-8 encoding at all.
UNSTORABLE_CHARACTERS = st.sampled_from(["\x00", "\ud800", "\udfff"]) | st.characters(
    categories=["Cs"]
)


def storable_text(*, min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[str]:
    """Any text a store can hold: every character but NUL and the surrogates."""
    return st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
        min_size=min_size,
        max_size=max_size,
    )


def json_values() -> st.SearchStrategy[Any]:
    """JSON values (finite numbers, storable text), nested a little."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | storable_text(max_size=20)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(storable_text(max_size=5), inner, max_size=3)
        ),
        max_leaves=6,
    )


def valid_parcels() -> st.SearchStrategy[Parcel]:
    return st.builds(
        Parcel,
        count=st.integers(),
        label=storable_text(),
        weight=st.floats(allow_nan=False, allow_infinity=False),
        fragile=st.booleans(),
        tags=st.lists(storable_text(max_size=10), max_size=4).map(tuple),
        size=st.sampled_from(["small", "large"]),
        notes=st.dictionaries(storable_text(max_size=10), storable_text(max_size=10), max_size=3),
        dimensions=st.builds(Dimensions, width=st.integers(), height=st.integers()),
    )


def _refused(field: str, value: Any) -> bool:
    try:
        Parcel.model_validate({field: value})
    except ValidationError:
        return True
    return False


@st.composite
def mistyped_parcels(draw: st.DrawFn) -> tuple[Parcel, str]:
    """A parcel built without validation around one value its model refuses, and its field."""
    field = draw(st.sampled_from(FIELDS))
    value = draw(json_values().filter(lambda value: _refused(field, value)))
    return Parcel.model_construct(**{field: value}), field


@st.composite
def unstorable_text(draw: st.DrawFn) -> str:
    """Storable text with at least one character no store can hold."""
    return (
        draw(storable_text(max_size=10))
        + draw(UNSTORABLE_CHARACTERS)
        + draw(storable_text(max_size=10))
    )


@st.composite
def parcels_with_unstorable(draw: st.DrawFn) -> tuple[Parcel, str]:
    """A valid parcel with unstorable text in one of its text fields, and that field."""
    bad = draw(unstorable_text())
    good = draw(storable_text(max_size=5))
    field, parcel = draw(
        st.sampled_from(
            [
                ("label", Parcel(label=bad)),
                ("tags", Parcel(tags=(good, bad))),
                ("notes", Parcel(notes={good: bad})),
                ("notes", Parcel(notes={bad: good})),
            ]
        )
    )
    return parcel, field


_BLANK = st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x0c\u00a0\u2003\u3000"), max_size=5)

UNUSABLE_DEDUP_KEYS = (
    _BLANK
    | storable_text(min_size=MAX_DEDUP_KEY_LENGTH + 1, max_size=MAX_DEDUP_KEY_LENGTH + 50)
    | unstorable_text()
)
"""Empty, blank, too long, or holding text no store can hold."""

USABLE_DEDUP_KEYS = storable_text(min_size=1, max_size=MAX_DEDUP_KEY_LENGTH).filter(
    lambda key: bool(key.strip())
)
"""Anything else: 1 to 200 storable characters, not all blank."""


class Ledger(WorkPayload):
    """A payload with free-form JSON: nothing in its model looks at the numbers in it."""

    kind = ParcelKind.PARCEL

    entries: dict[str, Any] = Field(default_factory=dict)


NOT_FINITE = (float("nan"), float("inf"), float("-inf"))
"""The floats JSON cannot hold."""


@st.composite
def payloads_with_numbers_json_cannot_hold(draw: st.DrawFn) -> tuple[WorkPayload, str]:
    """A payload holding NaN, Infinity or -Infinity somewhere, and the path to it."""
    number = draw(st.sampled_from(NOT_FINITE))
    key = draw(storable_text(min_size=1, max_size=5).filter(lambda text: "." not in text))
    payload, path = draw(
        st.sampled_from(
            [
                (Parcel.model_construct(weight=number), "weight"),
                (Ledger(entries={key: number}), f"entries.{key}"),
                (Ledger(entries={key: [1, {"deep": number}]}), f"entries.{key}.1.deep"),
            ]
        )
    )
    return payload, path
