"""A dedup key is checked before anything is written, and a refusal says what is wrong."""

from __future__ import annotations

import pytest

from workqueue.domain import InvalidDedupKeyError, check_dedup_key


class TestDedupKeyMessages:
    def test_a_key_that_is_not_text_names_its_type(self) -> None:
        with pytest.raises(InvalidDedupKeyError) as raised:
            check_dedup_key(42)  # type: ignore[arg-type]
        assert str(raised.value) == "dedup key must be a string, not int"

    @pytest.mark.parametrize("key", ["", "   "])
    def test_an_empty_or_blank_key_says_so(self, key: str) -> None:
        with pytest.raises(InvalidDedupKeyError) as raised:
            check_dedup_key(key)
        assert str(raised.value) == "dedup key must not be empty or blank"

    def test_a_key_holding_a_nul_says_which_character(self) -> None:
        with pytest.raises(InvalidDedupKeyError) as raised:
            check_dedup_key("a\x00b")
        assert str(raised.value) == "dedup key must not contain a NUL character"
