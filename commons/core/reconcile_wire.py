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

from commons.core.reconcile_keyset import (
    FINGERPRINT_SIZE,
    ITEM_SIZE,
    ReconcileProtocolError,
    ReconcileVersionError,
    encode_varint,
)

PROTOCOL_VERSION = 0x02  # 0x01 ordered by key alone, with 33-byte items and 16 KB frames
MAX_MESSAGE_SIZE = 65536  # the largest message a receiver accepts, whatever its own limit
MAX_ID_LIST = 64  # the most items one IdList range may carry on the wire
MAX_BOUND_SIZE = 2 + ITEM_SIZE  # varint(len + 1) is one byte for len <= 37, then the prefix
TAIL_SIZE = 1 + 1 + FINGERPRINT_SIZE  # the closing "everything else" Fingerprint range
INFINITY = None  # the upper bound past every item


class Mode(enum.IntEnum):
    """What a range of a message says about the items between its lower and upper bound."""

    SKIP = 0  # nothing to do here (settled, or fingerprints matched)
    FINGERPRINT = 1  # my fingerprint of the range; answer if yours differs
    ID_LIST = 2  # every item I hold in the range; answer with a Diff
    DIFF = 3  # answer to your IdList: items I hold that you lack, positions in your list I lack


@dataclass(frozen=True)
class Range:
    lower: bytes
    upper: bytes | None
    mode: Mode
    fingerprint: bytes = b""
    items: tuple[bytes, ...] = ()
    withheld: frozenset[int] = frozenset()
    lacking: tuple[int, ...] = ()  # Diff: positions in the receiver's IdList the sender lacks


def above(item: bytes, bound: bytes | None) -> bool:
    return bound is not None and item >= bound


class _Reader:
    """Decodes one message; every failure is the peer's."""

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

    def bound(self) -> bytes | None:
        size = self.varint()
        if size == 0:
            return INFINITY
        if size - 1 > ITEM_SIZE:
            raise self.fail(f"bound longer than {ITEM_SIZE} bytes")
        return self.take(size - 1)

    def items(self, count: int, lower: bytes, upper: bytes | None) -> tuple[bytes, ...]:
        if count * ITEM_SIZE > len(self.data) - self.pos:
            raise self.fail("truncated item list")
        items = tuple(self.take(ITEM_SIZE) for _ in range(count))
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
    r = _Reader(data)
    r.pos = 1
    ranges: list[Range] = []
    lower: bytes | None = b""
    while r.pos < len(data):
        if lower is None:
            raise r.fail("range after the infinite bound")
        upper = r.bound()
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
            count = r.varint()
            if mode is Mode.ID_LIST and count > MAX_ID_LIST:
                raise r.fail(f"IdList of {count} items exceeds {MAX_ID_LIST}")
            items = r.items(count, lower, upper)
            withheld = frozenset(r.positions(count))
            lacking = r.positions(MAX_ID_LIST) if mode is Mode.DIFF else ()
            ranges.append(Range(lower, upper, mode, items=items, withheld=withheld, lacking=lacking))
        lower = upper
    return ranges


def bound_bytes(bound: bytes | None) -> bytes:
    return b"\x00" if bound is None else encode_varint(len(bound) + 1) + bound


def positions_bytes(positions: list[int]) -> bytes:
    out, nxt = bytearray(encode_varint(len(positions))), 0
    for p in positions:
        out += encode_varint(p - nxt)
        nxt = p + 1
    return bytes(out)


class Writer:
    """Builds one message; merges runs of Skip ranges and drops a trailing one."""

    def __init__(self, limit: int) -> None:
        self.out = bytearray([PROTOCOL_VERSION])
        self.limit = limit
        self.skip_upper: bytes | None = b""  # b"": no Skip pending
        self.first_open: bytes | None = None  # lower bound of the first range that asks something
        self.asks = False

    def room(self) -> int:
        """Bytes still free for ranges, keeping space for a pending Skip and the closing range."""
        return self.limit - len(self.out) - (MAX_BOUND_SIZE + 1) - TAIL_SIZE

    def skip(self, upper: bytes | None) -> None:
        self.skip_upper = upper

    def range(self, lower: bytes, upper: bytes | None, mode: Mode, payload: bytes) -> None:
        if self.skip_upper != b"":
            self.out += bound_bytes(self.skip_upper) + encode_varint(Mode.SKIP)
            self.skip_upper = b""
        self.out += bound_bytes(upper) + encode_varint(mode) + payload
        if mode in (Mode.FINGERPRINT, Mode.ID_LIST) and not self.asks:
            self.asks, self.first_open = True, lower
