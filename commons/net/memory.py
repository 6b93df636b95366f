"""Giving freed memory back to the system after a peer held a lot of it.

A session may hold up to ``max_queued_wants`` announced keys; when it ends the core frees them
all, but glibc keeps most freed heap memory for reuse (its mmap threshold rises as large tables
are freed, so later large tables come from the heap too), and the daemon's RSS stays at the flood's
peak for ever. ``malloc_trim(0)`` hands the free pages back. Where the C library has no such call
(musl, macOS), :func:`trim` does nothing: RSS then stays high but is reused, never grows further.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def _malloc_trim():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return libc.malloc_trim if libc is not None else None
    except (OSError, AttributeError):  # not glibc
        return None


def trim() -> bool:
    """Return free heap pages to the system; False where the C library cannot."""
    function = _malloc_trim()
    if function is None:
        return False
    function(0)
    return True
