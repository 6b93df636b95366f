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


class KeySet:
    """A set of keys, each at a time, sorted by (time, key), with O(1) range fingerprints.

    Membership and withholding are by key; ranges, positions and fingerprints are over items.
    Prefix sums of the items (as integers) are rebuilt lazily, once after any run of changes, so
    inserting one key costs a list insertion and the next fingerprint an O(n) C-level pass."""

    def __init__(self, keys: Iterable[Entry] = (), withheld: Iterable[Entry] = ()) -> None:
        self._items: list[bytes] = []
        self._ints: list[int] = []
        self._time: dict[bytes, int] = {}  # key -> its time: membership, and where the key sits
        self._withheld: set[bytes] = set()
        self._prefix: list[int] | None = None
        self.update(keys)
        self.update(withheld, withheld=True)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._time

    def __iter__(self) -> Iterator[bytes]:
        """The keys, in (time, key) order."""
        return (item[TIME_SIZE:] for item in self._items)

    def time_of(self, key: bytes) -> int | None:
        return self._time.get(key)

    def add(self, key: bytes, withheld: bool = False, *, time: int = 0) -> None:
        """Add a key at a time (a key already held at another time moves there); ``withheld``
        marks one this node holds but will not send."""
        item = make_item(time, key)
        if self._time.get(key) != time:
            self.discard(key, keep_withheld=True)
            pos = bisect.bisect_left(self._items, item)
            self._items.insert(pos, item)
            self._ints.insert(pos, int.from_bytes(item, "big"))
            self._time[key] = time
            self._prefix = None
        self.set_withheld(key, withheld)

    def update(self, keys: Iterable[Entry], withheld: bool = False) -> None:
        """Add many keys at once (one sort instead of one insertion each); each is a key (time 0)
        or a (key, time) pair."""
        entries = dict(_entry(e) for e in keys)
        moved = [k for k, t in entries.items() if k in self._time and self._time[k] != t]
        for key in moved:
            self.discard(key, keep_withheld=True)
        fresh = [make_item(t, k) for k, t in entries.items() if k not in self._time]
        if fresh:
            self._time.update((item[TIME_SIZE:], item_time(item)) for item in fresh)
            self._items = sorted(itertools.chain(self._items, fresh))
            self._ints = [int.from_bytes(i, "big") for i in self._items]
            self._prefix = None
        if withheld:
            self._withheld.update(entries)

    def discard(self, key: bytes, *, keep_withheld: bool = False) -> None:
        time = self._time.pop(key, None)
        if time is not None:
            pos = bisect.bisect_left(self._items, make_item(time, key))
            del self._items[pos]
            del self._ints[pos]
            self._prefix = None
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

    def position(self, bound: bytes | None) -> int:
        """Index of the first item at or above ``bound`` (None: past the end)."""
        return len(self._items) if bound is None else bisect.bisect_left(self._items, bound)

    def items_between(self, start: int, end: int) -> list[bytes]:
        return self._items[start:end]

    def fingerprint_between(self, start: int, end: int) -> bytes:
        if self._prefix is None:
            self._prefix = [0, *itertools.accumulate(self._ints)]
        return fingerprint_of_sum(self._prefix[end] - self._prefix[start], end - start)
