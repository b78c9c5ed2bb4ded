"""The domain's errors carry what they are about and say it in one line."""

from __future__ import annotations

from workqueue.domain import InvalidPayloadError, UnknownKindError


class TestErrorTexts:
    def test_an_unknown_kind_with_no_known_kinds_gives_no_hint(self) -> None:
        error = UnknownKindError("mop")
        assert (str(error), error.kind, error.known) == ("unknown kind 'mop'", "mop", [])

    def test_an_unknown_kind_lists_the_known_ones_sorted(self) -> None:
        error = UnknownKindError("mop", ["sweep", "dust"])
        assert str(error) == "unknown kind 'mop' (known kinds: dust, sweep)"

    def test_an_invalid_payload_keeps_its_kind_and_detail(self) -> None:
        error = InvalidPayloadError("sweep", "rooms: field required")
        assert (error.kind, error.detail) == ("sweep", "rooms: field required")
        assert str(error) == "invalid payload for kind 'sweep': rooms: field required"
