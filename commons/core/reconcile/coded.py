"""Reconciliation version 4: an estimate, then rateless coded symbols (range fingerprints when the
difference is too large for them).

The initiator sends an *estimate* of its set (``estimate``: count, highest item, fingerprint and
a few hundred bytes of cells). The responder

* takes its items above the initiator's highest item as a known difference (the *tail*: a node
  that was away lacks the newest records; pushed or named at once, whatever their number);
* compares the rest: equal fingerprints end the session; otherwise it sends coded symbols of its
  items (``riblt``), as many as the estimated difference needs, or -- for a difference beyond
  what coded symbols carry cheaply (the estimate cannot see its end) -- starts a version 3 range
  reconciliation (``reconciler``) inside this session.

The initiator subtracts its own symbols and peels: it then knows the whole difference. It asks
for more symbols if they did not suffice (rateless: none sent is wasted), and otherwise says what
it pushes (a count a day), names what it withholds or will not push, and lists what it lacks; the
responder answers which of those it withholds and pushes the others if asked. Where the
differences lie in item order changes nothing: a thousand newest records of one busy day cost
what a thousand scattered over a year cost. Usually 2 round trips; 3 when the first batch of
symbols fell short. ``protocol/reconcile.md`` (version 4) is the normative description.

Sans-I/O: bytes in, bytes out. The salt comes from the caller (gossip: from ``os.urandom``).
"""

from __future__ import annotations

import enum
import math
import os

import numpy as np

from commons.core.reconcile import estimate as est
from commons.core.reconcile import riblt
from commons.core.reconcile.keyset import (
    ITEM_SIZE,
    MAX_TIME,
    TIME_SIZE,
    KeySet,
    ReconcileProtocolError,
    ReconcileUsageError,
    encode_varint,
    item_key,
    item_time,
)
from commons.core.reconcile.push import Expectation
from commons.core.reconcile.reconciler import MIN_FRAME_SIZE_LIMIT, Reconciler, ReconcileStatistics, ReconcileStep
from commons.core.reconcile.wire import MAX_MESSAGE_SIZE
from commons.core.reconcile.wire4 import (
    ASK_PUSH,
    MAX_SYMBOLS,
    NEWEST_DAYS,
    VERSION,
    Kind,
    Plan,
    Turn,
    TurnWriter,
    decode_message,
    positions_bytes,
)

FIRST_BATCH_FACTOR = 1.5  # symbols of the first batch per estimated difference (decoding needs ~1.35-1.7)
FIRST_BATCH_EXTRA = 4
NEWER_SHARE = 0.5  # the share of the estimate in the initiator's days newer than all mine that goes to ranges
DISJOINT_SHARE = 0.5  # an estimate of at least this share of both sets' items goes to ranges
MORE_FACTOR = 1.45  # symbols asked after a failed batch per difference that batch shows
MIN_CODED_FRAME = MIN_FRAME_SIZE_LIMIT + 16  # room for a version 3 message inside a RANGES section
_RANGES_OVERHEAD = 16


def _newest_days_bytes(items: bytes) -> bytes:
    """The estimate's tail: ``varint(k)`` then, for the k <= NEWEST_DAYS newest days of the items,
    newest first, the day (the first whole, then as the gap below the one before) and its count."""
    n = len(items) // ITEM_SIZE
    days = np.frombuffer(items, dtype=np.uint8).reshape(n, ITEM_SIZE)[:, :TIME_SIZE].copy().view(">u4").ravel()
    unique, counts = np.unique(days, return_counts=True)
    newest = list(zip(unique[::-1][:NEWEST_DAYS].tolist(), counts[::-1][:NEWEST_DAYS].tolist()))
    out, previous = bytearray(encode_varint(len(newest))), None
    for day, count in newest:
        out += encode_varint(day if previous is None else previous - day) + encode_varint(count)
        previous = day
    return bytes(out)


def _top_day(keys: KeySet) -> int:
    return item_time(keys.items_between(len(keys) - 1, len(keys))[0]) if len(keys) else -1


def _just_above(item: bytes) -> bytes:
    """The bound right above ``item``: every item <= it sorts below."""
    return item + b"\0"


class _State(enum.Enum):
    FRESH = "fresh"
    SENT_ESTIMATE = "sent_estimate"  # initiator: waits for the plan
    SENT_SYMBOLS = "sent_symbols"  # responder: waits for MORE or DECODED
    SENT_MORE = "sent_more"  # initiator: waits for the rest of the symbols
    SENT_DECODED = "sent_decoded"  # initiator: waits for the answer about what it lacks
    RANGES = "ranges"  # a version 3 session runs inside this one
    DONE = "done"


# What each state accepts as the peer's turn (in any order, each kind at most as the turn allows).
_ACCEPTS = {
    _State.FRESH: {Kind.ESTIMATE},
    _State.SENT_ESTIMATE: {Kind.PLAN, Kind.TAIL, Kind.LISTED, Kind.SYMBOLS, Kind.RANGES},
    _State.SENT_SYMBOLS: {Kind.MORE, Kind.DECODED, Kind.LISTED, Kind.LACKING, Kind.RANGES},
    _State.SENT_MORE: {Kind.SYMBOLS},
    _State.SENT_DECODED: {Kind.ANSWER},
    _State.RANGES: {Kind.RANGES},
}


# The section a turn must open with in each state (so that what bounds the rest is read first),
# and the sections a turn carries at most once.
_FIRST = {
    _State.FRESH: (Kind.ESTIMATE,),
    _State.SENT_ESTIMATE: (Kind.PLAN,),
    _State.SENT_SYMBOLS: (Kind.MORE, Kind.DECODED, Kind.RANGES),
}
_ONCE = (Kind.ESTIMATE, Kind.PLAN, Kind.TAIL, Kind.MORE, Kind.DECODED, Kind.ANSWER)


class CodedReconciler:
    """One version 4 session over a KeySet, in either role (``initiate()`` makes it the initiator).

    The same surface as :class:`~commons.core.reconcile.reconciler.Reconciler`, except that a step's
    reply may be a turn of several messages (``step.reply`` then ``step.more``), and that a message
    flagged as continued makes a step with nothing to send."""

    version = VERSION

    def __init__(self, keyset: KeySet, frame_size_limit: int = 65536, ask_push: bool = True,
                 salt: int | None = None) -> None:
        if not MIN_CODED_FRAME <= frame_size_limit <= MAX_MESSAGE_SIZE:
            raise ReconcileUsageError(f"frame_size_limit must be between {MIN_CODED_FRAME} and {MAX_MESSAGE_SIZE}")
        self._keys = keyset
        self._limit = frame_size_limit
        self._ask_push = ask_push
        self._salt = int.from_bytes(os.urandom(8), "big") if salt is None else salt
        self._state = _State.FRESH
        self._turn = Turn()
        self._messages_in_turn = 0
        self._stats = [0, 0, 0, 0]
        self._ranges: Reconciler | None = None
        # initiator
        self._plan = None
        self._received: riblt.Symbols | None = None
        self._wanted = 0  # symbols asked for so far
        self._lacking: list[bytes] = []  # items the peer holds that I lack, as I listed them
        self._peer_push = False
        # responder
        self._estimate = None
        self._encoding: tuple | None = None  # (words, hashes) of my items below the initiator's top
        self._sent_symbols = 0

    @property
    def done(self) -> bool:
        return self._state is _State.DONE

    def statistics(self) -> ReconcileStatistics:
        return ReconcileStatistics(*self._stats)

    # -- the initiator's first message ------------------------------------------------------------

    def initiate(self) -> bytes:
        if self._state is not _State.FRESH:
            raise ReconcileUsageError("initiate() starts a session and may only be called first")
        n = len(self._keys)
        items = self._keys.items_bytes(0, n)
        hashes = riblt.hash_words(riblt.items_to_words(items), self._salt)
        levels = est.levels_for(n)
        top = items[-ITEM_SIZE:] if n else b""
        payload = (encode_varint(ASK_PUSH if self._ask_push else 0) + self._salt.to_bytes(8, "big")
                   + encode_varint(n) + encode_varint(len(top)) + top
                   + self._keys.fingerprint_between(0, n) + encode_varint(levels)
                   + est.cells_bytes(est.cells(hashes, levels)) + _newest_days_bytes(items))
        writer = TurnWriter(self._limit)
        writer.section(Kind.ESTIMATE, payload)
        self._state = _State.SENT_ESTIMATE
        self._top = top or None
        self._count = n
        (message,) = writer.finish()
        return self._sent([message])[0]

    # -- every message ----------------------------------------------------------------------------

    def reconcile(self, message: bytes) -> ReconcileStep:
        """Take one of the peer's messages. A message that breaks the protocol ends the session
        (``ReconcileProtocolError``; nothing in it took effect), as does the end of the exchange."""
        if self._state is _State.DONE:
            raise ReconcileUsageError("this reconciliation session is over")
        try:
            return self._reconcile(message)
        except ReconcileProtocolError:
            self._state = _State.DONE
            raise

    def _reconcile(self, message: bytes) -> ReconcileStep:
        if not message:
            raise ReconcileProtocolError("empty reconcile message (no version byte)")
        if message[0] != VERSION:
            raise ReconcileProtocolError(f"a reconcile version {VERSION} session got a message of version {message[0]}")
        if len(message) > MAX_MESSAGE_SIZE:
            raise ReconcileProtocolError(f"reconcile message of {len(message)} bytes exceeds {MAX_MESSAGE_SIZE}")
        self._stats[1] += 1
        self._stats[3] += len(message)
        start = len(self._received) if self._received is not None else 0
        continued = decode_message(message, self._turn, start)
        allowed = _ACCEPTS[self._state]
        stray = [k.name for k in self._turn.kinds if k not in allowed]
        if stray:
            raise ReconcileProtocolError(f"reconcile v4: {', '.join(stray)} not expected now ({self._state.value})")
        self._check_bounds()
        if continued:
            return ReconcileStep(reply=None)
        turn, self._turn = self._turn, Turn()
        handler = {
            _State.FRESH: self._on_estimate,
            _State.SENT_ESTIMATE: self._on_plan,
            _State.SENT_SYMBOLS: self._on_decoder,
            _State.SENT_MORE: self._on_more_symbols,
            _State.SENT_DECODED: self._on_answer,
            _State.RANGES: self._on_ranges,
        }[self._state]
        return handler(turn)

    def _check_bounds(self) -> None:
        """Refuse a turn growing past what the peer may send: a peer must not make us hold more."""
        turn = self._turn
        first = _FIRST.get(self._state)
        if first and turn.kinds and turn.kinds[0] not in first:
            raise ReconcileProtocolError(f"reconcile v4: a turn now opens with {' or '.join(k.name for k in first)}")
        if any(turn.kinds.count(k) > 1 for k in _ONCE):
            raise ReconcileProtocolError("reconcile v4: a section that comes once a turn came twice")
        symbols = sum(len(s) for s in turn.symbols)
        if self._state in (_State.SENT_ESTIMATE, _State.SENT_MORE):
            announced = turn.plan.symbol_end if turn.plan is not None else None
            limit = (self._wanted - (len(self._received) if self._received is not None else 0)
                     if self._state is _State.SENT_MORE else announced if announced is not None else MAX_SYMBOLS)
            if symbols > limit:
                raise ReconcileProtocolError("more coded symbols than announced or asked for")
        if len(turn.kinds) > 1 + symbols + len(turn.listed) + len(turn.lacking) + len(turn.ranges) + 8:
            raise ReconcileProtocolError("a turn of sections that carry nothing")
        if len(turn.ranges) > 1:
            raise ReconcileProtocolError("more than one range message in a turn")
        if self._state is _State.SENT_SYMBOLS and self._estimate is not None:
            if len(turn.listed) > self._estimate.count or len(turn.lacking) > len(self._keys):
                raise ReconcileProtocolError("lists longer than the sets they come from")
        if self._state is _State.SENT_ESTIMATE and turn.plan is not None and len(turn.listed) > turn.plan.count:
            raise ReconcileProtocolError("a tail longer than the set it comes from")

    # -- responder --------------------------------------------------------------------------------

    def _on_estimate(self, turn: Turn) -> ReconcileStep:
        e = turn.estimate
        if e is None or turn.kinds != [Kind.ESTIMATE]:
            raise ReconcileProtocolError("a version 4 session starts with an estimate alone")
        self._estimate = e
        keys = self._keys
        below = 0 if e.top is None else keys.position(_just_above(e.top))
        tail = keys.items_between(below, len(keys))
        writer = TurnWriter(self._limit)
        step = _Report()
        if below == 0 and e.count == 0 or keys.fingerprint_between(0, below) == e.fingerprint:
            plan, end = Plan.EQUAL, 0
        else:
            items = keys.items_bytes(0, below)
            words = riblt.items_to_words(items)
            hashes = riblt.hash_words(words, e.salt)
            levels = len(e.cells) // est.GROUPS
            guess = est.estimate(e.cells, est.cells(hashes, levels))
            end = MAX_SYMBOLS + 1 if math.isinf(guess) else math.ceil(FIRST_BATCH_FACTOR * max(guess, 1.0)) + FIRST_BATCH_EXTRA
            # Sets that share (almost) nothing -- one of them empty, or most items differing -- cost
            # a list or a push count with ranges, not 1.5 symbols an item.
            # Most of the difference in whole days newer than my newest item (I was away, the
            # initiator was not): ranges find those in a few fingerprints, symbols pay for each.
            days_newer = [n for day, n in e.newest_days if below == len(keys) and day > _top_day(keys)]
            newer = sum(days_newer) if len(days_newer) < NEWEST_DAYS else math.inf  # all listed: more lie beyond
            if (end > MAX_SYMBOLS or below == 0 or guess >= DISJOINT_SHARE * (e.count + below)
                    or newer >= NEWER_SHARE * guess):
                plan, end = Plan.RANGES, 0
            else:
                plan = Plan.SYMBOLS
                self._encoding = (words, hashes)
        writer.section(Kind.PLAN, encode_varint(plan) + encode_varint(ASK_PUSH if self._ask_push else 0)
                       + encode_varint(len(keys)) + encode_varint(end))
        if plan is Plan.RANGES:
            self._ranges = Reconciler(keys, frame_size_limit=self._limit - _RANGES_OVERHEAD, ask_push=self._ask_push)
            inner = self._ranges.initiate()
            writer.section(Kind.RANGES, encode_varint(len(inner)) + inner)
            self._state = _State.RANGES
            return self._reply(writer, step)
        # The tail: items above the initiator's highest, which it cannot hold.
        withheld = {i for i in tail if keys.is_withheld(item_key(i))}
        sendable = [i for i in tail if i not in withheld]
        if e.ask_push and sendable:
            writer.section(Kind.TAIL, encode_varint(len(sendable)))
            step.push += sendable
        else:
            step.have += sendable
        listed = [i for i in tail if i in withheld or not e.ask_push]
        if listed:
            writer.listed(Kind.LISTED, listed, withheld)
        if plan is Plan.SYMBOLS:
            self._send_symbols(writer, 0, end)
            self._state = _State.SENT_SYMBOLS
        else:
            self._state = _State.DONE
        return self._reply(writer, step)

    def _send_symbols(self, writer: TurnWriter, start: int, end: int) -> None:
        words, hashes = self._encoding  # type: ignore[misc]
        writer.symbols(riblt.symbol_bytes(riblt.encode(words, hashes, start, end)))
        self._sent_symbols = end

    def _on_decoder(self, turn: Turn) -> ReconcileStep:
        e = self._estimate
        assert e is not None
        writer = TurnWriter(self._limit)
        step = _Report()
        if turn.ranges:  # the initiator gave up on symbols: it starts range reconciliation
            if turn.kinds != [Kind.RANGES]:
                raise ReconcileProtocolError("a turn that starts ranges carries nothing else")
            self._ranges = Reconciler(self._keys, frame_size_limit=self._limit - _RANGES_OVERHEAD, ask_push=self._ask_push)
            self._state = _State.RANGES
            return self._on_ranges(turn)
        if turn.more is not None:
            if turn.kinds != [Kind.MORE] or not self._sent_symbols < turn.more <= MAX_SYMBOLS:
                raise ReconcileProtocolError("MORE alone, asking for more symbols than were sent, within the limit")
            self._send_symbols(writer, self._sent_symbols, turn.more)
            return self._reply(writer, step)
        if turn.pushed_days is None:
            raise ReconcileProtocolError("the decoder's turn needs DECODED")
        if turn.pushed_days and not self._ask_push:
            raise ReconcileProtocolError("pushes announced to a side that did not ask for them")
        for day, count in turn.pushed_days:
            upper = None if day == MAX_TIME else (day + 1).to_bytes(TIME_SIZE, "big")
            step.expect.append(Expectation(day.to_bytes(TIME_SIZE, "big"), upper, count))
        marked = set(turn.listed_withheld)
        for i, item in enumerate(turn.listed):
            if item_key(item) not in self._keys:
                (step.withheld if i in marked else step.need).append(item)
        withheld, sendable = [], []
        for p, item in enumerate(turn.lacking):
            if self._keys.time_of(item_key(item)) != item_time(item):
                raise ReconcileProtocolError("the peer lacks an item this node does not hold")
            if self._keys.is_withheld(item_key(item)):
                withheld.append(p)
            else:
                sendable.append(item)
        if turn.lacking:
            pushing = e.ask_push
            writer.section(Kind.ANSWER, encode_varint(len(sendable) if pushing else 0) + positions_bytes(withheld))
            (step.push if pushing else step.have).extend(sendable)
        self._state = _State.DONE
        return self._reply(writer, step) if turn.lacking else self._finish(step)

    # -- initiator --------------------------------------------------------------------------------

    def _on_plan(self, turn: Turn) -> ReconcileStep:
        plan = turn.plan
        if plan is None:
            raise ReconcileProtocolError("the responder's first turn needs a PLAN")
        self._plan = plan
        self._peer_push = plan.ask_push
        step = _Report()
        if plan.plan is Plan.RANGES:
            if turn.kinds != [Kind.PLAN, Kind.RANGES]:
                raise ReconcileProtocolError("a plan of ranges carries one range message and nothing else")
            self._ranges = Reconciler(self._keys, frame_size_limit=self._limit - _RANGES_OVERHEAD, ask_push=self._ask_push)
            self._state = _State.RANGES
            return self._on_ranges(turn)
        if turn.ranges:
            raise ReconcileProtocolError("range messages without a plan of ranges")
        top = self._top
        if turn.tail_pushed:
            if not self._ask_push:
                raise ReconcileProtocolError("pushes announced to a side that did not ask for them")
            step.expect.append(Expectation(b"" if top is None else _just_above(top), None, turn.tail_pushed))
        marked = set(turn.listed_withheld)
        for i, item in enumerate(turn.listed):
            if top is not None and item <= top:
                raise ReconcileProtocolError("a tail item at or below my highest item")
            if item_key(item) not in self._keys:
                (step.withheld if i in marked else step.need).append(item)
        if plan.plan is Plan.EQUAL:
            if turn.symbols:
                raise ReconcileProtocolError("coded symbols after a plan that says the sets are equal")
            self._state = _State.DONE
            return self._finish(step)
        self._wanted = plan.symbol_end
        self._received = riblt.Symbols.empty(0, 0)
        return self._take_symbols(turn, step)

    def _on_more_symbols(self, turn: Turn) -> ReconcileStep:
        return self._take_symbols(turn, _Report())

    def _take_symbols(self, turn: Turn, step: _Report) -> ReconcileStep:
        assert self._received is not None
        for batch in turn.symbols:
            self._received.extend(batch)
        if len(self._received) != self._wanted:
            raise ReconcileProtocolError(f"{len(self._received)} coded symbols, {self._wanted} announced or asked for")
        n = len(self._keys)
        words = riblt.items_to_words(self._keys.items_bytes(0, n))
        hashes = riblt.hash_words(words, self._salt)
        diff = riblt.subtract(self._received, words, hashes)
        peeled = riblt.peel(diff, self._salt, max_items=n + self._plan.count + 64)
        writer = TurnWriter(self._limit)
        if peeled is None:
            if self._wanted >= MAX_SYMBOLS:  # give up on symbols: range reconciliation, as its initiator
                self._ranges = Reconciler(self._keys, frame_size_limit=self._limit - _RANGES_OVERHEAD, ask_push=self._ask_push)
                inner = self._ranges.initiate()
                writer.section(Kind.RANGES, encode_varint(len(inner)) + inner)
                self._state = _State.RANGES
                return self._reply(writer, step)
            # The failed batch tells the difference's size far better than the estimate did.
            size = riblt.difference_size(diff)
            enough = 4 * self._wanted if math.isinf(size) else math.ceil(MORE_FACTOR * size + 4 * math.sqrt(size)) + 8
            self._wanted = min(MAX_SYMBOLS, max(self._wanted + 8, enough))
            writer.section(Kind.MORE, encode_varint(self._wanted))
            self._state = _State.SENT_MORE
            return self._reply(writer, step)
        theirs, mine = peeled
        for item in mine:
            if self._keys.time_of(item_key(item)) != item_time(item):
                raise ReconcileProtocolError("coded symbols decode to an item of mine that I do not hold")
        mine.sort()
        lacking = sorted(i for i in theirs if item_key(i) not in self._keys)
        withheld = {i for i in mine if self._keys.is_withheld(item_key(i))}
        sendable = [i for i in mine if i not in withheld]
        pushing = self._peer_push
        days: dict[int, int] = {}
        if pushing:
            for item in sendable:
                days[item_time(item)] = days.get(item_time(item), 0) + 1
            step.push += sendable
        else:
            step.have += sendable
        body, previous = bytearray(encode_varint(len(days))), 0
        for day in sorted(days):
            body += encode_varint(day - previous) + encode_varint(days[day])
            previous = day
        writer.section(Kind.DECODED, bytes(body))
        listed = [i for i in mine if i in withheld or not pushing]
        if listed:
            writer.listed(Kind.LISTED, listed, withheld)
        if lacking:
            writer.listed(Kind.LACKING, lacking)
        self._lacking = lacking
        self._state = _State.SENT_DECODED if lacking else _State.DONE
        return self._reply(writer, step)

    def _on_answer(self, turn: Turn) -> ReconcileStep:
        assert turn.answer is not None
        pushed, positions = turn.answer
        if turn.kinds != [Kind.ANSWER] or any(p >= len(self._lacking) for p in positions):
            raise ReconcileProtocolError("ANSWER alone, naming positions in the list it answers")
        marked = set(positions)
        sendable = [i for p, i in enumerate(self._lacking) if p not in marked]
        if pushed != (len(sendable) if self._ask_push else 0):
            raise ReconcileProtocolError(f"ANSWER pushes {pushed} records, the list leaves {len(sendable)} to push")
        step = _Report()
        step.withheld += [self._lacking[p] for p in positions]
        if self._ask_push:
            step.expect += [Expectation(item, _just_above(item), 1) for item in sendable]
        else:
            step.need += sendable
        self._state = _State.DONE
        return self._finish(step)

    # -- ranges -----------------------------------------------------------------------------------

    def _on_ranges(self, turn: Turn) -> ReconcileStep:
        if not turn.ranges:
            raise ReconcileProtocolError("a turn of range reconciliation carries its range message")
        assert self._ranges is not None
        inner = self._ranges.reconcile(turn.ranges[0])
        if inner.reply is not None:
            writer = TurnWriter(self._limit)
            writer.section(Kind.RANGES, encode_varint(len(inner.reply)) + inner.reply)
            (message,) = writer.finish()
            self._sent([message])
        else:
            message = None
        if inner.done:
            self._state = _State.DONE
        return ReconcileStep(reply=message, have=inner.have, need=inner.need, withheld=inner.withheld,
                             done=self.done, push=inner.push, expect=inner.expect, need_items=inner.need_items)

    # -- steps ------------------------------------------------------------------------------------

    def _reply(self, writer: TurnWriter, step: _Report) -> ReconcileStep:
        messages = self._sent(writer.finish())
        return step.build(messages, self.done)

    def _finish(self, step: _Report) -> ReconcileStep:
        return step.build([], True)

    def _sent(self, messages: list[bytes]) -> list[bytes]:
        self._stats[0] += len(messages)
        self._stats[2] += sum(map(len, messages))
        return messages


class _Report:
    """What a turn taught, gathered as items and released as a ReconcileStep (keys, item order)."""

    def __init__(self) -> None:
        self.have: list[bytes] = []
        self.need: list[bytes] = []
        self.withheld: list[bytes] = []
        self.push: list[bytes] = []
        self.expect: list[Expectation] = []

    def build(self, messages: list[bytes], done: bool) -> ReconcileStep:
        need = sorted(self.need)
        return ReconcileStep(
            reply=messages[0] if messages else None, more=tuple(messages[1:]), done=done,
            have=[item_key(i) for i in sorted(self.have)], need=[item_key(i) for i in need],
            withheld=[item_key(i) for i in sorted(self.withheld)], push=[item_key(i) for i in sorted(self.push)],
            expect=self.expect, need_items=need,
        )
