"""Records pushed after a reconciliation Diff: what a receiver was told to expect, and the check.

The side answering an IdList does not list the items the IdList's sender lacks; it says how many
it will push in that range and then sends the records (``protocol/reconcile.md``, Diff). The
receiver cannot know their keys in advance, only where they lie and how many there are, so it
takes a pushed record as if it had asked for it only while an announced range holding the
record's item has room left. Anything else -- outside every announced range, or beyond a range's
count -- is an unrequested record to the caller, exactly as if no Diff had been sent: a hostile
peer that announces pushes gains at most the records it announced, and no more than ``cap`` of
them in all.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from commons.core.reconcile.wire import above


@dataclass(frozen=True)
class Expectation:
    """The peer will push up to ``count`` records whose items lie in ``[lower, upper)``."""

    lower: bytes
    upper: bytes | None  # None: +infinity
    count: int

    def holds(self, item: bytes) -> bool:
        return item >= self.lower and not above(item, self.upper)

    def to_json(self) -> dict[str, object]:
        return {"lower": self.lower.hex(), "upper": None if self.upper is None else self.upper.hex(), "count": self.count}


class PushWindow:
    """The pushes one peer announced and has not delivered yet (mutable: one per peer session).

    ``cap`` bounds the records expected at once, whatever the peer announces: a receiver sets it
    to no more than the keys it would have queued to ask that peer for, so that pushing never lets
    a peer send more unasked than fetching by key would have let it send asked."""

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._open = 0  # records still expected, over every range
        self._lowers: list[bytes] = []  # sorted lower bounds of the ranges with room left
        self._ranges: list[list[object]] = []  # parallel to _lowers: [upper, remaining]

    @property
    def expected(self) -> int:
        return self._open

    def add(self, expectations: list[Expectation]) -> None:
        for e in expectations:
            count = min(e.count, self._cap - self._open)
            if count <= 0:
                return  # full: what is not expected arrives unrequested, or is found again next time
            at = bisect.bisect_right(self._lowers, e.lower)
            self._lowers.insert(at, e.lower)
            self._ranges.insert(at, [e.upper, count])
            self._open += count

    def forgo(self) -> bool:
        """The peer says it will not push a record it announced (it names only the key, so the
        place is taken from the lowest range with room): whether any place was left."""
        if not self._open:
            return False
        self._take(0)
        return True

    def admit(self, item: bytes) -> bool:
        """Whether a pushed record at ``item`` was announced (and uses one of its range's places)."""
        # Ranges of one session are disjoint; ranges of sessions after it may overlap them, so look
        # at every range starting at or below the item, nearest first.
        at = self._holding(item)
        if at is None:
            return False
        self._take(at)
        return True

    def covers(self, item: bytes) -> bool:
        """Whether a record at ``item`` may still come as a push (a range holding it has room left)."""
        return self._holding(item) is not None

    def _holding(self, item: bytes) -> int | None:
        for at in range(bisect.bisect_right(self._lowers, item) - 1, -1, -1):
            if not above(item, self._ranges[at][0]):  # type: ignore[arg-type]
                return at
        return None

    def _take(self, at: int) -> None:
        remaining = self._ranges[at][1]
        if remaining == 1:
            del self._lowers[at], self._ranges[at]
        else:
            self._ranges[at][1] = remaining - 1  # type: ignore[operator]
        self._open -= 1
