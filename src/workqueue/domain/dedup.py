"""Dedup keys: what makes two enqueues of one kind the same queued work."""

from __future__ import annotations

from workqueue.domain.errors import InvalidDedupKeyError
from workqueue.domain.storable import unstorable_character

__all__ = ["MAX_DEDUP_KEY_LENGTH", "check_dedup_key"]

MAX_DEDUP_KEY_LENGTH = 200


def check_dedup_key(dedup_key: str | None) -> str | None:
    """Return ``dedup_key`` unchanged if it is usable.

    :raises InvalidDedupKeyError: if it is not a string, is empty or blank, is longer
        than :data:`MAX_DEDUP_KEY_LENGTH` characters, or contains a NUL character or
        a lone surrogate (which PostgreSQL text cannot hold).
    """
    if dedup_key is None:
        return None
    if not isinstance(dedup_key, str):
        raise InvalidDedupKeyError(f"dedup key must be a string, not {type(dedup_key).__name__}")
    if not dedup_key.strip():
        raise InvalidDedupKeyError("dedup key must not be empty or blank")
    if len(dedup_key) > MAX_DEDUP_KEY_LENGTH:
        raise InvalidDedupKeyError(
            f"dedup key is {len(dedup_key)} characters long; the limit is {MAX_DEDUP_KEY_LENGTH}"
        )
    character = unstorable_character(dedup_key)
    if character is not None:
        raise InvalidDedupKeyError(f"dedup key must not contain {character}")
    return dedup_key
