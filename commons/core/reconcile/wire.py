"""The reconcile message: its ranges, how they are encoded, and the checks on what a peer sent.

Layout (``protocol/reconcile.md``): a version byte, then ranges, each an upper bound, a mode and
the mode's payload. Decoding checks the whole message before anything acts on it, and every
failure is the peer's (``ReconcileProtocolError``); a message of another version is refused with
``ReconcileVersionError``, which names both versions, so an old peer is told to upgrade rather
than misread.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from commons.core.reconcile.keyset import (
    FINGERPRINT_SIZE,
    ITEM_SIZE,
    KEY_SIZE,
    MAX_TIME,
    TIME_SIZE,
    ReconcileProtocolError,
    ReconcileVersionError,
    encode_varint,
)

# 0x01 ordered by key alone, with 33-byte items and 16 KB frames; 0x02 sent every listed item's
# day whole (37 bytes an item) and one IdList per split bucket.
PROTOCOL_VERSION = 0x03
MAX_MESSAGE_SIZE = 65536  # the largest message a receiver accepts, whatever its own limit
MAX_ID_LIST = 64  # the most items one IdList range may carry on the wire
MAX_BOUND_SIZE = 2 + ITEM_SIZE  # varint(shared + 1), varint(rest): one byte each (<= 38), then the rest
MAX_LISTED_ITEM_SIZE = 5 + KEY_SIZE  # an item in an IdList or Diff: varint(day delta) then the key
TAIL_SIZE = 1 + 1 + FINGERPRINT_SIZE  # the closing "everything else" Fingerprint range
INFINITY = None  # the upper bound past every item
# A version 3 message whose first range is a Skip up to this bound (below every item: a day-0
# revocation's item starts with these five bytes and sorts above) offers version 4: a version 3
# peer passes over it, a version 4 peer may answer in version 4 (reconcile.md, Versions).
OFFER_V4 = bytes(5)


class Mode(enum.IntEnum):
    """What a range of a message says about the items between its lower and upper bound."""

    SKIP = 0  # nothing to do here (settled, or fingerprints matched)
    FINGERPRINT = 1  # my fingerprint of the range; answer if yours differs
    ID_LIST = 2  # every item I hold in the range; answer with a Diff naming the items I lack
    DIFF = 3  # answer to your list: records I push, items I name, positions in your list I lack
    PUSH_LIST = 4  # as IdList, but push me the records I lack instead of naming them


LISTS = (Mode.ID_LIST, Mode.PUSH_LIST)  # the two kinds of IdList: answered alike but for the pushes


@dataclass(frozen=True)
class Range:
    lower: bytes
    upper: bytes | None
    mode: Mode
    fingerprint: bytes = b""
    items: tuple[bytes, ...] = ()
    withheld: frozenset[int] = frozenset()
    lacking: tuple[int, ...] = ()  # Diff: positions in the receiver's IdList the sender lacks
    pushed: int = 0  # Diff: how many records the sender pushes whose items fall in the range


def above(item: bytes, bound: bytes | None) -> bool:
    return bound is not None and item >= bound


class Reader:
    """Decodes one message; every failure is the peer's (version 4's reader builds on it: wire4)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def fail(self, why: str) -> ReconcileProtocolError:
        return ReconcileProtocolError(f"malformed reconcile message at byte {self.pos}: {why}")

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise self.fail("truncated")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def varint(self) -> int:
        value = 0
        for i in range(5):  # every varint of this protocol is below 2**35
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                if byte == 0 and i:
                    raise self.fail("varint not in its shortest form")
                return value
        raise self.fail("varint too long")

    def bound(self, lower: bytes) -> bytes | None:
        """A bound: the first ``shared`` bytes of the range's lower bound, then ``rest`` bytes."""
        shared = self.varint()
        if shared == 0:
            return INFINITY
        shared -= 1
        if shared > len(lower):
            raise self.fail("bound shares more bytes than its lower bound has")
        rest = self.varint()
        if shared + rest > ITEM_SIZE:
            raise self.fail(f"bound longer than {ITEM_SIZE} bytes")
        return lower[:shared] + self.take(rest)

    def items(self, count: int, lower: bytes, upper: bytes | None) -> tuple[bytes, ...]:
        if count * (1 + KEY_SIZE) > len(self.data) - self.pos:
            raise self.fail("truncated item list")
        day, out = floor_day(lower), []
        for _ in range(count):
            day += self.varint()
            if day > MAX_TIME:
                raise self.fail("item day beyond the largest day")
            out.append(day.to_bytes(TIME_SIZE, "big") + self.take(KEY_SIZE))
        items = tuple(out)
        if items and (items[0] < lower or above(items[-1], upper)):
            raise self.fail("item outside its range")
        if any(a >= b for a, b in zip(items, items[1:])):
            raise self.fail("items not strictly ascending")
        return items

    def positions(self, limit: int) -> tuple[int, ...]:
        """Ascending positions below ``limit``: the first as is, each next as the gap minus one."""
        count = self.varint()
        if count > limit:
            raise self.fail("more positions than entries")
        out, nxt = [], 0
        for _ in range(count):
            nxt += self.varint()
            if nxt >= limit:
                raise self.fail("position out of range")
            out.append(nxt)
            nxt += 1
        return tuple(out)


def decode_message(data: bytes) -> list[Range]:
    """Parse and check a whole message (before anything acts on it)."""
    if len(data) > MAX_MESSAGE_SIZE:
        raise ReconcileProtocolError(f"reconcile message of {len(data)} bytes exceeds {MAX_MESSAGE_SIZE}")
    if not data:
        raise ReconcileProtocolError("empty reconcile message (no version byte)")
    if data[0] != PROTOCOL_VERSION:
        raise ReconcileVersionError(
            f"peer speaks reconcile protocol version {data[0]}, this node speaks only {PROTOCOL_VERSION}"
            + (": the peer must upgrade" if data[0] < PROTOCOL_VERSION else ": this node must upgrade")
        )
    r = Reader(data)
    r.pos = 1
    ranges: list[Range] = []
    lower: bytes | None = b""
    while r.pos < len(data):
        if lower is None:
            raise r.fail("range after the infinite bound")
        upper = r.bound(lower)
        if upper is not None and upper <= lower:
            raise r.fail("range bounds not increasing")
        try:
            mode = Mode(r.varint())
        except ValueError:
            raise r.fail("unknown range mode") from None
        if mode is Mode.SKIP:
            ranges.append(Range(lower, upper, mode))
        elif mode is Mode.FINGERPRINT:
            ranges.append(Range(lower, upper, mode, fingerprint=r.take(FINGERPRINT_SIZE)))
        else:
            pushed = r.varint() if mode is Mode.DIFF else 0
            count = r.varint()
            if mode in LISTS and count > MAX_ID_LIST:
                raise r.fail(f"IdList of {count} items exceeds {MAX_ID_LIST}")
            items = r.items(count, lower, upper)
            withheld = frozenset(r.positions(count))
            lacking = r.positions(MAX_ID_LIST) if mode is Mode.DIFF else ()
            ranges.append(Range(lower, upper, mode, items=items, withheld=withheld, lacking=lacking, pushed=pushed))
        lower = upper
    return ranges


def floor_day(lower: bytes) -> int:
    """The lowest day an item at or above ``lower`` can have: the first day of a listed range's deltas."""
    return int.from_bytes(lower[:TIME_SIZE].ljust(TIME_SIZE, b"\0"), "big")


def items_bytes(items: list[bytes], day: int) -> bytes:
    """Items as listed: each day as the gap from the one before (the first from ``day``, the
    range's lowest day), then the key. Most gaps in a small range are 0: an item costs 34 bytes."""
    out = bytearray()
    for item in items:
        this = int.from_bytes(item[:TIME_SIZE], "big")
        out += encode_varint(this - day) + item[TIME_SIZE:]
        day = this
    return bytes(out)


def bound_bytes(bound: bytes | None, lower: bytes) -> bytes:
    """A bound as the bytes it shares with the range's lower bound (a count) and the rest: bounds
    of neighbouring buckets share their day and often more, so most cost 3-4 bytes, not 5-7."""
    if bound is None:
        return b"\x00"
    shared = 0
    for a, b in zip(lower, bound):
        if a != b:
            break
        shared += 1
    return encode_varint(shared + 1) + encode_varint(len(bound) - shared) + bound[shared:]


def positions_bytes(positions: list[int]) -> bytes:
    out, nxt = bytearray(encode_varint(len(positions))), 0
    for p in positions:
        out += encode_varint(p - nxt)
        nxt = p + 1
    return bytes(out)


@dataclass
class _PendingList:  # mutable: an IdList still being joined, written out when something else comes
    lower: bytes
    upper: bytes | None
    items: list[bytes]
    withheld: list[int]
    body: bytearray  # the items as listed so far
    day: int  # the day the next item's gap counts from


class Writer:
    """Builds one message; merges runs of Skip ranges, drops a trailing one, and joins IdLists that
    touch into one (up to MAX_ID_LIST items): a dense difference is answered as a few long lists
    rather than one short list, bound and header per split bucket."""

    def __init__(self, limit: int, list_mode: Mode = Mode.ID_LIST) -> None:
        self.out = bytearray([PROTOCOL_VERSION])
        self.limit = limit
        self.list_mode = list_mode  # IdList or PushList: whether the peer is to push what I lack
        self.skip_upper: bytes | None = b""  # b"": no Skip pending
        self.first_open: bytes | None = None  # lower bound of the first range that asks something
        self.asks = False
        self.lists: dict[bytes, list[bytes]] = {}  # the IdLists written, by lower bound
        self._pending: _PendingList | None = None
        self._at: bytes | None = b""  # the upper bound of the last range written: the next one's lower

    def room(self) -> int:
        """Bytes still free for ranges, keeping space for a pending Skip and the closing range."""
        pending = 0 if self._pending is None else _LIST_HEADER + len(self._pending.body) + 3 * len(self._pending.withheld)
        return self.limit - len(self.out) - pending - (MAX_BOUND_SIZE + 1) - TAIL_SIZE

    def skip(self, upper: bytes | None) -> None:
        self._flush()
        self.skip_upper = upper

    def id_list(self, lower: bytes, upper: bytes | None, items: list[bytes], withheld: list[int]) -> None:
        """An IdList range of my items; joined to the IdList just before it if they touch and fit."""
        p = self._pending
        if p is not None and p.upper == lower and len(p.items) + len(items) <= MAX_ID_LIST:
            p.body += items_bytes(items, p.day)
            p.withheld += [len(p.items) + i for i in withheld]
            p.items += items
            p.upper = upper
        else:
            self._flush()
            p = self._pending = _PendingList(lower, upper, list(items), list(withheld), bytearray(), floor_day(lower))
            p.body += items_bytes(items, p.day)
        if items:
            p.day = int.from_bytes(items[-1][:TIME_SIZE], "big")

    def range(self, lower: bytes, upper: bytes | None, mode: Mode, payload: bytes) -> None:
        self._flush()
        if self.skip_upper != b"":
            self.out += bound_bytes(self.skip_upper, self._at or b"") + encode_varint(Mode.SKIP)
            self._at, self.skip_upper = self.skip_upper, b""
        self.out += bound_bytes(upper, self._at or b"") + encode_varint(mode) + payload
        self._at = upper  # None after a range up to infinity, which nothing follows
        if (mode is Mode.FINGERPRINT or mode in LISTS) and not self.asks:
            self.asks, self.first_open = True, lower

    def finish(self) -> bytes:
        self._flush()
        return bytes(self.out)

    def _flush(self) -> None:
        p, self._pending = self._pending, None
        if p is not None:
            self.lists[p.lower] = p.items
            self.range(p.lower, p.upper, self.list_mode, encode_varint(len(p.items)) + p.body + positions_bytes(p.withheld))


_LIST_HEADER = MAX_BOUND_SIZE + 1 + 5 + 5  # bound, mode, count, withheld count
