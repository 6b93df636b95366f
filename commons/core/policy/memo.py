"""Memory for the policy's pure functions of one text: a door, a render and a night ask the same
question of the same short text several times over (a lesson's line, a step it names).

Only a short text is kept, so the memory stays bounded whatever passes through: a tool's output
or a pasted heredoc is read again each time instead (at most ``ENTRIES`` × ``CHARS`` characters
of texts are held per function, about two megabytes).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

__all__ = ["CHARS", "ENTRIES", "short_texts"]

CHARS = 512  # a record's text is at most 400 bytes: every lesson's fits
ENTRIES = 4096

R = TypeVar("R")


def short_texts(function: Callable[..., R]) -> Callable[..., R]:
    """``function(text, *rest)``, remembered for a ``text`` of at most :data:`CHARS` characters.
    The result's ``cache_info`` is the memory's; ``__wrapped__`` is ``function`` itself."""
    cached = functools.lru_cache(maxsize=ENTRIES)(function)

    @functools.wraps(function)
    def call(text: str, *rest: object) -> R:
        return cached(text, *rest) if len(text) <= CHARS else function(text, *rest)

    call.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return call
