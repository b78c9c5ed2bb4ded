"""Text a store can hold: no NUL character, no lone surrogate.

PostgreSQL's ``text`` and ``jsonb`` refuse NUL, and a lone surrogate (which a
Python ``str`` may hold, e.g. from undecodable bytes) has no UTF-8 encoding at
all. The in-memory store refuses the same text, so that it never accepts what the
real one cannot write.
"""

from __future__ import annotations

__all__ = ["spelled_out", "unstorable_character"]


def unstorable_character(text: str) -> str | None:
    """What in ``text`` no store can hold, e.g. ``"a NUL character"``; None if nothing."""
    if "\x00" in text:
        return "a NUL character"
    try:
        text.encode()  # UTF-8, where a lone surrogate has no encoding
    except UnicodeEncodeError:
        return "a lone surrogate"
    return None


def spelled_out(text: str) -> str:
    """``text`` with what no store can hold written as escapes: ``\\x00``, ``\\ud800``."""
    return text.replace("\x00", "\\x00").encode(errors="backslashreplace").decode()
