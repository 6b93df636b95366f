"""The items range-based reconciliation sorts, and the sorted set of them with range fingerprints.

A record is reconciled under its *key* (``records.reconcile_key``: a type tag byte, then the
32-byte BLAKE3 id) placed at its *time* (the day the record says it was created). Sorting by
(time, key) -- as negentropy sorts by (timestamp, id) -- keeps the newest records together at the
end of the key space, so the commonest real difference, a node that was away missing what was
made since, is one dense range and costs in proportion to its size rather than a fingerprint path
per missing record. The time is a day because that is the finest time a record signs; within a
day items are ordered by key, so revocations come first among a day's records.

On the wire an *item* is ``time (4 bytes, big-endian) || key (33 bytes)``; byte order of items is
(time, key) order. Sans-I/O: nothing here reads a clock or a socket.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Iterator

import blake3

from commons.core.records import RecordType

# The record types' tags, from the one place they are defined.
TAG_REVOCATION = RecordType.REVOCATION.tag
TAG_VOUCH = RecordType.VOUCH.tag
TAG_LESSON = RecordType.LESSON.tag
TAG_VERIFICATION = RecordType.VERIFICATION.tag

ID_SIZE = 32
KEY_SIZE = 1 + ID_SIZE
TIME_SIZE = 4
ITEM_SIZE = TIME_SIZE + KEY_SIZE
MAX_TIME = (1 << (8 * TIME_SIZE)) - 1
FINGERPRINT_SIZE = 16
FINGERPRINT_DOMAIN = b"commons/reconcile/v2/fingerprint"

_SUM_MODULUS = 1 << (8 * ITEM_SIZE)


class ReconcileError(Exception):
    """Base of the errors reconciliation raises."""


class ReconcileProtocolError(ReconcileError):
    """The peer sent a malformed or impossible message: the peer's fault; drop or penalise it."""


class ReconcileVersionError(ReconcileProtocolError):
    """The peer speaks another version of the reconcile protocol: not malice, an upgrade is due."""


class ReconcileUsageError(ReconcileError):
    """This API was misused by the caller (bad key, bad parameter, call out of order)."""


def make_key(tag: int, record_id: bytes) -> bytes:
    """The reconciliation key of a record: its type tag byte followed by its 32-byte id."""
    if not 0 <= tag <= 0xFF or len(record_id) != ID_SIZE:
        raise ReconcileUsageError(f"a key is one tag byte and a {ID_SIZE}-byte id")
    return bytes([tag]) + bytes(record_id)


def make_item(time: int, key: bytes) -> bytes:
    """The item a key is sorted and fingerprinted as: its time (big-endian) then the key."""
    _check_key(key)
    if type(time) is not int or not 0 <= time <= MAX_TIME:
        raise ReconcileUsageError(f"a reconcile time is an integer day in 0..{MAX_TIME}, got {time!r:.40}")
    return time.to_bytes(TIME_SIZE, "big") + key


def item_key(item: bytes) -> bytes:
    return item[TIME_SIZE:]


def item_time(item: bytes) -> int:
    return int.from_bytes(item[:TIME_SIZE], "big")


def encode_varint(value: int) -> bytes:
    """Unsigned LEB128: seven bits a byte, least significant first, high bit = more follows."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def fingerprint_of_sum(total: int, count: int) -> bytes:
    """Fingerprint of a range from the sum of its items (as big-endian integers) and their count."""
    body = (total % _SUM_MODULUS).to_bytes(ITEM_SIZE, "big") + encode_varint(count)
    return blake3.blake3(FINGERPRINT_DOMAIN + body).digest()[:FINGERPRINT_SIZE]


def fingerprint(items: Iterable[bytes]) -> bytes:
    """The fingerprint of a set of items (reference definition; KeySet computes it from prefix sums).

    The whole 37-byte item is summed, tag included: summing only the id would let the same id under
    two tags cancel out."""
    items = list(items)
    return fingerprint_of_sum(sum(int.from_bytes(i, "big") for i in items), len(items))


def split_bound(below: bytes, above: bytes) -> bytes:
    """The shortest prefix of ``above`` that sorts after ``below`` (a bound between two items)."""
    shared = 0
    for a, b in zip(below, above):
        if a != b:
            break
        shared += 1
    return above[: shared + 1]


def _check_key(key: bytes) -> bytes:
    if not isinstance(key, bytes) or len(key) != KEY_SIZE:
        raise ReconcileUsageError(f"a key must be {KEY_SIZE} bytes, got {key!r:.80}")
    return key


Entry = bytes | tuple[bytes, int]  # a key (at time 0), or (key, time)


def _entry(entry: Entry) -> tuple[bytes, int]:
    return (entry, 0) if isinstance(entry, bytes) else (entry[0], entry[1])


BLOCK = 512  # items a block of the key set holds after a split (it splits beyond twice that)
SUB = 16  # items per partial sum kept within a block (a range's sum adds at most 2 x 15 items)


def _sum_of(block: bytearray, start: int, end: int) -> int:
    """The sum of the items in ``block[start:end]`` (byte offsets at item boundaries), as integers."""
    from_bytes = int.from_bytes
    return sum(from_bytes(block[i : i + ITEM_SIZE], "big") for i in range(start, min(end, len(block)), ITEM_SIZE))


def _bisect(block: bytearray, item: bytes) -> int:
    """Index of the first item of ``block`` at or above ``item`` (which may be a shorter bound)."""
    lo, hi = 0, len(block) // ITEM_SIZE
    while lo < hi:
        mid = (lo + hi) // 2
        at = mid * ITEM_SIZE
        if block[at : at + ITEM_SIZE] < item:
            lo = mid + 1
        else:
            hi = mid
    return lo


class KeySet:
    """A set of keys, each at a time, sorted by (time, key), with range fingerprints in O(log n).

    Membership and withholding are by key; ranges, positions and fingerprints are over items.
    The items are kept in sorted blocks of up to ``2 * BLOCK``, each one ``bytearray`` of the
    items end to end (37 bytes an item, not a bytes object and an integer each: a node holding
    10^6 keys spent 290 bytes a key on those, issue #18), with the sum of its items as integers
    and, made when first asked for after a change, the sums before every ``SUB``-th item: adding
    a key costs an insertion into one block, and a range's sum is two lookups and at most
    ``SUB`` items summed. (Prefix sums over every item, rebuilt after each run of changes, made
    each reconcile message cost O(n) while a node caught up: issue #18.)"""

    def __init__(self, keys: Iterable[Entry] = (), withheld: Iterable[Entry] = ()) -> None:
        self._blocks: list[bytearray] = []  # the items in order, block by block, end to end
        self._sums: list[int] = []  # each block's sum
        self._subs: list[list[int] | None] = []  # each block's sums before every SUB-th item (None: when asked)
        self._maxes: list[bytes] = []  # each block's last item: which block an item belongs in
        self._len = 0
        self._index: tuple[list[int], list[int]] | None = None  # items and sum before each block (lazy)
        self._time: dict[bytes, int] = {}  # key -> its time: membership, and where the key sits
        self._days: dict[int, int] = {}  # one int object per time held (a few hundred days, 10^6 keys)
        self._withheld: set[bytes] = set()
        self.update(keys)
        self.update(withheld, withheld=True)

    def __len__(self) -> int:
        return self._len

    def __contains__(self, key: object) -> bool:
        return key in self._time

    def __iter__(self) -> Iterator[bytes]:
        """The keys, in (time, key) order."""
        return (bytes(block[i : i + KEY_SIZE]) for block in self._blocks
                for i in range(TIME_SIZE, len(block), ITEM_SIZE))

    def time_of(self, key: bytes) -> int | None:
        return self._time.get(key)

    def add(self, key: bytes, withheld: bool = False, *, time: int = 0) -> None:
        """Add a key at a time (a key already held at another time moves there); ``withheld``
        marks one this node holds but will not send."""
        item = make_item(time, key)
        if self._time.get(key) != time:
            self.discard(key, keep_withheld=True)
            self._insert(item)
            self._time[key] = self._days.setdefault(time, time)
        self.set_withheld(key, withheld)

    def update(self, keys: Iterable[Entry], withheld: bool = False) -> None:
        """Add many keys at once (one sort instead of one insertion each); each is a key (time 0)
        or a (key, time) pair."""
        entries = dict(_entry(e) for e in keys)
        moved = [k for k, t in entries.items() if k in self._time and self._time[k] != t]
        for key in moved:
            self.discard(key, keep_withheld=True)
        fresh = [(k, t) for k, t in entries.items() if k not in self._time]
        if fresh:
            items = [make_item(t, k) for k, t in fresh]  # checked before anything is changed
            days = self._days
            self._time.update((k, days.setdefault(t, t)) for k, t in fresh)
            items.extend(bytes(block[i : i + ITEM_SIZE]) for block in self._blocks
                         for i in range(0, len(block), ITEM_SIZE))
            items.sort()
            self._rebuild(items)
        if withheld:
            self._withheld.update(entries)

    def discard(self, key: bytes, *, keep_withheld: bool = False) -> None:
        time = self._time.pop(key, None)
        if time is not None:
            self._remove(make_item(time, key))
            if not keep_withheld:
                self._withheld.discard(key)

    def set_withheld(self, key: bytes, withheld: bool) -> None:
        if key not in self._time:
            raise ReconcileUsageError("only a key in the set can be withheld")
        if withheld:
            self._withheld.add(key)
        else:
            self._withheld.discard(key)

    def is_withheld(self, key: bytes) -> bool:
        return key in self._withheld

    def withheld_count(self) -> int:
        return len(self._withheld)

    def position(self, bound: bytes | None) -> int:
        """Index of the first item at or above ``bound`` (None: past the end)."""
        if bound is None:
            return self._len
        b = bisect.bisect_left(self._maxes, bound)  # every item of the blocks before b is below it
        if b == len(self._blocks):
            return self._len
        return self._located()[0][b] + _bisect(self._blocks[b], bound)

    def items_between(self, start: int, end: int) -> list[bytes]:
        data = self.items_bytes(start, end)
        return [data[i : i + ITEM_SIZE] for i in range(0, len(data), ITEM_SIZE)]

    def items_bytes(self, start: int, end: int) -> bytes:
        """The items at positions ``start .. end - 1``, end to end (37 bytes each)."""
        end = min(end, self._len)
        if start >= end:
            return b""
        b, offset = self._block_of(start)
        out, need = bytearray(), end - start
        while need > 0:
            block = self._blocks[b]
            stop = min(len(block), (offset + need) * ITEM_SIZE)
            out += block[offset * ITEM_SIZE : stop]
            need, b, offset = need - (stop // ITEM_SIZE - offset), b + 1, 0
        return bytes(out)

    def fingerprint_between(self, start: int, end: int) -> bytes:
        return fingerprint_of_sum(self._sum_before(end) - self._sum_before(start), end - start)

    # -- the blocks --------------------------------------------------------------------------------

    def _rebuild(self, items: list[bytes]) -> None:
        self._blocks = [bytearray(b"".join(items[i : i + BLOCK])) for i in range(0, len(items), BLOCK)]
        self._sums = [_sum_of(block, 0, len(block)) for block in self._blocks]
        self._subs = [None] * len(self._blocks)
        self._maxes = [items[min(i + BLOCK, len(items)) - 1] for i in range(0, len(items), BLOCK)]
        self._len, self._index = len(items), None

    def _insert(self, item: bytes) -> None:
        value = int.from_bytes(item, "big")
        if not self._blocks:
            self._blocks, self._sums, self._maxes, self._subs = [bytearray(item)], [value], [item], [None]
        else:
            b = min(bisect.bisect_left(self._maxes, item), len(self._blocks) - 1)
            block = self._blocks[b]
            at = _bisect(block, item) * ITEM_SIZE
            block[at:at] = item
            self._sums[b] += value
            if at + ITEM_SIZE == len(block):
                self._maxes[b] = item
            self._subs[b] = None
            if len(block) > 2 * BLOCK * ITEM_SIZE:  # split in two
                cut = BLOCK * ITEM_SIZE
                upper = block[cut:]
                del block[cut:]
                self._blocks.insert(b + 1, upper)
                self._sums[b] = _sum_of(block, 0, len(block))
                self._sums.insert(b + 1, _sum_of(upper, 0, len(upper)))
                self._maxes[b] = bytes(block[-ITEM_SIZE:])
                self._maxes.insert(b + 1, bytes(upper[-ITEM_SIZE:]))
                self._subs.insert(b + 1, None)
        self._len += 1
        self._index = None

    def _remove(self, item: bytes) -> None:
        b = bisect.bisect_left(self._maxes, item)
        block = self._blocks[b]
        at = _bisect(block, item) * ITEM_SIZE
        del block[at : at + ITEM_SIZE]
        self._sums[b] -= int.from_bytes(item, "big")
        if block:
            self._maxes[b] = bytes(block[-ITEM_SIZE:])
            self._subs[b] = None
        else:
            del self._blocks[b], self._sums[b], self._maxes[b], self._subs[b]
        self._len -= 1
        self._index = None

    def _located(self) -> tuple[list[int], list[int]]:
        """Items before each block, and their sum (one pass over the blocks after a change)."""
        if self._index is None:
            self._index = ([0, *itertools.accumulate(len(b) // ITEM_SIZE for b in self._blocks)],
                           [0, *itertools.accumulate(self._sums)])
        return self._index

    def _block_of(self, pos: int) -> tuple[int, int]:
        starts = self._located()[0]
        b = bisect.bisect_right(starts, pos) - 1
        return b, pos - starts[b]

    def _sum_before(self, pos: int) -> int:
        """The sum of the first ``pos`` items."""
        sums = self._located()[1]
        if pos >= self._len:
            return sums[-1]
        b, offset = self._block_of(pos)
        block = self._blocks[b]
        subs = self._subs[b]
        step = SUB * ITEM_SIZE
        if subs is None:  # made again only for a block that changed: O(BLOCK), not O(n)
            subs = self._subs[b] = [0, *itertools.accumulate(_sum_of(block, i, i + step)
                                                             for i in range(0, len(block), step))]
        whole, rest = divmod(offset, SUB)
        start = whole * step
        return sums[b] + subs[whole] + _sum_of(block, start, start + rest * ITEM_SIZE)
