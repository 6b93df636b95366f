"""Range-based set reconciliation of record keys (anti-entropy between two commons nodes).

Two nodes each hold a set of record keys, each at the day its record was created, and want to
learn which keys the other lacks, at a cost that grows with the difference and not with the store.
This follows Aljoscha Meyer's range-based set reconciliation and the negentropy wire protocol:
both sides sort their items by (time, key), exchange fingerprints of item ranges, split ranges
whose fingerprints differ, and swap explicit item lists once a range is small. The full
specification, with the byte layout, is ``protocol/reconcile.md``; vectors are in
``protocol/vectors/reconcile.json``. The items and the key set are ``reconcile/keyset.py``, the
message encoding ``reconcile/wire.py``; this module is the session.

Where this differs from negentropy, and why:

* Both sides learn the difference. The side answering an item list replies with a ``Diff`` -- the
  items it holds that the peer lacks, and the *positions* in the peer's list of the items it
  lacks -- instead of its own full list, so the answer costs about one item per difference.
* A side may ask, per list (``PushList`` instead of ``IdList``), to be pushed the records it lacks
  rather than told their keys: the Diff then only counts them and its sender pushes the records
  (``push``), as negentropy's initiator uploads what its responder lacks without listing it. The
  asker takes them against the count (``expect``, checked by ``reconcile_push.PushWindow``). A
  side asks (``ask_push``) when no other peer may be sending it the same records: records pushed
  by two peers at once would both arrive, while keys named by two are fetched from one.
* A message that asks nothing (only Skip / Diff ranges) is final: its receiver does not answer.
* Differences are delivered in (time, key) order across the whole session: a key is released to
  the caller only once every range below it is settled.
* How a side chooses its ranges (version 3, measured in ``tests/benchmarks/bench_negentropy.py``):
  a split uses as few buckets as reach item lists in the same number of levels; neighbouring
  ranges that all differ (a dense difference) are listed up to 64 items instead of split again;
  lists that touch go as one. Either side may choose differently: any choice reconciles exactly.
* A key can be *withheld* ("I hold it but will not send it": refused by policy, a death
  certificate). It counts like any other key -- so the peer never offers it to us -- and when the
  peer lacks it the peer is told so and reports it under ``withheld``, not ``need``.

Sans-I/O: bytes in, bytes out; nothing here reads a clock or a socket.
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field

from commons.core.reconcile.keyset import (
    FINGERPRINT_SIZE,
    ID_SIZE,
    ITEM_SIZE,
    KEY_SIZE,
    TAG_LESSON,
    TAG_REVOCATION,
    TAG_VERIFICATION,
    TAG_VOUCH,
    TIME_SIZE,
    KeySet,
    ReconcileError,
    ReconcileProtocolError,
    ReconcileUsageError,
    ReconcileVersionError,
    encode_varint,
    fingerprint,
    item_key,
    make_item,
    make_key,
    split_bound,
)
from commons.core.reconcile.push import Expectation, PushWindow
from commons.core.reconcile.wire import (
    INFINITY,
    LISTS,
    MAX_BOUND_SIZE,
    MAX_ID_LIST,
    MAX_LISTED_ITEM_SIZE,
    MAX_MESSAGE_SIZE,
    OFFER_V4,
    PROTOCOL_VERSION,
    TAIL_SIZE,
    Mode,
    Range,
    Writer,
    above,
    decode_message,
    floor_day,
    items_bytes,
    positions_bytes,
)

__all__ = [
    "DEFAULT_BRANCHING", "DEFAULT_FRAME_SIZE_LIMIT", "DEFAULT_ID_LIST_THRESHOLD", "FINGERPRINT_SIZE",
    "ID_SIZE", "ITEM_SIZE", "KEY_SIZE", "MAX_ID_LIST", "MAX_MESSAGE_SIZE", "MIN_FRAME_SIZE_LIMIT",
    "PROTOCOL_VERSION", "TAG_LESSON", "TAG_REVOCATION", "TAG_VERIFICATION", "TAG_VOUCH", "TIME_SIZE",
    "Exchange", "Expectation", "KeySet", "Mode", "PushWindow", "ReconcileError", "ReconcileProtocolError", "ReconcileStatistics",
    "ReconcileStep", "ReconcileUsageError", "ReconcileVersionError", "Reconciler", "encode_varint",
    "fingerprint", "make_item", "make_key", "run_in_memory",
]

DEFAULT_BRANCHING = 16
DEFAULT_ID_LIST_THRESHOLD = 16  # measured: see protocol/reconcile.md, Parameters
DEFAULT_FRAME_SIZE_LIMIT = 65536
MIN_FRAME_SIZE_LIMIT = 2048
_ECHO_SIZE = MAX_BOUND_SIZE + 1 + FINGERPRINT_SIZE  # a range echoed back as a Fingerprint


@dataclass(frozen=True)
class ReconcileStep:
    """What one incoming message taught, and what to answer.

    ``have``: keys I hold and will send that the peer lacks, when the peer fetches them (I named
    them). ``push``: keys I hold that the peer lacks and has been told to expect: send their
    records now, unasked (after ``reply``). ``need``: keys the peer holds and will send that I lack
    (fetch them). ``withheld``: keys the peer holds but will not send, that I lack (known ids: do
    not fetch them). Each list is in (day, key) order, and no key is reported twice in a session.
    ``expect``: ranges in which the peer will push records I lack, and how many (take them as if
    fetched: ``PushWindow``). ``reply`` is None when there is nothing to send; ``done`` is True
    once the session is over (a final reply still has to be sent)."""

    reply: bytes | None
    have: list[bytes] = field(default_factory=list)
    need: list[bytes] = field(default_factory=list)
    withheld: list[bytes] = field(default_factory=list)
    done: bool = False
    push: list[bytes] = field(default_factory=list)
    expect: list[Expectation] = field(default_factory=list)
    need_items: list[bytes] = field(default_factory=list)  # the items of ``need``, in its order
    more: tuple[bytes, ...] = ()  # further messages of the reply's turn (version 4), sent after it

    @property
    def replies(self) -> tuple[bytes, ...]:
        """Every message to send, in order: ``reply`` then ``more``."""
        return () if self.reply is None else (self.reply, *self.more)


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
        ask_push: bool = True,
        offer_v4: bool = False,
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
        self._list_mode = Mode.PUSH_LIST if ask_push else Mode.ID_LIST
        # Room one range may need: a split, an IdList, or the smallest useful Diff (one key and a
        # position for each key of the largest IdList a peer may send).
        room = frame_size_limit - 1 - (MAX_BOUND_SIZE + 1) - TAIL_SIZE
        # The threshold in a dense run (see reconcile()): as long a list as one frame leaves room for.
        self._dense = max(id_list_threshold, min(MAX_ID_LIST, (room - MAX_BOUND_SIZE - 11) // (MAX_LISTED_ITEM_SIZE + 3)))
        self._reserve = max(
            branching * (MAX_BOUND_SIZE + 1 + FINGERPRINT_SIZE),
            MAX_BOUND_SIZE + 11 + self._dense * (MAX_LISTED_ITEM_SIZE + 3),
            MAX_BOUND_SIZE + 16 + (MAX_LISTED_ITEM_SIZE + 3) + 2 * MAX_ID_LIST,
        )
        if self._reserve > room:
            raise ReconcileUsageError("frame_size_limit too small for this branching and id_list_threshold")
        self._state = _State.FRESH
        self._offer_v4 = offer_v4  # open the first message with the version 4 offer (a Skip, reconcile.md)
        self._sent_lists: dict[bytes, list[bytes]] = {}  # IdLists of my last message, by lower bound
        self._held: list[tuple[bytes, str]] = []  # learned differences not yet released, (item, list)
        self._expect: list[Expectation] = []  # pushes announced in the message being read
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
        writer = Writer(self._limit, self._list_mode)
        lower = b""
        if self._offer_v4:  # an empty Skip range a version 3 peer passes over, a version 4 peer reads
            writer.skip(OFFER_V4)
            lower = OFFER_V4
        self._split(writer, lower, INFINITY, 0, len(self._keys))
        self._state = _State.AWAITING_REPLY
        message = writer.finish()
        self._sent_lists = writer.lists
        return self._sent(message)

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
                if any(p >= len(mine) or above(mine[p], rng.upper) for p in rng.lacking):
                    raise ReconcileProtocolError("Diff position outside the IdList it answers")
        self._stats[1] += 1
        self._stats[3] += len(message)
        asked = any(r.mode is Mode.FINGERPRINT or r.mode in LISTS for r in ranges)
        writer = Writer(self._limit, self._list_mode)
        full = False  # out of room: open ranges are only echoed back as my fingerprints from here on
        closed = False  # the closing range is written: only Diffs are still taken in
        spans = [self._span(rng) for rng in ranges]
        opened = [span is not None and span[3] for span in spans]
        for i, rng in enumerate(ranges):
            if rng.mode is Mode.DIFF:
                self._take_diff(rng, sent_lists[rng.lower])
                if rng.pushed:
                    self._expect.append(Expectation(rng.lower, rng.upper, rng.pushed))
                writer.skip(rng.upper)
                continue
            if closed:
                continue
            start, end, mine, differs = spans[i]  # type: ignore[misc]
            if not differs:
                writer.skip(rng.upper)
                continue
            full = full or writer.room() < self._reserve
            if full:
                # Echo the range as my fingerprint: the peer answers it at the same depth next
                # time, instead of starting again from the top of everything that is left.
                if writer.room() < _ECHO_SIZE:
                    self._close(writer, rng.lower)
                    closed = True
                    continue
                writer.range(rng.lower, rng.upper, Mode.FINGERPRINT, mine)
            elif rng.mode is Mode.FINGERPRINT:
                # A run of neighbouring ranges that all differ is a dense difference (a partition
                # healed, a day missed): longer lists cost less there than another level of
                # fingerprints. A lone difference (scattered) keeps the short threshold.
                dense = (i > 0 and opened[i - 1]) or (i + 1 < len(ranges) and opened[i + 1])
                self._split(writer, rng.lower, rng.upper, start, end, self._dense if dense else self._threshold)
            else:
                cut = self._answer_id_list(writer, rng, self._keys.items_between(start, end))
                if cut is not None:
                    self._close(writer, cut)
                    closed = True
        if not asked:  # a final message: nothing to answer
            self._state = _State.DONE
            return self._release(None, INFINITY)
        reply = self._sent(writer.finish())
        self._sent_lists = writer.lists
        self._state = _State.AWAITING_REPLY if writer.asks else _State.DONE
        return self._release(reply, writer.first_open if writer.asks else INFINITY)

    # -- building ranges -------------------------------------------------------------------------

    def _span(self, rng: Range) -> tuple[int, int, bytes, bool] | None:
        """Where an incoming range lies in my items, my fingerprint of it, and whether it asks
        something of me (an IdList, or a Fingerprint unlike mine); None for a Diff."""
        if rng.mode is Mode.DIFF:
            return None
        start, end = self._keys.position(rng.lower), self._keys.position(rng.upper)
        mine = self._keys.fingerprint_between(start, end)
        differs = rng.mode in LISTS or (rng.mode is Mode.FINGERPRINT and rng.fingerprint != mine)
        return start, end, mine, differs

    def _split(
        self, writer: Writer, lower: bytes, upper: bytes | None, start: int, end: int, threshold: int | None = None
    ) -> None:
        """Answer a range whose fingerprints differ: my keys if few, else fingerprints of buckets."""
        count = end - start
        if count <= (self._threshold if threshold is None else threshold):
            keys = self._keys.items_between(start, end)
            writer.id_list(lower, upper, keys, [i for i, k in enumerate(keys) if self._keys.is_withheld(item_key(k))])
            return
        buckets = self._buckets(count)
        bucket_lower = lower
        for b in range(buckets):
            lo = start + count * b // buckets
            hi = start + count * (b + 1) // buckets
            if b == buckets - 1:
                bucket_upper = upper
            else:
                last, first = self._keys.items_between(hi - 1, hi + 1)
                bucket_upper = split_bound(last, first)
            writer.range(bucket_lower, bucket_upper, Mode.FINGERPRINT, self._keys.fingerprint_between(lo, hi))
            bucket_lower = bucket_upper

    def _buckets(self, count: int) -> int:
        """How many buckets to split ``count`` items into: as few as reach lists in the same number
        of levels as ``branching`` buckets would, aiming at three quarters of the threshold so that
        a peer holding a few more items in a bucket still answers it with a list, not a level more.
        100,000 items at branching 16 and threshold 16 (aim 12) take 4 levels either way: 16
        buckets a level (100,000 -> 6,250 -> 391 -> 24 -> 2) or 10 (-> 10,000 -> 1,000 -> 100 -> 10)."""
        aim = max(1, self._threshold - self._threshold // 4)
        levels, reach = 1, self._branching * aim
        while reach < count:
            levels, reach = levels + 1, reach * self._branching
        buckets = 2
        while buckets**levels * aim < count:
            buckets += 1
        return min(self._branching, buckets, count)  # never an empty bucket: bounds must increase

    def _answer_id_list(self, writer: Writer, rng: Range, mine: list[bytes]) -> bytes | None:
        """Answer the peer's IdList with a Diff; if it does not fit, answer up to a cut and return it.

        Answering a PushList, the items I hold that the list lacks are pushed, not listed: the Diff
        carries their count and the caller sends the records. Only those I withhold are listed then
        (the peer must know them, or it would find them again every session)."""
        theirs = set(rng.items)
        ours = set(mine)
        extra = [k for k in mine if k not in theirs]  # mine, they lack
        pushing = rng.mode is Mode.PUSH_LIST
        listed = [k for k in extra if not pushing or self._keys.is_withheld(item_key(k))]
        pushed = [k for k in extra if pushing and not self._keys.is_withheld(item_key(k))]
        lacking = [i for i, k in enumerate(rng.items) if k not in ours]  # theirs, I lack
        fits = self._fitting(writer.room() - (MAX_BOUND_SIZE + 16) - len(positions_bytes(lacking)), rng.lower, listed)
        cut = None
        if fits < len(listed):
            below = [k for k in (*mine, *rng.items) if k < listed[fits]]
            cut = split_bound(max(below), listed[fits])  # the reserve guarantees fits >= 1
            listed = listed[:fits]
            pushed = [k for k in pushed if k < cut]
            lacking = [i for i in lacking if rng.items[i] < cut]
        upper = rng.upper if cut is None else cut
        if pushed or listed or lacking or cut is not None:
            withheld = [i for i, k in enumerate(listed) if self._keys.is_withheld(item_key(k))]
            payload = (
                encode_varint(len(pushed))
                + encode_varint(len(listed))
                + items_bytes(listed, floor_day(rng.lower))
                + positions_bytes(withheld)
                + positions_bytes(lacking)
            )
            writer.range(rng.lower, upper, Mode.DIFF, payload)
        else:
            writer.skip(upper)
        their = [rng.items[i] for i in lacking]
        self._hold(listed, their, rng.withheld, lacking)
        self._hold(pushed, [], frozenset(), (), mine_as="push")
        return cut

    def _fitting(self, budget: int, lower: bytes, items: list[bytes]) -> int:
        """How many of ``items`` (the first ones) a Diff from ``lower`` can list in ``budget`` bytes,
        counting 3 bytes of withheld position for each withheld one."""
        day, used = floor_day(lower), 0
        for count, item in enumerate(items):
            this = int.from_bytes(item[:TIME_SIZE], "big")
            used += len(encode_varint(this - day)) + KEY_SIZE + (3 if self._keys.is_withheld(item_key(item)) else 0)
            if used > budget:
                return count
            day = this
        return len(items)

    def _take_diff(self, rng: Range, my_list: list[bytes]) -> None:
        self._hold([my_list[p] for p in rng.lacking], list(rng.items), rng.withheld, range(len(rng.items)))

    def _hold(
        self, mine: list[bytes], theirs: list[bytes], their_withheld: frozenset[int], positions: Iterable[int],
        mine_as: str = "have",
    ) -> None:
        """Keep learned differences until every range below them is settled."""
        for key in mine:
            if not self._keys.is_withheld(item_key(key)):
                self._held.append((key, mine_as))
        for key, pos in zip(theirs, positions):
            if item_key(key) not in self._keys:
                self._held.append((key, "withheld" if pos in their_withheld else "need"))

    def _close(self, writer: Writer, lower: bytes) -> None:
        """Out of room: one Fingerprint range covers everything from ``lower`` on; it is redone later."""
        start = self._keys.position(lower)
        writer.range(lower, INFINITY, Mode.FINGERPRINT, self._keys.fingerprint_between(start, len(self._keys)))

    def _release(self, reply: bytes | None, frontier: bytes | None) -> ReconcileStep:
        ready = sorted(h for h in self._held if frontier is None or h[0] < frontier)
        self._held = [h for h in self._held if not (frontier is None or h[0] < frontier)]
        lists: dict[str, list[bytes]] = {"have": [], "need": [], "withheld": [], "push": []}
        need_items = []  # where each needed key lies: gossip leaves those another peer pushes
        for item, which in ready:
            if item not in self._reported:
                self._reported.add(item)
                lists[which].append(item_key(item))
                if which == "need":
                    need_items.append(item)
        expect, self._expect = self._expect, []
        return ReconcileStep(reply=reply, done=self.done, expect=expect, need_items=need_items, **lists)

    def _sent(self, message: bytes) -> bytes:
        self._stats[0] += 1
        self._stats[2] += len(message)
        return message


@dataclass(frozen=True)
class Exchange:
    """A whole session run in memory: every message in wire order, what each side learned, and the
    records each side pushed, delivered to the other once it has read the message announcing them.

    The tuples hold one list of items per side, initiator first: ``named`` its ``have`` (the peer
    fetches them), ``pushed`` its ``push``, ``fetched`` its ``need``, ``received`` what was pushed
    to it and taken against an announcement, ``unexpected`` what was pushed to it unannounced
    (gossip treats those as unrequested; none between honest peers)."""

    messages: list[bytes]
    initiator_steps: list[ReconcileStep]
    responder_steps: list[ReconcileStep]
    named: tuple[list[bytes], list[bytes]] = ([], [])
    pushed: tuple[list[bytes], list[bytes]] = ([], [])
    fetched: tuple[list[bytes], list[bytes]] = ([], [])
    received: tuple[list[bytes], list[bytes]] = ([], [])
    unexpected: tuple[list[bytes], list[bytes]] = ([], [])
    turns: int = 0  # times the direction changed, plus one: version 4 may send several messages a turn

    @property
    def round_trips(self) -> float:
        return (self.turns or len(self.messages)) / 2

    def learned(self, initiator: bool) -> tuple[list[bytes], list[bytes], list[bytes]]:
        """(have, need, withheld) keys of one side. ``have`` is what the peer fetches from it merged,
        in item order, with what it pushed; ``need`` what it fetches merged with what was pushed to
        it. Each merged stream keeps its own delivery order, so one out of order still shows."""
        side = 0 if initiator else 1
        steps = self.initiator_steps if initiator else self.responder_steps
        return (
            [item_key(i) for i in heapq.merge(self.named[side], self.pushed[side])],
            [item_key(i) for i in heapq.merge(self.fetched[side], self.received[side])],
            [k for s in steps for k in s.withheld],
        )


def run_in_memory(initiator, responder, max_messages: int = 10_000) -> Exchange:
    """Run two reconcilers against each other without I/O (for tests, vectors and simulations).

    Either may be a version 3 :class:`Reconciler` or anything with its surface (version 4 sends a
    turn of several messages at once). What a side pushes is delivered once the other side has read
    the turn that announced it (gossip sends the records after it) and is checked against the other
    side's announcements."""
    sides = (initiator, responder)
    turn_messages: list[bytes] = [initiator.initiate()]
    messages: list[bytes] = []
    steps: tuple[list[ReconcileStep], list[ReconcileStep]] = ([], [])
    windows = (PushWindow(1 << 40), PushWindow(1 << 40))
    lists: dict[str, tuple[list[bytes], list[bytes]]] = {
        name: ([], []) for name in ("named", "pushed", "fetched", "received", "unexpected", "in_flight")
    }

    def deliver(to: int) -> None:
        for item in lists["in_flight"][1 - to]:
            lists["received" if windows[to].admit(item) else "unexpected"][to].append(item)
        lists["in_flight"][1 - to].clear()

    turn, turns = 1, 0  # turn 0: the initiator reads, 1: the responder reads
    while turn_messages:
        replies: list[bytes] = []
        for message in turn_messages:
            if len(messages) >= max_messages:
                raise ReconcileUsageError(f"no end after {max_messages} messages")
            messages.append(message)
            step = sides[turn].reconcile(message)
            steps[turn].append(step)
            windows[turn].add(step.expect)
            mine, peer = sides[turn]._keys, sides[1 - turn]._keys
            pushed = [make_item(mine.time_of(k) or 0, k) for k in step.push]
            lists["in_flight"][turn].extend(pushed)
            lists["pushed"][turn].extend(pushed)
            lists["named"][turn].extend(make_item(mine.time_of(k) or 0, k) for k in step.have)
            lists["fetched"][turn].extend(make_item(peer.time_of(k) or 0, k) for k in step.need)
            replies.extend(step.replies)
        deliver(turn)
        turns += 1
        turn_messages, turn = replies, 1 - turn
    deliver(0)
    deliver(1)
    return Exchange(messages, steps[0], steps[1], lists["named"], lists["pushed"], lists["fetched"],
                    lists["received"], lists["unexpected"], turns)
