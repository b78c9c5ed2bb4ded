"""The payload check walks the stored form too whenever it differs from the payload given."""

from __future__ import annotations

from enum import StrEnum

import pytest

from workqueue.domain import InvalidPayloadError, WorkPayload
from workqueue.domain.payload_check import checked_payload_json


class CheckKind(StrEnum):
    RAW = "check_raw"
    TEXT = "check_text"


class RawJob(WorkPayload):
    kind = CheckKind.RAW

    data: bytes


class TextJob(WorkPayload):
    kind = CheckKind.TEXT

    note: str


def test_a_nul_that_appears_only_in_the_stored_form_is_refused() -> None:
    # Given as bytes (no text to check), stored as a JSON string holding a NUL.
    with pytest.raises(InvalidPayloadError) as refused:
        checked_payload_json(RawJob(data=b"a\x00b"))

    assert str(refused.value).endswith("data: text holds a NUL character")


def test_a_payload_that_dumps_alike_both_ways_is_checked_once_and_stored() -> None:
    assert checked_payload_json(RawJob(data=b"ab")) == {"data": "ab"}
    assert checked_payload_json(TextJob(note="fine")) == {"note": "fine"}


def test_a_nul_in_text_given_is_refused_with_its_field() -> None:
    with pytest.raises(InvalidPayloadError) as refused:
        checked_payload_json(TextJob(note="a\x00"))

    assert str(refused.value).endswith("note: text holds a NUL character")
