"""Text no store can hold is refused where it comes in, or spelled out where it must be kept.

PostgreSQL's text and jsonb refuse NUL, and a lone surrogate has no UTF-8 at all.
A payload or a dedup key holding one is bad input (refused, naming the field); an
error message holding one is a fact worth keeping (stored with the character
written as an escape).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from unit.bad_input.bad_payloads import Parcel, ParcelKind, storable_text
from workqueue.application import TRUNCATION_MARKER, bound_error, error_text
from workqueue.domain import (
    InvalidDedupKeyError,
    InvalidPayloadError,
    WorkPayload,
    check_dedup_key,
    checked_payload_json,
    spelled_out,
    unstorable_character,
)


class Bag(WorkPayload):
    kind = ParcelKind.PARCEL

    things: frozenset[str] = frozenset()


@pytest.mark.parametrize(
    ("text", "character"),
    [
        ("", None),
        ("plain text, tabs\tand newlines\n, emoji \U0001f600", None),
        ("nul\x00inside", "a NUL character"),
        ("\ud800", "a lone surrogate"),
        ("undecodable byte \udcff", "a lone surrogate"),
        ("both \ud800 and \x00", "a NUL character"),
    ],
)
def test_unstorable_character_names_what_no_store_can_hold(
    text: str, character: str | None
) -> None:
    assert unstorable_character(text) == character


def test_what_no_store_can_hold_is_spelled_out_as_escapes() -> None:
    assert spelled_out("a\x00b\ud800c\udcff") == "a\\x00b\\ud800c\\udcff"


@given(st.text(alphabet=st.characters() | st.characters(categories=["Cs"])))
def test_spelled_out_text_is_always_storable_and_storable_text_is_left_alone(text: str) -> None:
    assert unstorable_character(spelled_out(text)) is None
    if unstorable_character(text) is None:
        assert spelled_out(text) == text


@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        (Parcel(label="a\x00b"), "label: text holds a NUL character"),
        (Parcel(tags=("fine", "lone \ud800")), "tags.1: text holds a lone surrogate"),
        (Parcel(notes={"key": "\x00"}), "notes.key: text holds a NUL character"),
        (Parcel(notes={"k\x00": "value"}), "notes: a key holds a NUL character"),
        (Parcel(notes={"\udcff": "value"}), "notes: a key holds a lone surrogate"),
        (Bag(things=frozenset({"\x00"})), "things.0: text holds a NUL character"),
    ],
)
def test_a_payload_holding_unstorable_is_refused_naming_the_field(
    payload: WorkPayload, detail: str
) -> None:
    with pytest.raises(InvalidPayloadError) as raised:
        checked_payload_json(payload)

    assert raised.value.detail == detail
    assert str(raised.value) == f"invalid payload for kind 'bad_input_parcel': {detail}"


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("nul\x00", "dedup key must not contain a NUL character"),
        ("surrogate \ud800", "dedup key must not contain a lone surrogate"),
    ],
)
def test_a_dedup_key_holding_unstorable_is_refused_saying_why(key: str, message: str) -> None:
    with pytest.raises(InvalidDedupKeyError, match=f"^{message}$"):
        check_dedup_key(key)


def test_an_error_message_keeps_unstorable_characters_as_escapes() -> None:
    error = RuntimeError("disk\x00full \ud800")

    assert error_text(error, 100) == "RuntimeError: disk\\x00full \\ud800"


def test_escapes_count_towards_the_error_length_limit() -> None:
    cut = bound_error("\x00" * 10, 20)

    assert cut == "\\x00" + "\\" + TRUNCATION_MARKER
    assert len(cut) == 20


@given(
    message=st.text(alphabet=st.characters() | st.characters(categories=["Cs"]), max_size=500),
    limit=st.integers(1, 300),
)
def test_any_error_message_is_stored_bounded_and_storable(message: str, limit: int) -> None:
    text = error_text(ValueError(message), limit)

    assert len(text) <= limit
    assert unstorable_character(text) is None


@given(message=storable_text(min_size=1, max_size=50))
def test_a_short_storable_message_is_stored_as_it_is(message: str) -> None:
    assert error_text(ValueError(message), 4000) == f"ValueError: {message}"
