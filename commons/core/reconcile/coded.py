"""Reconciliation version 4: rateless coded symbols, sized by how far the first ones fall short
(range fingerprints when the difference is too large for them).

The initiator *opens* (ESTIMATE: its salt, highest item, count and coded symbol 0 of its set,
about 100 bytes). The responder

* takes its items above the initiator's highest item as a known difference (the *tail*: a node
  that was away lacks the newest records; pushed or named at once, whatever their number);
* subtracts its own symbol 0 over the rest: zero ends the session (equal); a symbol that decodes
  (one item differs) lets it answer at once as the decoder; otherwise it sends a first batch of
  ``FIRST_BATCH`` coded symbols (``riblt``), bounded by its highest item they code.

The initiator takes its own items above that bound as a known difference too, subtracts its
symbols and peels. Decoded, it knows the whole difference. Not decoded, it asks for more: sized by
the failed batch while a fair share of it is empty, else by its estimator cells (``estimate``), from
which the responder sizes the batch -- or, for a difference beyond what coded symbols carry cheaply,
starts a version 3 range reconciliation (``reconciler``) inside this session. The decoder says what
it pushes (a count a day), names what it withholds or will not push, and lists by salted hash what it
lacks; the other side answers which of those it withholds and pushes the others if asked. Where the
differences lie in item order changes nothing: a thousand newest records of one busy day cost what a
thousand scattered over a year cost. 1.5 round trips for one difference, 2 for a few (up to about
ten), 3 beyond; ``protocol/reconcile.md`` (version 4) is the normative description.

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
    KEY_SIZE,
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
    BOUND_SIZE,
    DAY_FINGERPRINT_SIZE,
    NEWEST_DAYS,
    SYMBOL_SIZE,
    VERSION,
    Kind,
    Plan,
    SizeMe,
    Turn,
    TurnWriter,
    decode_message,
    positions_bytes,
)

FIRST_BATCH = 24  # symbols of the responder's first batch (unsized: 10 differences decode 9 times in 10)
FIRST_BATCH_FACTOR = 1.75  # symbols of a batch sized by the estimate, per estimated difference (~1.35-1.7 needed;
# the estimate is at least 0.8 of the truth 38 times in 40)
FIRST_BATCH_EXTRA = 8
DISJOINT_SHARE = 0.5  # an estimate of at least this share of both sets' items goes to ranges
LIST_SHARE = 0.7  # list the items from the newest day below which the sets agree when that costs this share of symbols
MORE_FACTOR = 1.45  # symbols asked after a failed batch per difference that batch shows
MIN_CODED_FRAME = MIN_FRAME_SIZE_LIMIT + 16  # room for a version 3 message inside a RANGES section
_RANGES_OVERHEAD = 16


def _bound_of(item: bytes) -> bytes:
    return item[:BOUND_SIZE]


def _position_after(keys: KeySet, bound: bytes) -> int:
    """How many items have their first BOUND_SIZE bytes at or below ``bound``."""
    after = int.from_bytes(bound, "big") + 1
    if after >> 8 * BOUND_SIZE:
        return len(keys)
    return keys.position(after.to_bytes(BOUND_SIZE, "big") + bytes(ITEM_SIZE - BOUND_SIZE))


def _day_bound(day: int) -> bytes:
    return day.to_bytes(TIME_SIZE, "big")


def _below_days_bytes(keys: KeySet, coded: int) -> bytes:
    """MORE 0's days: ``varint(k)`` then, for the k <= NEWEST_DAYS newest days of my first ``coded``
    items, newest first, the day (the first whole, then as the gap below the one before) and the
    first DAY_FINGERPRINT_SIZE bytes of the fingerprint of my items below that day."""
    items = keys.items_bytes(0, coded)
    days = np.frombuffer(items, dtype=np.uint8).reshape(coded, ITEM_SIZE)[:, :TIME_SIZE].copy().view(">u4").ravel()
    newest = np.unique(days)[::-1][:NEWEST_DAYS].tolist()
    out, previous = bytearray(encode_varint(len(newest))), None
    for day in newest:
        fp = keys.fingerprint_between(0, keys.position(_day_bound(day)))[:DAY_FINGERPRINT_SIZE]
        out += encode_varint(day if previous is None else previous - day) + fp
        previous = day
    return bytes(out)


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
    _State.SENT_ESTIMATE: {Kind.PLAN, Kind.TAIL, Kind.LISTED, Kind.SYMBOLS, Kind.RANGES, Kind.DECODED, Kind.LACKING},
    _State.SENT_SYMBOLS: {Kind.MORE, Kind.DECODED, Kind.LISTED, Kind.LACKING, Kind.RANGES},
    _State.SENT_MORE: {Kind.SYMBOLS, Kind.PLAN, Kind.RANGES, Kind.REGION},
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
        # (words, hashes) of the items the symbols cover: the initiator's whole set, the responder's
        # items up to the initiator's highest (hashed with the session's salt, the initiator's)
        self._encoding: tuple | None = None
        self._lacking: list[bytes] = []  # decoder: the peer's items I lack, as I listed them
        self._peer_push = False  # the peer asked to be pushed what it lacks
        # initiator
        self._plan = None
        self._received: riblt.Symbols | None = None
        self._wanted = 0  # symbols asked for so far (0 after asking the responder to size the batch)
        self._sized = False  # the responder was asked to size a batch
        self._known: list[bytes] = []  # my items above the responder's highest it codes
        # responder
        self._estimate = None
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
        words = riblt.items_to_words(items)
        self._encoding = (words, riblt.hash_words(words, self._salt))
        top = items[-ITEM_SIZE:] if n else b""
        first = riblt.symbol_bytes(riblt.encode(*self._encoding, 0, 1))[0]
        payload = (encode_varint(ASK_PUSH if self._ask_push else 0) + self._salt.to_bytes(8, "big")
                   + encode_varint(len(top)) + top + encode_varint(n) + first)
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
        if self._state is _State.SENT_MORE:
            first = (Kind.PLAN,) if self._wanted == 0 else (Kind.SYMBOLS,)
        if first and turn.kinds and turn.kinds[0] not in first:
            raise ReconcileProtocolError(f"reconcile v4: a turn now opens with {' or '.join(k.name for k in first)}")
        if any(turn.kinds.count(k) > 1 for k in _ONCE):
            raise ReconcileProtocolError("reconcile v4: a section that comes once a turn came twice")
        symbols = sum(len(s) for s in turn.symbols)
        if self._state in (_State.SENT_ESTIMATE, _State.SENT_MORE):
            received = len(self._received) if self._received is not None else 0
            announced = max(0, turn.plan.symbol_end - received) if turn.plan is not None else None
            limit = announced if announced is not None else self._wanted - received if self._wanted else 0
            if symbols > limit:
                raise ReconcileProtocolError("more coded symbols than announced or asked for")
        if len(turn.kinds) > 1 + symbols + len(turn.listed) + len(turn.lacking) + len(turn.ranges) + len(turn.region) + 8:
            raise ReconcileProtocolError("a turn of sections that carry nothing")
        if len(turn.ranges) > 1:
            raise ReconcileProtocolError("more than one range message in a turn")
        peer_count = self._estimate.count if self._estimate is not None else self._plan.count if self._plan else None
        if peer_count is not None and (max(len(turn.listed), len(turn.region)) > peer_count or len(turn.lacking) > len(self._keys)):
            raise ReconcileProtocolError("lists longer than the sets they come from")
        if self._state is _State.SENT_ESTIMATE and turn.plan is not None and len(turn.listed) > turn.plan.count:
            raise ReconcileProtocolError("a tail longer than the set it comes from")

    # -- responder --------------------------------------------------------------------------------

    def _on_estimate(self, turn: Turn) -> ReconcileStep:
        e = turn.estimate
        if e is None or turn.kinds != [Kind.ESTIMATE]:
            raise ReconcileProtocolError("a version 4 session starts with an estimate alone")
        self._estimate = e
        self._salt = e.salt
        self._peer_push = e.ask_push
        keys = self._keys
        below = 0 if e.top is None else keys.position(_just_above(e.top))
        tail = keys.items_between(below, len(keys))
        writer = TurnWriter(self._limit)
        step = _Report()
        words = riblt.items_to_words(keys.items_bytes(0, below))
        self._encoding = (words, riblt.hash_words(words, e.salt))
        # Symbol 0 holds every item: it is zero when the sets are equal up to the initiator's highest
        # item, and decodes when they differ by one item.
        peeled = riblt.peel(riblt.subtract(e.first, *self._encoding), e.salt, max_items=1) if e.count else ([], [])
        if peeled == ([], []):
            plan, end = Plan.EQUAL, 0
        elif peeled is not None:
            plan, end = Plan.DECODED, 0
        elif below == 0:  # I hold nothing up to its highest item: a list or a push count in ranges
            plan, end = Plan.RANGES, 0
        else:
            plan, end = Plan.SYMBOLS, FIRST_BATCH
        writer.section(Kind.PLAN, self._plan_bytes(plan, end))
        if plan is Plan.RANGES:
            return self._start_ranges(writer, step, initiator=True)
        if plan is Plan.DECODED:
            theirs, mine = peeled  # type: ignore[misc]
            return self._decoded(writer, step, theirs, mine, tail)
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

    def _plan_bytes(self, plan: Plan, end: int, day: int | None = None) -> bytes:
        """A PLAN's payload; a plan of symbols bounds them by my highest item they code, a plan of
        a list gives the day it lists from."""
        out = (encode_varint(plan) + encode_varint(ASK_PUSH if self._ask_push else 0)
               + encode_varint(len(self._keys)) + encode_varint(end))
        if plan is Plan.LIST:
            out += encode_varint(day)  # type: ignore[arg-type]
        if plan is Plan.SYMBOLS:
            out += _bound_of(self._keys.items_between(len(self._encoding[0]) - 1, len(self._encoding[0]))[0])  # type: ignore[index]
        return out

    def _send_symbols(self, writer: TurnWriter, start: int, end: int) -> None:
        words, hashes = self._encoding  # type: ignore[misc]
        writer.symbols(riblt.symbol_bytes(riblt.encode(words, hashes, start, end)))
        self._sent_symbols = end

    def _sized_batch(self, size_me: SizeMe) -> tuple[Plan, int, int | None]:
        """The plan, batch end and listing day for a decoder that sent its estimator cells (MORE 0)."""
        e = self._estimate
        assert e is not None
        words, hashes = self._encoding  # type: ignore[misc]
        levels = len(size_me.cells) // est.GROUPS
        guess = est.estimate(size_me.cells, est.cells(hashes, levels))
        if math.isinf(guess):
            return Plan.RANGES, 0, None
        end = max(self._sent_symbols + 8, math.ceil(FIRST_BATCH_FACTOR * guess) + FIRST_BATCH_EXTRA)
        # Both sides made records since they last agreed (a healed partition): below the newest day
        # where our fingerprints agree the sets are equal, and my items from that day on, listed,
        # cost less than symbols for each difference.
        keys = self._keys
        for day, fp in size_me.below_days:
            at = keys.position(_day_bound(day))
            if at <= len(words) and keys.fingerprint_between(0, at)[:DAY_FINGERPRINT_SIZE] == fp:
                if (KEY_SIZE + 1) * (len(words) - at) < LIST_SHARE * SYMBOL_SIZE * (end - self._sent_symbols):
                    return Plan.LIST, 0, day
                break
        # Sets that share (almost) nothing -- most items differing -- cost a list or a push count
        # with ranges, not 1.5 symbols an item.
        if end > MAX_SYMBOLS or guess >= DISJOINT_SHARE * (e.count + len(words)):
            return Plan.RANGES, 0, None
        return Plan.SYMBOLS, end, None

    def _on_decoder(self, turn: Turn) -> ReconcileStep:
        e = self._estimate
        assert e is not None
        writer = TurnWriter(self._limit)
        step = _Report()
        if turn.ranges:  # the initiator gave up on symbols: it starts range reconciliation
            if turn.kinds != [Kind.RANGES]:
                raise ReconcileProtocolError("a turn that starts ranges carries nothing else")
            return self._start_ranges(writer, step, initiator=False, turn=turn, tail_sent=True)
        if turn.more is not None:
            if turn.kinds != [Kind.MORE] or not (turn.more == 0 or self._sent_symbols < turn.more <= MAX_SYMBOLS):
                raise ReconcileProtocolError("MORE alone, asking for more symbols than were sent, within the limit")
            if turn.more:
                if turn.size_me is not None or turn.more <= self._sent_symbols:
                    raise ReconcileProtocolError("MORE asking for more symbols than were sent")
                self._send_symbols(writer, self._sent_symbols, turn.more)
                return self._reply(writer, step)
            assert turn.size_me is not None
            plan, end, day = self._sized_batch(turn.size_me)
            writer.section(Kind.PLAN, self._plan_bytes(plan, end, day))
            if plan is Plan.RANGES:
                return self._start_ranges(writer, step, initiator=True, tail_sent=True)
            if plan is Plan.LIST:
                at = self._keys.position(_day_bound(day))  # type: ignore[arg-type]
                writer.listed(Kind.REGION, self._keys.items_between(at, len(self._encoding[0])))  # type: ignore[index]
                return self._reply(writer, step)
            self._send_symbols(writer, self._sent_symbols, end)
            return self._reply(writer, step)
        if turn.pushed_days is None:
            raise ReconcileProtocolError("the decoder's turn needs DECODED")
        self._take_decoded(turn, step)
        if not turn.lacking:
            self._state = _State.DONE
            return self._finish(step)
        return self._answer(turn, writer, step)

    # -- either side: the decoder's turn and its answer -------------------------------------------

    def _decoded(self, writer: TurnWriter, step: _Report, theirs: list[bytes], mine: list[bytes],
                 known: list[bytes] = ()) -> ReconcileStep:  # type: ignore[assignment]
        """The decoder's turn, after the PLAN (responder) or as the whole turn (initiator): what I push
        (a count a day), what I name, and the peer's items I lack (by hash). ``known``: items of mine
        the peer cannot hold whatever the symbols say (the responder's tail)."""
        for item in mine:
            if self._keys.time_of(item_key(item)) != item_time(item):
                raise ReconcileProtocolError("coded symbols decode to an item of mine that I do not hold")
        mine = sorted(mine + list(known))
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
            writer.symbols([riblt.hash_item(i, self._salt).to_bytes(8, "little") for i in lacking], Kind.LACKING)
        self._lacking = lacking
        self._state = _State.SENT_DECODED if lacking else _State.DONE
        return self._reply(writer, step)

    def _take_decoded(self, turn: Turn, step: _Report) -> None:
        """What the decoder's DECODED and LISTED tell: the records it pushes me, those it names."""
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

    def _answer(self, turn: Turn, writer: TurnWriter, step: _Report) -> ReconcileStep:
        """ANSWER the decoder's LACKING (hashes of items I must hold): which I withhold, how many I push."""
        words, hashes = self._encoding  # type: ignore[misc]
        wanted = np.array(turn.lacking, dtype=np.uint64)
        order = np.argsort(hashes, kind="stable")
        ranked = hashes[order]
        at = np.searchsorted(ranked, wanted)
        found = (at < len(ranked)) & (ranked[np.minimum(at, len(ranked) - 1)] == wanted) if len(ranked) else at < 0
        if not found.all() or len(set(turn.lacking)) != len(turn.lacking):
            raise ReconcileProtocolError("the peer lacks an item this node does not hold (or names one twice)")
        withheld, sendable = [], []
        for p, index in enumerate(order[at].tolist()):
            item = self._keys.items_between(index, index + 1)[0]
            if self._keys.is_withheld(item_key(item)):
                withheld.append(p)
            else:
                sendable.append(item)
        pushing = self._peer_push
        writer.section(Kind.ANSWER, encode_varint(len(sendable) if pushing else 0) + positions_bytes(withheld))
        (step.push if pushing else step.have).extend(sendable)
        self._state = _State.DONE
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

    # -- initiator --------------------------------------------------------------------------------

    def _on_plan(self, turn: Turn) -> ReconcileStep:
        plan = turn.plan
        if plan is None:
            raise ReconcileProtocolError("the responder's first turn needs a PLAN")
        self._plan = plan
        self._peer_push = plan.ask_push
        step = _Report()
        if plan.plan is Plan.RANGES:
            return self._ranges_planned(turn, step)
        if turn.ranges:
            raise ReconcileProtocolError("range messages without a plan of ranges")
        if plan.plan is Plan.DECODED:
            if any(k in (Kind.SYMBOLS, Kind.TAIL) for k in turn.kinds):
                raise ReconcileProtocolError("a decoded plan carries DECODED, LISTED and LACKING only")
            self._take_decoded(turn, step)
            if not turn.lacking:
                self._state = _State.DONE
                return self._finish(step)
            return self._answer(turn, TurnWriter(self._limit), step)
        if turn.pushed_days is not None or turn.lacking:
            raise ReconcileProtocolError("DECODED or LACKING after a plan that decoded nothing")
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
        # My items above the responder's highest it codes (up to mine) are mine alone: I code the rest.
        assert plan.bound is not None
        coded = _position_after(self._keys, plan.bound)
        words, hashes = self._encoding  # type: ignore[misc]
        self._encoding = (words[:coded], hashes[:coded])
        self._known = self._keys.items_between(coded, len(self._keys))
        self._wanted = plan.symbol_end
        self._received = riblt.Symbols.empty(0, 0)
        return self._take_symbols(turn, step)

    def _ranges_planned(self, turn: Turn, step: _Report) -> ReconcileStep:
        if turn.kinds != [Kind.PLAN, Kind.RANGES]:
            raise ReconcileProtocolError("a plan of ranges carries one range message and nothing else")
        return self._start_ranges(TurnWriter(self._limit), step, initiator=False, turn=turn)

    def _on_more_symbols(self, turn: Turn) -> ReconcileStep:
        if self._wanted == 0:  # I asked the responder to size the batch: its PLAN says how
            plan = turn.plan
            assert plan is not None
            if plan.plan is Plan.RANGES:
                return self._ranges_planned(turn, _Report())
            if plan.plan is Plan.LIST:
                return self._on_region(turn, plan.day)  # type: ignore[arg-type]
            if plan.plan is not Plan.SYMBOLS or plan.symbol_end <= len(self._received) or set(turn.kinds) != {Kind.PLAN, Kind.SYMBOLS}:
                raise ReconcileProtocolError("a sized batch is a PLAN of more symbols, then the symbols")
            self._wanted = plan.symbol_end
        elif turn.plan is not None:
            raise ReconcileProtocolError("a PLAN answering a MORE that gave the batch's end")
        return self._take_symbols(turn, _Report())

    def _on_region(self, turn: Turn, day: int) -> ReconcileStep:
        """The responder listed every item it codes from ``day`` on (below it our sets agree): the
        difference is that list against mine from that day on."""
        if set(turn.kinds) - {Kind.PLAN, Kind.REGION}:
            raise ReconcileProtocolError("a plan of a list carries REGION sections only")
        coded = len(self._encoding[0])  # type: ignore[index]
        at = min(coded, self._keys.position(_day_bound(day)))
        listed = set(turn.region)
        if any(item_time(i) < day for i in turn.region[:1]):
            raise ReconcileProtocolError("a region item before the region's day")
        mine = [i for i in self._keys.items_between(at, coded) if i not in listed]
        theirs = [i for i in turn.region if self._keys.time_of(item_key(i)) != item_time(i)]
        return self._decoded(TurnWriter(self._limit), _Report(), theirs, mine, self._known)

    def _take_symbols(self, turn: Turn, step: _Report) -> ReconcileStep:
        assert self._received is not None
        for batch in turn.symbols:
            self._received.extend(batch)
        if len(self._received) != self._wanted:
            raise ReconcileProtocolError(f"{len(self._received)} coded symbols, {self._wanted} announced or asked for")
        diff = riblt.subtract(self._received, *self._encoding)  # type: ignore[misc]
        peeled = riblt.peel(diff, self._salt, max_items=len(self._keys) + self._plan.count + 64)
        writer = TurnWriter(self._limit)
        if peeled is None:
            if self._wanted >= MAX_SYMBOLS:  # give up on symbols: range reconciliation, as its initiator
                return self._start_ranges(writer, step, initiator=True)
            # The failed batch tells the difference's size far better than an estimate does, once
            # it was sized or while a fair share of its symbols is empty; otherwise (the unsized
            # first batch fell far short) the responder sizes the next from my estimator cells.
            size = riblt.difference_size(diff)
            if self._sized or size <= len(diff):
                enough = 4 * len(diff) if math.isinf(size) else math.ceil(MORE_FACTOR * size + 4 * math.sqrt(size)) + 8
                self._wanted = min(MAX_SYMBOLS, max(len(diff) + 8, enough))
                writer.section(Kind.MORE, encode_varint(self._wanted))
            else:
                levels = est.levels_for(len(self._keys))
                writer.section(Kind.MORE, encode_varint(0) + encode_varint(levels)
                               + est.cells_bytes(est.cells(self._encoding[1], levels))  # type: ignore[index]
                               + _below_days_bytes(self._keys, len(self._encoding[0])))  # type: ignore[index]
                self._wanted = 0
                self._sized = True
            self._state = _State.SENT_MORE
            return self._reply(writer, step)
        theirs, mine = peeled
        return self._decoded(writer, step, theirs, mine, self._known)

    # -- ranges -----------------------------------------------------------------------------------

    def _start_ranges(self, writer: TurnWriter, step: _Report, initiator: bool, turn: Turn | None = None,
                      tail_sent: bool = False) -> ReconcileStep:
        """Go on by version 3 ranges: as their initiator (its first message after what ``writer``
        holds), or as their responder to the range message in ``turn``. A responder that already
        sent its tail reconciles only its items up to the initiator's highest."""
        keys = self._keys
        if tail_sent:
            below = self._keys.items_between(0, len(self._encoding[0]))  # type: ignore[index]
            keys = KeySet([(item_key(i), item_time(i)) for i in below if not self._keys.is_withheld(item_key(i))],
                          [(item_key(i), item_time(i)) for i in below if self._keys.is_withheld(item_key(i))])
        self._ranges = Reconciler(keys, frame_size_limit=self._limit - _RANGES_OVERHEAD, ask_push=self._ask_push)
        self._state = _State.RANGES
        if not initiator:
            assert turn is not None
            return self._on_ranges(turn)
        inner = self._ranges.initiate()
        writer.section(Kind.RANGES, encode_varint(len(inner)) + inner)
        return self._reply(writer, step)

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
