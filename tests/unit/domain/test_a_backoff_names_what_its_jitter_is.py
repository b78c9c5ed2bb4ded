"""A backoff's jitter that is not a number is refused, naming the type it was given."""

from __future__ import annotations

import pytest

from workqueue.domain import Backoff, InvalidPolicyError


@pytest.mark.parametrize(
    ("jitter", "shown"), [("0.25", "str"), (None, "NoneType"), (False, "bool")]
)
def test_a_jitter_that_is_not_a_number_is_refused_naming_its_type(
    jitter: object, shown: str
) -> None:
    with pytest.raises(InvalidPolicyError) as raised:
        Backoff(jitter=jitter)  # type: ignore[arg-type]

    assert str(raised.value) == f"backoff jitter must be a number, not {shown}"
