"""Text for people: a count with its noun in the right number, and a line cut at a word, not inside one."""

from __future__ import annotations

ELLIPSIS = "…"
# A cut goes back to the last space only this far: a long path or a number without spaces is cut where it
# must be rather than leaving a stub of a line.
WORD_BACKTRACK = 0.6


def plural(count: int | float, noun: str, many: str | None = None) -> str:
    """``1 generation``, ``2 generations``, ``0 cases``; ``many`` for a noun whose plural is not ``noun + s``."""
    word = noun if count == 1 else (many or f"{noun}s")
    shown = f"{count:g}" if isinstance(count, float) else str(count)
    return f"{shown} {word}"


def cut_at_word(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters: cut at the last space that fits, with an ellipsis
    (inside a long unbroken word only when no space comes late enough)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    room = max(1, limit - len(ELLIPSIS))
    head = flat[: room + 1]
    space = head.rfind(" ")
    head = head[:space] if space >= room * WORD_BACKTRACK else head[:room]
    return head.rstrip(" ,;:—-") + ELLIPSIS
