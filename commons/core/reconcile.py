"""Range-based set reconciliation of record keys (anti-entropy between two commons nodes).

Two nodes each hold a set of 33-byte keys (a record-type tag, then a 32-byte BLAKE3 id) and want to
learn which keys the other lacks, at a cost that grows with the difference and not with the store.
This follows Aljoscha Meyer's range-based set reconciliation and the negentropy wire protocol:
both sides sort their keys, exchange fingerprints of key ranges, split ranges whose fingerprints
differ, and swap explicit key lists once a range is small. The full specification, with the byte
layout, is ``protocol/reconcile.md``; vectors are in ``protocol/vectors/reconcile.json``.

Where this differs from negentropy, and why:

* Both sides learn the difference. The side answering a key list replies with a ``Diff`` -- the
  keys it holds that the peer lacks, and the *positions* in the peer's list of the keys it lacks --
  instead of its own full list, so both sides end with ``have``/``need`` and the answer costs about
  one key per difference.
* A message that asks nothing (only Skip / Diff ranges) is final: its receiver does not answer.
* Differences are delivered in key order across the whole session: a key is released to the caller
  only once every range below it is settled. Revocations (tag 0x00) sort first, so a node learns of
  a revocation before it learns of the lesson it revokes.
* A key can be *withheld* ("I hold it but will not send it": refused by policy, a death
  certificate). It counts like any other key -- so the peer never offers it to us -- and when the
  peer lacks it the peer is told so and reports it under ``withheld``, not ``need``.

Sans-I/O: bytes in, bytes out; nothing here reads a clock or a socket.
"""

from __future__ import annotations

import bisect
import enum
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import blake3

from commons.core.records import RecordType

# The record types' tags, from the one place they are defined (revocations sort first).
TAG_REVOCATION = RecordType.REVOCATION.tag
TAG_VOUCH = RecordType.VOUCH.tag
TAG_LESSON = RecordType.LESSON.tag
TAG_VERIFICATION = RecordType.VERIFICATION.tag

KEY_SIZE = 33
ID_SIZE = 32
FINGERPRINT_SIZE = 16
PROTOCOL_VERSION = 0x01
FINGERPRINT_DOMAIN = b"commons/reconcile/v1/fingerprint"

DEFAULT_BRANCHING = 16
DEFAULT_ID_LIST_THRESHOLD = 8
DEFAULT_FRAME_SIZE_LIMIT = 16384
MIN_FRAME_SIZE_LIMIT = 2048
MAX_MESSAGE_SIZE = 65536  # the largest message a receiver accepts, whatever its own limit
MAX_ID_LIST = 64  # the most keys one IdList range may carry on the wire

_SUM_MODULUS = 1 << (8 * KEY_SIZE)
_MAX_BOUND_SIZE = 2 + KEY_SIZE  # varint(len + 1) is one byte for len <= 33, then the prefix
_TAIL_SIZE = 1 + 1 + FINGERPRINT_SIZE  # the closing "everything else" Fingerprint range
_INFINITY = None  # the upper bound past every key


class ReconcileError(Exception):
    """Base of the errors this module raises."""


class ReconcileProtocolError(ReconcileError):
    """The peer sent a malformed or impossible message: the peer's fault; drop or penalise it."""


class ReconcileUsageError(ReconcileError):
    """This API was misused by the caller (bad key, bad parameter, call out of order)."""


class Mode(enum.IntEnum):
    """What a range of a message says about the keys between its lower and upper bound."""

    SKIP = 0  # nothing to do here (settled, or fingerprints matched)
    FINGERPRINT = 1  # my fingerprint of the range; answer if yours differs
    ID_LIST = 2  # every key I hold in the range; answer with a Diff
    DIFF = 3  # answer to your IdList: keys I hold that you lack, positions in your list I lack


def make_key(tag: int, record_id: bytes) -> bytes:
    """The reconciliation key of a record: its type tag byte followed by its 32-byte id."""
    if not 0 <= tag <= 0xFF or len(record_id) != ID_SIZE:
        raise ReconcileUsageError(f"a key is one tag byte and a {ID_SIZE}-byte id")
    return bytes([tag]) + bytes(record_id)


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
    """Fingerprint of a range from the sum of its keys (as big-endian integers) and their count."""
    body = (total % _SUM_MODULUS).to_bytes(KEY_SIZE, "big") + encode_varint(count)
    return blake3.blake3(FINGERPRINT_DOMAIN + body).digest()[:FINGERPRINT_SIZE]


def fingerprint(keys: Iterable[bytes]) -> bytes:
    """The fingerprint of a set of keys (reference definition; KeySet computes it from prefix sums).

    The whole 33-byte key is summed, tag included: summing only the id would let the same id under
    two tags cancel out."""
    keys = list(keys)
    return fingerprint_of_sum(sum(int.from_bytes(k, "big") for k in keys), len(keys))


def split_bound(below: bytes, above: bytes) -> bytes:
    """The shortest prefix of ``above`` that sorts after ``below`` (a bound between two keys)."""
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


class KeySet:
    """A sorted set of keys with O(1) range fingerprints.

    Prefix sums of the keys (as integers) are rebuilt lazily, once after any run of changes, so
    inserting one key costs a list insertion and the next fingerprint an O(n) C-level pass."""

    def __init__(self, keys: Iterable[bytes] = (), withheld: Iterable[bytes] = ()) -> None:
        self._keys: list[bytes] = []
        self._ints: list[int] = []
        self._members: set[bytes] = set()
        self._withheld: set[bytes] = set()
        self._prefix: list[int] | None = None
        self.update(keys)
        self.update(withheld, withheld=True)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._members

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._keys)

    def add(self, key: bytes, withheld: bool = False) -> None:
        """Add a key; ``withheld`` marks one this node holds but will not send."""
        _check_key(key)
        if key not in self._members:
            pos = bisect.bisect_left(self._keys, key)
            self._keys.insert(pos, key)
            self._ints.insert(pos, int.from_bytes(key, "big"))
            self._members.add(key)
            self._prefix = None
        self.set_withheld(key, withheld)

    def update(self, keys: Iterable[bytes], withheld: bool = False) -> None:
        """Add many keys at once (one sort instead of one insertion each)."""
        keys = [_check_key(k) for k in keys]
        fresh = [k for k in set(keys) if k not in self._members]
        if fresh:
            self._members.update(fresh)
            self._keys = sorted(itertools.chain(self._keys, fresh))
            self._ints = [int.from_bytes(k, "big") for k in self._keys]
            self._prefix = None
        if withheld:
            self._withheld.update(keys)

    def discard(self, key: bytes) -> None:
        if key in self._members:
            pos = bisect.bisect_left(self._keys, key)
            del self._keys[pos]
            del self._ints[pos]
            self._members.discard(key)
            self._withheld.discard(key)
            self._prefix = None

    def set_withheld(self, key: bytes, withheld: bool) -> None:
        if key not in self._members:
            raise ReconcileUsageError("only a key in the set can be withheld")
        if withheld:
            self._withheld.add(key)
        else:
            self._withheld.discard(key)

    def is_withheld(self, key: bytes) -> bool:
        return key in self._withheld

    def position(self, bound: bytes | None) -> int:
        """Index of the first key at or above ``bound`` (None: past the end)."""
        return len(self._keys) if bound is None else bisect.bisect_left(self._keys, bound)

    def keys_between(self, start: int, end: int) -> list[bytes]:
        return self._keys[start:end]

    def fingerprint_between(self, start: int, end: int) -> bytes:
        if self._prefix is None:
            self._prefix = [0, *itertools.accumulate(self._ints)]
        return fingerprint_of_sum(self._prefix[end] - self._prefix[start], end - start)


@dataclass(frozen=True)
class ReconcileStep:
    """What one incoming message taught, and what to answer.

    ``have``: keys I hold and will send that the peer lacks. ``need``: keys the peer holds and will
    send that I lack (fetch them). ``withheld``: keys the peer holds but will not send, that I lack
    (known ids: do not fetch them). Each list is in key order, and no key is reported twice in a
    session. ``reply`` is None when there is nothing to send; ``done`` is True once the session is
    over (a final reply still has to be sent)."""

    reply: bytes | None
    have: list[bytes] = field(default_factory=list)
    need: list[bytes] = field(default_factory=list)
    withheld: list[bytes] = field(default_factory=list)
    done: bool = False


@dataclass(frozen=True)
class ReconcileStatistics:
    messages_sent: int
    messages_received: int
    bytes_sent: int
    bytes_received: int


class _State(enum.Enum):
    FRESH = "fresh"  # nothing sent or received yet; either role may start
    AWAITING_REPLY = "awaiting_reply"  # we sent a message that asks something
    DONE = "done"  # a final message went one way or the other


@dataclass(frozen=True)
class _Range:
    lower: bytes
    upper: bytes | None
    mode: Mode
    fingerprint: bytes = b""
    keys: tuple[bytes, ...] = ()
    withheld: frozenset[int] = frozenset()
    lacking: tuple[int, ...] = ()  # Diff: positions in the receiver's IdList the sender lacks


def _above(key: bytes, bound: bytes | None) -> bool:
    return bound is not None and key >= bound


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
            return _INFINITY
        if size - 1 > KEY_SIZE:
            raise self.fail(f"bound longer than {KEY_SIZE} bytes")
        return self.take(size - 1)

    def keys(self, count: int, lower: bytes, upper: bytes | None) -> tuple[bytes, ...]:
        if count * KEY_SIZE > len(self.data) - self.pos:
            raise self.fail("truncated key list")
        keys = tuple(self.take(KEY_SIZE) for _ in range(count))
        if keys and (keys[0] < lower or _above(keys[-1], upper)):
            raise self.fail("key outside its range")
        if any(a >= b for a, b in zip(keys, keys[1:])):
            raise self.fail("keys not strictly ascending")
        return keys

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


def decode_message(data: bytes) -> list[_Range]:
    """Parse and check a whole message (before anything acts on it)."""
    if len(data) > MAX_MESSAGE_SIZE:
        raise ReconcileProtocolError(f"reconcile message of {len(data)} bytes exceeds {MAX_MESSAGE_SIZE}")
    r = _Reader(data)
    if not data or r.take(1)[0] != PROTOCOL_VERSION:
        raise r.fail(f"not protocol version {PROTOCOL_VERSION}")
    ranges: list[_Range] = []
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
            ranges.append(_Range(lower, upper, mode))
        elif mode is Mode.FINGERPRINT:
            ranges.append(_Range(lower, upper, mode, fingerprint=r.take(FINGERPRINT_SIZE)))
        else:
            count = r.varint()
            if mode is Mode.ID_LIST and count > MAX_ID_LIST:
                raise r.fail(f"IdList of {count} keys exceeds {MAX_ID_LIST}")
            keys = r.keys(count, lower, upper)
            withheld = frozenset(r.positions(count))
            lacking = r.positions(MAX_ID_LIST) if mode is Mode.DIFF else ()
            ranges.append(_Range(lower, upper, mode, keys=keys, withheld=withheld, lacking=lacking))
        lower = upper
    return ranges


def _bound_bytes(bound: bytes | None) -> bytes:
    return b"\x00" if bound is None else encode_varint(len(bound) + 1) + bound


def _positions_bytes(positions: list[int]) -> bytes:
    out, nxt = bytearray(encode_varint(len(positions))), 0
    for p in positions:
        out += encode_varint(p - nxt)
        nxt = p + 1
    return bytes(out)


class _Writer:
    """Builds one message; merges runs of Skip ranges and drops a trailing one."""

    def __init__(self, limit: int) -> None:
        self.out = bytearray([PROTOCOL_VERSION])
        self.limit = limit
        self.skip_upper: bytes | None = b""  # b"": no Skip pending
        self.first_open: bytes | None = None  # lower bound of the first range that asks something
        self.asks = False

    def room(self) -> int:
        """Bytes still free for ranges, keeping space for a pending Skip and the closing range."""
        return self.limit - len(self.out) - (_MAX_BOUND_SIZE + 1) - _TAIL_SIZE

    def skip(self, upper: bytes | None) -> None:
        self.skip_upper = upper

    def range(self, lower: bytes, upper: bytes | None, mode: Mode, payload: bytes) -> None:
        if self.skip_upper != b"":
            self.out += _bound_bytes(self.skip_upper) + encode_varint(Mode.SKIP)
            self.skip_upper = b""
        self.out += _bound_bytes(upper) + encode_varint(mode) + payload
        if mode in (Mode.FINGERPRINT, Mode.ID_LIST) and not self.asks:
            self.asks, self.first_open = True, lower


class Reconciler:
    """One reconciliation session over a KeySet, in either role (the first call decides).

    The initiator calls ``initiate()`` and sends its result; each side then feeds every message it
    receives to ``reconcile()`` and sends back ``step.reply`` while it is not None. The key set
    should not change during a session (the key-order guarantee assumes it)."""

    def __init__(
        self,
        keyset: KeySet,
        frame_size_limit: int = DEFAULT_FRAME_SIZE_LIMIT,
        branching: int = DEFAULT_BRANCHING,
        id_list_threshold: int = DEFAULT_ID_LIST_THRESHOLD,
    ) -> None:
        if not 2 <= branching <= 64:
            raise ReconcileUsageError("branching must be between 2 and 64")
        if not 1 <= id_list_threshold <= MAX_ID_LIST:
            raise ReconcileUsageError(f"id_list_threshold must be between 1 and {MAX_ID_LIST}")
        if not MIN_FRAME_SIZE_LIMIT <= frame_size_limit <= MAX_MESSAGE_SIZE:
            raise ReconcileUsageError(
                f"frame_size_limit must be between {MIN_FRAME_SIZE_LIMIT} and {MAX_MESSAGE_SIZE}"
            )
        self._keys = keyset
        self._limit = frame_size_limit
        self._branching = branching
        self._threshold = id_list_threshold
        # Room one range may need: a split, an IdList, or the smallest useful Diff (one key and a
        # position for each key of the largest IdList a peer may send).
        self._reserve = max(
            branching * (_MAX_BOUND_SIZE + 1 + FINGERPRINT_SIZE),
            _MAX_BOUND_SIZE + 6 + id_list_threshold * (KEY_SIZE + 2),
            _MAX_BOUND_SIZE + 16 + (KEY_SIZE + 2) + 2 * MAX_ID_LIST,
        )
        if self._reserve > frame_size_limit - 1 - (_MAX_BOUND_SIZE + 1) - _TAIL_SIZE:
            raise ReconcileUsageError("frame_size_limit too small for this branching and id_list_threshold")
        self._state = _State.FRESH
        self._sent_lists: dict[bytes, list[bytes]] = {}  # IdLists of my last message, by lower bound
        self._held: list[tuple[bytes, str]] = []  # learned differences not yet released, (key, list)
        self._reported: set[bytes] = set()
        self._stats = [0, 0, 0, 0]

    @property
    def done(self) -> bool:
        return self._state is _State.DONE

    def statistics(self) -> ReconcileStatistics:
        return ReconcileStatistics(*self._stats)

    def initiate(self) -> bytes:
        """The initiator's first message: fingerprints of the whole set, or all of it if small."""
        if self._state is not _State.FRESH:
            raise ReconcileUsageError("initiate() starts a session and may only be called first")
        writer = _Writer(self._limit)
        self._split(writer, b"", _INFINITY, 0, len(self._keys))
        self._state = _State.AWAITING_REPLY
        return self._sent(bytes(writer.out))

    def reconcile(self, message: bytes) -> ReconcileStep:
        """Take the peer's message; return what it taught and the reply to send (if any)."""
        if self._state is _State.DONE:
            raise ReconcileUsageError("this reconciliation session is over")
        ranges = decode_message(message)
        sent_lists, self._sent_lists = self._sent_lists, {}
        for rng in ranges:  # refuse a bad Diff before acting on anything
            if rng.mode is Mode.DIFF:
                mine = sent_lists.get(rng.lower)
                if mine is None:
                    raise ReconcileProtocolError("Diff answers an IdList that was not sent")
                if any(p >= len(mine) or _above(mine[p], rng.upper) for p in rng.lacking):
                    raise ReconcileProtocolError("Diff position outside the IdList it answers")
        self._stats[1] += 1
        self._stats[3] += len(message)
        asked = any(r.mode in (Mode.FINGERPRINT, Mode.ID_LIST) for r in ranges)
        writer = _Writer(self._limit)
        for rng in ranges:
            if rng.mode is Mode.DIFF:
                self._take_diff(rng, sent_lists[rng.lower])
                writer.skip(rng.upper)
                continue
            start, end = self._keys.position(rng.lower), self._keys.position(rng.upper)
            if rng.mode is Mode.SKIP or (
                rng.mode is Mode.FINGERPRINT and rng.fingerprint == self._keys.fingerprint_between(start, end)
            ):
                writer.skip(rng.upper)
                continue
            if writer.room() < self._reserve:
                self._close(writer, rng.lower)
                break
            if rng.mode is Mode.FINGERPRINT:
                self._split(writer, rng.lower, rng.upper, start, end)
            else:
                cut = self._answer_id_list(writer, rng, self._keys.keys_between(start, end))
                if cut is not None:
                    self._close(writer, cut)
                    break
        if not asked:  # a final message: nothing to answer
            self._state = _State.DONE
            return self._release(None, _INFINITY)
        reply = self._sent(bytes(writer.out))
        self._state = _State.AWAITING_REPLY if writer.asks else _State.DONE
        return self._release(reply, writer.first_open if writer.asks else _INFINITY)

    # -- building ranges -------------------------------------------------------------------------

    def _split(self, writer: _Writer, lower: bytes, upper: bytes | None, start: int, end: int) -> None:
        """Answer a range whose fingerprints differ: my keys if few, else fingerprints of buckets."""
        count = end - start
        if count <= self._threshold:
            keys = self._keys.keys_between(start, end)
            withheld = [i for i, k in enumerate(keys) if self._keys.is_withheld(k)]
            payload = encode_varint(count) + b"".join(keys) + _positions_bytes(withheld)
            writer.range(lower, upper, Mode.ID_LIST, payload)
            self._sent_lists[lower] = keys
            return
        buckets = min(self._branching, count)  # never an empty bucket: bounds must increase
        bucket_lower = lower
        for b in range(buckets):
            lo = start + count * b // buckets
            hi = start + count * (b + 1) // buckets
            if b == buckets - 1:
                bucket_upper = upper
            else:
                below, above = self._keys.keys_between(hi - 1, hi + 1)
                bucket_upper = split_bound(below, above)
            writer.range(bucket_lower, bucket_upper, Mode.FINGERPRINT, self._keys.fingerprint_between(lo, hi))
            bucket_lower = bucket_upper

    def _answer_id_list(self, writer: _Writer, rng: _Range, mine: list[bytes]) -> bytes | None:
        """Answer the peer's IdList with a Diff; if it does not fit, answer up to a cut and return it."""
        theirs = set(rng.keys)
        ours = set(mine)
        extra = [k for k in mine if k not in theirs]  # mine, they lack
        lacking = [i for i, k in enumerate(rng.keys) if k not in ours]  # theirs, I lack
        fixed = _MAX_BOUND_SIZE + 1 + 15 + 2 * len(lacking)
        fits = max(0, (writer.room() - fixed) // (KEY_SIZE + 2))
        cut = None
        if fits < len(extra):
            below = [k for k in (*mine, *rng.keys) if k < extra[fits]]
            cut = split_bound(max(below), extra[fits])  # the reserve guarantees fits >= 1
            extra = extra[:fits]
            lacking = [i for i in lacking if rng.keys[i] < cut]
        upper = rng.upper if cut is None else cut
        if extra or lacking or cut is not None:
            withheld = [i for i, k in enumerate(extra) if self._keys.is_withheld(k)]
            payload = (
                encode_varint(len(extra)) + b"".join(extra) + _positions_bytes(withheld) + _positions_bytes(lacking)
            )
            writer.range(rng.lower, upper, Mode.DIFF, payload)
        else:
            writer.skip(upper)
        self._hold(extra, [rng.keys[i] for i in lacking], rng.withheld, lacking)
        return cut

    def _take_diff(self, rng: _Range, my_list: list[bytes]) -> None:
        self._hold([my_list[p] for p in rng.lacking], list(rng.keys), rng.withheld, range(len(rng.keys)))

    def _hold(self, mine: list[bytes], theirs: list[bytes], their_withheld: frozenset[int], positions: Iterable[int]) -> None:
        """Keep learned differences until every range below them is settled."""
        for key in mine:
            if not self._keys.is_withheld(key):
                self._held.append((key, "have"))
        for key, pos in zip(theirs, positions):
            if key not in self._keys:
                self._held.append((key, "withheld" if pos in their_withheld else "need"))

    def _close(self, writer: _Writer, lower: bytes) -> None:
        """Out of room: one Fingerprint range covers everything from ``lower`` on; it is redone later."""
        start = self._keys.position(lower)
        writer.range(lower, _INFINITY, Mode.FINGERPRINT, self._keys.fingerprint_between(start, len(self._keys)))

    def _release(self, reply: bytes | None, frontier: bytes | None) -> ReconcileStep:
        ready = sorted(h for h in self._held if frontier is None or h[0] < frontier)
        self._held = [h for h in self._held if not (frontier is None or h[0] < frontier)]
        lists: dict[str, list[bytes]] = {"have": [], "need": [], "withheld": []}
        for key, which in ready:
            if key not in self._reported:
                self._reported.add(key)
                lists[which].append(key)
        return ReconcileStep(reply=reply, done=self.done, **lists)

    def _sent(self, message: bytes) -> bytes:
        self._stats[0] += 1
        self._stats[2] += len(message)
        return message


@dataclass(frozen=True)
class Exchange:
    """A whole session run in memory: every message in wire order, and what each side learned."""

    messages: list[bytes]
    initiator_steps: list[ReconcileStep]
    responder_steps: list[ReconcileStep]

    @property
    def round_trips(self) -> float:
        return len(self.messages) / 2

    def learned(self, initiator: bool) -> tuple[list[bytes], list[bytes], list[bytes]]:
        """(have, need, withheld) of one side, concatenated over its steps in delivery order."""
        steps = self.initiator_steps if initiator else self.responder_steps
        return (
            [k for s in steps for k in s.have],
            [k for s in steps for k in s.need],
            [k for s in steps for k in s.withheld],
        )


def run_in_memory(initiator: Reconciler, responder: Reconciler, max_messages: int = 10_000) -> Exchange:
    """Run two reconcilers against each other without I/O (for tests, vectors and simulations)."""
    message: bytes | None = initiator.initiate()
    messages: list[bytes] = []
    steps: tuple[list[ReconcileStep], list[ReconcileStep]] = ([], [])
    turn = 1  # 0: the initiator reads, 1: the responder reads
    while message is not None:
        if len(messages) >= max_messages:
            raise ReconcileUsageError(f"no end after {max_messages} messages")
        messages.append(message)
        step = (initiator, responder)[turn].reconcile(message)
        steps[turn].append(step)
        message, turn = step.reply, 1 - turn
    return Exchange(messages, steps[0], steps[1])
