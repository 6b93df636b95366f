"""Keeping Python's cycle collector off the records a daemon holds.

A daemon holds a few objects per record for as long as it runs (trust's facts, the key set's
items, the gossip table's keys): 10^6 records are millions of objects, none of them garbage.
The collector's full collections walk every tracked object each time (about once per quarter
that the heap grows), so a node catching up spent part of every record re-walking all it held
before. ``gc.freeze()`` moves what is tracked now to a generation the collector never walks.

Objects frozen that later become garbage in a cycle (a closed session's objects) are not
collected while frozen, so the freezer thaws everything now and then (``THAW_SECONDS``) and lets
the next full collection take them. What is frozen is collected first (``gc.collect()`` walks
only what is not frozen), so no garbage of the moment is kept.

The C heap is kept from holding on to what big transients freed (``set_malloc_thresholds``,
``trim``), and ``memory_note`` tells a benchmark what each start-up step left held.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

FREEZE_AFTER = 10_000  # records taken in since the last freeze that make another worth it
THAW_SECONDS = 3600.0  # how often what was frozen is handed back to the collector


def _libc():
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


_LIBC = _libc()
# glibc's ``malloc_trim``, or None elsewhere. Bodies of 600 bytes and more are the C allocator's,
# not Python's: a store read at start-up leaves their freed memory in the heap, counted in the RSS
# (measured: 183 -> 144 MB over 10^5 records held) until it is trimmed.
_TRIM = getattr(_LIBC, "malloc_trim", None)

# glibc's mallopt parameters (malloc.h): setting one also switches its dynamic thresholds off.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
# (mmap, trim) thresholds in bytes. Starting, blocks of 256 KB and more are mapped on their own and
# unmapped when freed, and free memory at the top of the heap beyond 1 MB is handed back at once.
# Running, where glibc's dynamic thresholds end up after the first big block freed (32 MB, twice
# that): mapping and unmapping every block of 256 KB cost a node catching up 7-10% more CPU.
START_UP_THRESHOLDS = (256 * 1024, 1024 * 1024)
RUNNING_THRESHOLDS = (32 * 1024 * 1024, 64 * 1024 * 1024)


def set_malloc_thresholds(thresholds: tuple[int, int]) -> bool:
    """Set the C heap's (mmap, trim) thresholds (glibc; False elsewhere).

    By default glibc raises its mmap threshold to the size of the last big block freed and its
    trim threshold to twice that, so after the first big transient up to 64 MB freed at the top
    of each arena stays counted in the RSS. Start-up's big transients are tables of sets and
    lists over every record held: measured at 10^6 held, they left 41 MB free but counted at the
    peak of start-up; with ``START_UP_THRESHOLDS`` they are handed back as they are freed."""
    mallopt = getattr(_LIBC, "mallopt", None)
    if mallopt is None:
        return False
    mmap, trim_at = thresholds
    return bool(mallopt(_M_MMAP_THRESHOLD, mmap)) and bool(mallopt(_M_TRIM_THRESHOLD, trim_at))


TRACE_ENV = "COMMONS_TRACE_MEMORY"  # set (to anything): the daemon logs its memory at each start-up step


def trim() -> None:
    """Hand the C heap's free pages back to the system: after a big transient was let go (the
    store read a chunk at a time at start-up), they would stay counted in the RSS until reused."""
    if _TRIM is not None:
        _TRIM(0)


@dataclass(frozen=True)
class MemoryNote:
    """The process's memory and CPU time when a step ended: RSS now, the peak so far (VmHWM)."""

    step: str
    rss_mb: float
    peak_mb: float
    cpu_s: float

    def __str__(self) -> str:
        return f"{self.step}: RSS {self.rss_mb:.0f} MB, peak {self.peak_mb:.0f} MB, {self.cpu_s:.1f} CPU-s"


def memory_note(step: str) -> MemoryNote | None:
    """What the process holds after ``step``, when ``COMMONS_TRACE_MEMORY`` is set (else None):
    how a benchmark finds which start-up step makes the peak (Linux: read from /proc)."""
    if not os.environ.get(TRACE_ENV):
        return None
    try:
        rss, peak = resident_mb()
    except OSError:
        return None
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return MemoryNote(step, rss, peak, usage.ru_utime + usage.ru_stime)


def resident_mb(pid: int | str = "self") -> tuple[float, float]:
    """A process's resident memory now and its peak (VmRSS, VmHWM) in MB, from /proc (Linux; NaN
    for a field the kernel does not give). OSError when the process or /proc is not there."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) / 1024
    return found.get("VmRSS", float("nan")), found.get("VmHWM", float("nan"))


@dataclass
class HeapFreezer:
    """Freezes the heap after start-up and after every ``freeze_after`` records taken in."""

    freeze_after: int = FREEZE_AFTER
    thaw_seconds: float = THAW_SECONDS
    _since: int = 0
    _thawed_at: float | None = None
    freezes: int = 0

    def freeze(self, now: float) -> None:
        """Collect what is garbage now, then freeze the rest (start-up, a big intake)."""
        gc.collect()
        gc.freeze()
        trim()  # hand what the intake freed back to the system
        self._since = 0
        self.freezes += 1
        if self._thawed_at is None:
            self._thawed_at = now

    def took_in(self, count: int, now: float) -> None:
        """``count`` records were taken in: freeze once enough arrived since the last time."""
        self._since += count
        if self._thawed_at is not None and now - self._thawed_at >= self.thaw_seconds:
            gc.unfreeze()  # the next full collection walks everything once, and finds stale cycles
            self._thawed_at = now
        if self._since >= self.freeze_after:
            self.freeze(now)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off for a while (a batch of records taken in and judged): what intake
    makes then (records, facts, verdicts, states) mostly lives as long as the node, so the
    collections its allocations set off walk survivors and find little (measured: 0.44 of a
    catching-up node's 8 CPU-s at 10^5 records, 0.13 with this around each batch). Collection is
    put off, not skipped: the next allocation after it collects, and ``HeapFreezer`` collects
    before it freezes. Other tasks run meanwhile when the caller awaits: they are put off too."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
