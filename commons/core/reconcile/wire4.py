"""The version 4 reconcile message: sections of a turn, their encoding, and the checks on them.

A *turn* is what one side sends before it waits for the other: one or more messages, each
``0x04 || varint(flags) || section*``, flag bit 0 saying that another message of the same turn
follows (coded symbols and item lists may need several 65,000-byte frames). Every section is
``kind (1 byte) || payload``; ``protocol/reconcile.md`` (version 4) gives each layout. Decoding
checks a whole message before anything in it acts, and every failure is the peer's
(``ReconcileProtocolError``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from commons.core.reconcile.estimate import MAX_LEVELS, cells_from_bytes, cells_size
from commons.core.reconcile.keyset import (
    ITEM_SIZE,
    KEY_SIZE,
    MAX_TIME,
    TIME_SIZE,
    ReconcileProtocolError,
    encode_varint,
)
from commons.core.reconcile.riblt import CHECKSUM_SIZE, WORDS, Symbols
from commons.core.reconcile.wire import Reader as RangeReader
from commons.core.reconcile.wire import positions_bytes

__all__ = ["Kind", "Plan", "SizeMe", "Turn", "TurnWriter", "decode_message", "items_bytes", "positions_bytes"]

VERSION = 0x04
MORE_FOLLOWS = 0x01  # message flag: another message of this turn follows
SALT_SIZE = 8
MAX_SYMBOLS = 1 << 18  # the most coded symbols a session may ask for or send (about 12 MB)
SYMBOL_SIZE = ITEM_SIZE + CHECKSUM_SIZE + 1  # sum, checksum, count modulo 256
NEWEST_DAYS = 8  # MORE 0: the decoder's newest days, each with a fingerprint of its coded items below it
DAY_FINGERPRINT_SIZE = 8
BOUND_SIZE = 12  # a plan of symbols bounds what it codes by its highest item's day and first 8 key bytes


class Kind(enum.IntEnum):
    """What a section of a version 4 turn says."""

    ESTIMATE = 1  # initiator, first turn: my salt, highest item and coded symbol 0 (my count, sums)
    PLAN = 2  # responder: how it answers (equal / decoded / coded symbols / ranges), its count and flags
    SYMBOLS = 3  # coded symbols, continuing from the last one sent
    TAIL = 4  # responder: records above the initiator's highest item it pushes (a count)
    LISTED = 5  # items the sender holds that the receiver lacks, named (withheld, or not pushed)
    MORE = 6  # decoder: the symbols did not decode; send them up to this index (0: size it by my estimate)
    DECODED = 7  # decoder: what I push you, by day (the lists follow in LISTED / LACKING)
    LACKING = 8  # decoder: items you hold that I lack, by their salted hash
    ANSWER = 9  # responder: which of the lacking items it withholds, how many it pushes
    RANGES = 10  # a version 3 message: the session goes on by range fingerprints
    REGION = 11  # responder, plan LIST: every item it codes from the plan's day on


class Plan(enum.IntEnum):
    EQUAL = 0  # our sets are equal up to your highest item: only the tail differs
    SYMBOLS = 1  # coded symbols of my items up to your highest item follow
    RANGES = 2  # too large a difference for coded symbols: range reconciliation follows
    DECODED = 3  # your symbol 0 decoded (one item differs): DECODED, LISTED and LACKING follow
    LIST = 4  # our sets are equal below a day: my items from that day on follow (REGION)


ASK_PUSH = 0x01  # flag of ESTIMATE and PLAN: push me the records I lack instead of naming them


@dataclass(frozen=True)
class Estimate:
    ask_push: bool
    salt: int
    count: int
    top: bytes | None  # the sender's highest item, None for an empty set
    first: Symbols  # coded symbol 0 of the sender's whole set


@dataclass(frozen=True)
class SizeMe:
    """MORE with end 0: the decoder's estimator cells, for the encoder to size the batch."""

    cells: np.ndarray
    below_days: tuple[tuple[int, bytes], ...] = ()  # (day, fingerprint of my coded items below it), newest first


@dataclass(frozen=True)
class PlanSection:
    plan: Plan
    ask_push: bool
    count: int  # the sender's items
    symbol_end: int  # symbols of this batch: indices 0 .. symbol_end - 1
    bound: bytes | None = None  # plan SYMBOLS: the first BOUND_SIZE bytes of the sender's highest item it codes
    day: int | None = None  # plan LIST: the day from which the sender lists what it codes


@dataclass
class Turn:
    """The sections of one turn, decoded, in order (mutable while its messages arrive)."""

    kinds: list[Kind] = field(default_factory=list)
    estimate: Estimate | None = None
    plan: PlanSection | None = None
    symbols: list[Symbols] = field(default_factory=list)
    tail_pushed: int | None = None
    listed: list[bytes] = field(default_factory=list)
    listed_withheld: list[int] = field(default_factory=list)  # positions in ``listed``
    more: int | None = None
    size_me: SizeMe | None = None  # with more == 0
    pushed_days: list[tuple[int, int]] | None = None  # DECODED: (day, count) I push
    lacking: list[int] = field(default_factory=list)  # salted hashes of the items
    answer: tuple[int, list[int]] | None = None  # (pushed, withheld positions in the lacking list)
    ranges: list[bytes] = field(default_factory=list)
    region: list[bytes] = field(default_factory=list)


class _Reader(RangeReader):
    """Decodes one version 4 message; every failure is the peer's."""

    def __init__(self, data: bytes, pos: int) -> None:
        super().__init__(data)
        self.pos = pos

    def fail(self, why: str) -> ReconcileProtocolError:
        return ReconcileProtocolError(f"malformed reconcile v4 message at byte {self.pos}: {why}")

    def varint(self, limit: int = 1 << 35) -> int:  # type: ignore[override]
        value = super().varint()
        if value > limit:
            raise self.fail(f"value {value} above {limit}")
        return value

    def items(self) -> list[bytes]:
        count = self.varint()
        if count * (1 + KEY_SIZE) > len(self.data) - self.pos:
            raise self.fail("truncated item list")
        day, out = 0, []
        for _ in range(count):
            day += self.varint()
            if day > MAX_TIME:
                raise self.fail("item day beyond the largest day")
            out.append(day.to_bytes(TIME_SIZE, "big") + self.take(KEY_SIZE))
        if any(a >= b for a, b in zip(out, out[1:])):
            raise self.fail("items not strictly ascending")
        return out


def items_bytes(items: list[bytes]) -> bytes:
    """``varint(n)`` then each item as ``varint(day - previous day)`` (the first from day 0) and its key."""
    out, day = bytearray(encode_varint(len(items))), 0
    for item in items:
        this = int.from_bytes(item[:TIME_SIZE], "big")
        out += encode_varint(this - day) + item[TIME_SIZE:]
        day = this
    return bytes(out)


def _symbols(r: _Reader, start: int, count: int | None = None) -> Symbols:
    count = r.varint(MAX_SYMBOLS) if count is None else count
    if count * (ITEM_SIZE + CHECKSUM_SIZE + 1) > len(r.data) - r.pos:
        raise r.fail("truncated coded symbols")
    sums = np.zeros((count, 8 * WORDS), dtype=np.uint8)
    checks = np.zeros(count, dtype=np.uint64)
    counts = np.zeros(count, dtype=np.int64)
    for i in range(count):
        sums[i, :ITEM_SIZE] = np.frombuffer(r.take(ITEM_SIZE), dtype=np.uint8)
        checks[i] = int.from_bytes(r.take(CHECKSUM_SIZE), "little")
        counts[i] = r.take(1)[0]
    return Symbols(start, sums.view("<u8").reshape(count, WORDS).astype(np.uint64), checks, counts)


def decode_message(data: bytes, turn: Turn, symbols_start: int) -> bool:
    """Add one message's sections to ``turn``; whether more messages of the turn follow.

    ``symbols_start``: the index the turn's first coded symbol has (symbols continue from there)."""
    if not data:
        raise ReconcileProtocolError("empty reconcile message (no version byte)")
    r = _Reader(data, 1)
    flags = r.varint()
    if flags & ~MORE_FOLLOWS:
        raise r.fail(f"unknown message flags {flags:#x}")
    if r.pos == len(data) and flags & MORE_FOLLOWS:
        raise r.fail("a message that continues its turn carries nothing")
    while r.pos < len(data):
        try:
            kind = Kind(r.take(1)[0])
        except ValueError:
            raise r.fail("unknown section kind") from None
        turn.kinds.append(kind)
        if kind is Kind.ESTIMATE:
            ask = r.varint()
            salt = int.from_bytes(r.take(SALT_SIZE), "big")
            top_size = r.varint()
            if top_size not in (0, ITEM_SIZE):
                raise r.fail("the highest item is 0 or 37 bytes")
            top = r.take(top_size) or None
            count = r.varint()
            first = _symbols(r, 0, 1)
            if (top is None) != (count == 0) or first.counts[0] != count & 255 or ask & ~ASK_PUSH:
                raise r.fail("inconsistent estimate")
            turn.estimate = Estimate(bool(ask & ASK_PUSH), salt, count, top, first)
        elif kind is Kind.PLAN:
            try:
                plan = Plan(r.varint())
            except ValueError:
                raise r.fail("unknown plan") from None
            ask = r.varint()
            if ask & ~ASK_PUSH:
                raise r.fail("unknown plan flags")
            count = r.varint()
            end = r.varint(MAX_SYMBOLS)
            if (plan is Plan.SYMBOLS) != (end > 0):
                raise r.fail("a plan of coded symbols announces how many, and only it")
            bound = r.take(BOUND_SIZE) if plan is Plan.SYMBOLS else None
            day = r.varint(MAX_TIME) if plan is Plan.LIST else None
            turn.plan = PlanSection(plan, bool(ask & ASK_PUSH), count, end, bound, day)
        elif kind is Kind.SYMBOLS:
            start = symbols_start + sum(len(s) for s in turn.symbols)
            turn.symbols.append(_symbols(r, start))
        elif kind is Kind.TAIL:
            turn.tail_pushed = r.varint()
        elif kind is Kind.LISTED:
            items = r.items()
            withheld = r.positions(len(items))
            if turn.listed and items and items[0] <= turn.listed[-1]:
                raise r.fail("listed items not strictly ascending")
            turn.listed_withheld += [len(turn.listed) + p for p in withheld]
            turn.listed += items
        elif kind is Kind.MORE:
            turn.more = r.varint(MAX_SYMBOLS)
            if turn.more == 0:
                levels = r.varint(MAX_LEVELS)
                if levels < 1:
                    raise r.fail("an estimate of no level")
                cells = cells_from_bytes(r.take(cells_size(levels)))
                days: list[tuple[int, bytes]] = []
                for _ in range(r.varint(NEWEST_DAYS)):
                    day = r.varint(MAX_TIME) if not days else days[-1][0] - r.varint()
                    if day < 0 or (days and day >= days[-1][0]):
                        raise r.fail("days not descending")
                    days.append((day, r.take(DAY_FINGERPRINT_SIZE)))
                turn.size_me = SizeMe(cells, tuple(days))
        elif kind is Kind.DECODED:
            days, day = [], 0
            for _ in range(r.varint(MAX_TIME + 1)):
                day += r.varint()
                count = r.varint()
                if day > MAX_TIME or count == 0 or (days and day <= days[-1][0]):
                    raise r.fail("pushed days not ascending, or a day with nothing")
                days.append((day, count))
            turn.pushed_days = days
        elif kind is Kind.REGION:
            items = r.items()
            if turn.region and items and items[0] <= turn.region[-1]:
                raise r.fail("region items not strictly ascending")
            turn.region += items
        elif kind is Kind.LACKING:
            count = r.varint()
            if count * CHECKSUM_SIZE > len(r.data) - r.pos:
                raise r.fail("truncated list of hashes")
            turn.lacking += [int.from_bytes(r.take(CHECKSUM_SIZE), "little") for _ in range(count)]
        elif kind is Kind.ANSWER:
            pushed = r.varint()
            turn.answer = (pushed, list(r.positions(1 << 35)))
        else:  # Kind.RANGES
            turn.ranges.append(r.take(r.varint()))
    return bool(flags & MORE_FOLLOWS)


class TurnWriter:
    """Packs a turn's sections into messages of at most ``limit`` bytes, cutting long lists and
    symbol runs into several sections where a message fills up."""

    HEADER = 2  # version byte and flags

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.messages: list[bytearray] = [bytearray()]

    def room(self) -> int:
        return self.limit - self.HEADER - len(self.messages[-1])

    def section(self, kind: Kind, payload: bytes) -> None:
        body = bytes([kind]) + payload
        if len(body) > self.room():
            if len(body) > self.limit - self.HEADER:
                raise ValueError("a section larger than a message")
            self.messages.append(bytearray())
        self.messages[-1] += body

    def listed(self, kind: Kind, items: list[bytes], withheld: set[bytes] | frozenset[bytes] = frozenset()) -> None:
        """Items as LISTED (with withheld positions) or LACKING sections, as many a section as fit."""
        at = 0
        while at < len(items):
            room = self.room() - 1 - 5 - 5
            taken, used, day, marks = [], 0, 0, []
            for item in items[at:]:
                this = int.from_bytes(item[:TIME_SIZE], "big")
                size = len(encode_varint(this - day)) + KEY_SIZE + (5 if item in withheld else 0)
                if used + size > room:
                    break
                if item in withheld:
                    marks.append(len(taken))
                taken.append(item)
                used, day = used + size, this
            if not taken:
                self.messages.append(bytearray())
                continue
            payload = items_bytes(taken) + (positions_bytes(marks) if kind is Kind.LISTED else b"")
            self.section(kind, payload)
            at += len(taken)

    def symbols(self, encoded: list[bytes], kind: Kind = Kind.SYMBOLS) -> None:
        """Encoded symbols (or 8-byte hashes, as LACKING) as ``varint(n)`` sections, as many a section as fit."""
        at = 0
        while at < len(encoded):
            room = self.room() - 1 - 5
            taken, used = 0, 0
            for s in encoded[at:]:
                if used + len(s) > room:
                    break
                taken, used = taken + 1, used + len(s)
            if not taken:
                self.messages.append(bytearray())
                continue
            self.section(kind, encode_varint(taken) + b"".join(encoded[at : at + taken]))
            at += taken

    def finish(self) -> list[bytes]:
        out = []
        for i, body in enumerate(self.messages):
            flags = MORE_FOLLOWS if i + 1 < len(self.messages) else 0
            out.append(bytes([VERSION, flags]) + bytes(body))
        return out
