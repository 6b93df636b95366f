"""What the records held amount to: trust's evaluation of every record, and its status changes.

    every record held ──core.trust.evaluate──▶ status: own | candidate | common | superseded | revoked

The evaluation is the core's (docs/trust.md); this module loads its inputs from the store, keeps the
latest evaluation until a record is added, and logs the status changes the morning report lists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial

import trio

from commons.core.records import Lesson, RecordType, SignedRecord, day_of
from commons.core.trust import Cause
from commons.core.trust import LessonState, LessonStatus, TrustPolicy, TrustView
from commons.core.trust import Fact
from commons.core.trust import IncrementalTrust
from commons.errors import StoreError
from commons.store.record_reader import RecordReader
from commons.store import records as record_store
from commons.store import reviews as review_store
from commons.store.db import Store

READ_CHUNK = 10_000  # records decoded at a time when the store is read whole (~1 KB each decoded)

# --------------------------------------------------------------------------------------------
# What the records amount to


class _ByHeldId(Mapping):
    """A mapping over the ids of the records held (``_held``), answering for each what it derives."""

    _held: Mapping[bytes, object]

    def __contains__(self, rid: object) -> bool:
        return rid in self._held

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._held)

    def __len__(self) -> int:
        return len(self._held)


class HeldRecords(_ByHeldId, Mapping[bytes, SignedRecord]):
    """Every record held, by id: which ones from the evaluation's facts, the records themselves
    read from the store when asked for (``store.record_reader``).

    Trust holds only the facts it judges by (``core.trust_facts``); what the person is shown (a
    lesson's text, a revocation's reason) is read when it is shown, so holding 10^6 records costs
    their facts, not 1 KB each decoded (issue #18). Revocations are held whole by the evaluation."""

    def __init__(self, facts: Mapping[bytes, Fact], reader: RecordReader,
                 recent: Mapping[bytes, SignedRecord] | None = None) -> None:
        # ``recent``: records at hand decoded (the batch just taken in: its first statuses are logged)
        self._held = self._facts = facts
        self._reader, self._recent = reader, recent or {}

    def _key(self, fact: Fact) -> bytes:
        return bytes((fact.type.tag,)) + fact.id

    def __getitem__(self, rid: bytes) -> SignedRecord:
        fact = self._facts[rid]
        if isinstance(fact, SignedRecord):
            return fact
        signed = self._recent.get(rid) or self._reader.get(self._key(fact))
        if signed is None:
            raise StoreError(f"record {rid.hex()} is held by the trust evaluation but not in {self._reader.path}: "
                             "the database changed under this node; restart it")
        return signed

    def get_many(self, rids: Iterable[bytes]) -> list[SignedRecord]:
        """The records of ``rids`` (all held), in that order, read in one go."""
        facts = [self._facts[rid] for rid in rids]
        recent = self._recent
        found = self._reader.get_many(self._key(f) for f in facts
                                      if not isinstance(f, SignedRecord) and f.id not in recent)
        return [f if isinstance(f, SignedRecord) else recent.get(f.id) or found.get(self._key(f)) or self[f.id]
                for f in facts]

    def of_type(self, rtype: RecordType) -> list[SignedRecord]:
        return self.get_many([rid for rid, fact in self._facts.items() if fact.type is rtype])


@dataclass(frozen=True)
class Held:
    """Every record the node holds, when each arrived and how, and what trust makes of them."""

    view: TrustView
    records: HeldRecords
    received: Mapping[bytes, float]  # record id -> records.received_at
    origin: Mapping[bytes, str]  # record id -> own | peer | import
    me: bytes

    def lesson(self, rid: bytes) -> Lesson | None:
        signed = self.records.get(rid)
        return signed.record if signed is not None and isinstance(signed.record, Lesson) else None

    def state(self, rid: bytes) -> LessonState | None:
        return self.view.lessons.get(rid)

    def received_lessons(self, *statuses: LessonStatus) -> list[SignedRecord]:
        """Lessons by other authors with one of ``statuses``, in the order they arrived."""
        found = self.records.get_many([rid for rid, state in self.view.lessons.items()
                                       if state.author != self.me and state.status in statuses])
        return sorted(found, key=lambda s: (self.received[s.id], s.id))


class Origins(_ByHeldId, Mapping[bytes, str]):
    """How each record held arrived (own | peer | import): almost all came from peers, so only the
    others are kept (a dict entry per record was ~100 bytes of every record held)."""

    def __init__(self, held: Mapping[bytes, object], others: Mapping[bytes, str]) -> None:
        self._held, self._others = held, others

    def __getitem__(self, rid: bytes) -> str:
        origin = self._others.get(rid)
        if origin is None:
            if rid not in self._held:
                raise KeyError(rid)
            origin = "peer"
        return origin


class TrustEvaluation:
    """The evaluation of every record held, for one node under one policy, kept up to date.

    A ``NodeContext`` owns one. Records are never changed, only added (or refused as dead), so the
    evaluation takes in only what arrived since it last looked (``records.seq``): the core's
    :class:`IncrementalTrust` recomputes the lessons those records touch. Whatever can change what
    is dead (a revocation, a newly refused id) or a new day makes it again, from the records in
    memory, in a worker thread, swapped in whole; the store is read in full only once, a chunk at a
    time, and what is read is judged once (``read``, then the next ``held``).
    """

    def __init__(self, me: bytes, policy: TrustPolicy) -> None:
        self.me = me
        self.policy = policy
        self._trust: IncrementalTrust | None = None
        self._reader: RecordReader | None = None
        self._path: str | None = None
        self._seq = 0
        self._received: dict[bytes, float] = {}
        self._origin: dict[bytes, str] = {}  # record id -> own | import: every other came from a peer
        self._touched: set[bytes] | None = None  # lessons recomputed since the last take (None: all)
        self._held: Held | None = None
        self._lock = trio.Lock()
        self._refused: frozenset[bytes] = frozenset()  # ids refused as dead, read when the count moves
        self._refused_count = -1
        self._offered: dict[bytes, SignedRecord] = {}  # records just stored, handed over decoded
        self._recent: dict[bytes, SignedRecord] = {}  # the last batch taken in, decoded
        self._unjudged = False  # the facts of every record are read, the evaluation not yet made

    async def read(self, store: Store, now: float,
                   each_chunk: Callable[[list[SignedRecord]], None] | None = None) -> None:
        """Read every record held into the evaluation, a chunk at a time, without judging them:
        the next :meth:`held` does, once. ``each_chunk`` is handed each chunk decoded as it is read:
        a daemon starting takes the keys it serves from the same pass (each record decoded once),
        and builds its key set before the judging builds the evaluation's state (the two
        transients of 10^6 records never add up)."""
        async with self._lock:
            _, refused = await self._watermark(store)
            await self._read(store, day_of(now), refused, each_chunk)

    async def _watermark(self, store: Store) -> tuple[int, frozenset[bytes]]:
        """The highest seq stored, and the ids refused as dead (read again only when their count moves)."""
        last, refused_count = await record_store.watermark(store)
        if refused_count != self._refused_count or self._path != str(store.path):
            self._refused = frozenset(await record_store.refused_dead_ids(store))
            self._refused_count = refused_count
        return last, self._refused

    async def take_in(self, store: Store, now: float) -> None:
        """Take in what arrived without judging the lessons it touched, when that can wait: a
        node far behind takes in many batches, and the next :meth:`held` judges each lesson
        they touched once (a batch that moves the dead, or a new day, is judged at once)."""
        async with self._lock:
            await self._catch_up(store, now, judge=False)

    async def held(self, store: Store, now: float) -> Held:
        """Every record held and what trust makes of them, today (the same object until one moves)."""
        async with self._lock:  # one catch-up at a time: a batch taken in twice or lost is a wrong view
            await self._catch_up(store, now, judge=True)
            if self._held is None:  # its mappings are live; a new object says that something moved
                held = HeldRecords(self._trust.records, self._reader, self._recent)
                self._held = Held(self._trust.view, held, self._received, Origins(self._received, self._origin),
                                  self.me)
            return self._held

    async def _catch_up(self, store: Store, now: float, judge: bool) -> None:
        today = day_of(now)
        last, refused = await self._watermark(store)
        if self._trust is None or self._path != str(store.path) or last < self._seq:
            await self._read(store, today, refused)
        if self._unjudged:
            await self._judge()
        trust = self._trust
        if last > self._seq:
            batch = await self._arrived(store)
            if refused == trust.refused and today == trust.today and not trust.moves_the_dead(batch):
                self._touch(trust.add(batch, judge=judge))  # the common case: only what the batch touches
                self._held = None
            else:
                await self._remake([*trust.records.values(), *batch], today, refused)
        elif refused != trust.refused or today != trust.today:
            await self._remake(trust.records.values(), today, refused)
        elif judge and trust.pending:  # batches taken in unjudged: their lessons, once each
            trust.judge_pending()
            self._held = None

    def offer(self, records: Iterable[SignedRecord]) -> None:
        """Records just stored, already decoded: the next catch-up takes them from here instead
        of reading and decoding them again (those not stored are never asked for, and dropped then)."""
        self._offered.update((signed.id, signed) for signed in records)

    async def _arrived(self, store: Store) -> list[SignedRecord]:
        """What arrived since the last look, in arrival order; only what was not offered is read."""
        self._seq, arrived = await record_store.arrived_keys_since(store, self._seq)
        offered, self._offered = self._offered, {}
        ids = [row[0][1:] for row in arrived]
        missing = [row[0] for row, rid in zip(arrived, ids) if rid not in offered]
        if missing:  # stored by someone else (the CLI), or not handed over: read and decoded
            offered.update((key[1:], signed) for key, signed in self._reader.get_many(missing).items())
        batch = [offered[rid] for rid in ids]
        received, others = self._received, self._origin
        at = None  # a batch was stored at one time: one float object for all of it, not one each
        for (_, received_at, origin, _), signed in zip(arrived, batch):
            if signed.id not in received:  # the first arrival counts
                at = at if at == received_at else received_at
                received[signed.id] = at
                if origin != "peer":
                    others[signed.id] = origin
        self._recent = offered  # what the status log shows next (those not stored are never asked for)
        return batch

    @property
    def pending(self) -> bool:
        """Whether records were taken in (:meth:`take_in`) whose lessons are not judged yet."""
        return self._trust is not None and self._trust.pending

    def take_touched(self) -> set[bytes] | None:
        """The lessons recomputed since the last call (None: every lesson), and start counting again."""
        touched, self._touched = self._touched, set()
        return touched

    def _touch(self, lessons: set[bytes] | None) -> None:
        if lessons is None or self._touched is None:
            self._touched = None
        else:
            self._touched |= lessons

    async def _read(self, store: Store, today: int, refused: frozenset[bytes],
                    each_chunk: Callable[[list[SignedRecord]], None] | None = None) -> None:
        """Every record's facts and arrival, in one pass over the store, not judged yet."""
        seq = await record_store.last_seq(store)  # before the records: what arrives meanwhile is taken in later
        self._trust = self._held = None  # the evaluation held is let go before another is read
        trust = IncrementalTrust(me=self.me, policy=self.policy, today=today, refused=refused)
        facts = trust.records
        received: dict[bytes, float] = {}
        others: dict[bytes, str] = {}
        # Records stored together share one arrival time: one float object for each (a float and
        # a second id object per record were ~90 bytes of every record held).
        times: dict[float, float] = {}
        async for chunk in record_store.in_chunks(store, READ_CHUNK):  # never all decoded at once
            records = [arrived.signed for arrived in chunk]
            trust.hold(records)
            for signed, received_at, origin in chunk:
                rid = facts[signed.id].id  # the id object the fact holds
                received[rid] = times.setdefault(received_at, received_at)
                if origin != "peer":
                    others[rid] = origin
            if each_chunk is not None:
                each_chunk(records)
        del times
        self._path, self._seq, self._offered, self._recent = str(store.path), seq, {}, {}
        self._received, self._origin = received, others
        if self._reader is not None:
            self._reader.close()
        self._reader = RecordReader(store.path)
        self._trust, self._unjudged = trust, True

    async def _judge(self) -> None:
        """Make the evaluation of the facts read, in place, in a worker thread (no second copy of
        them). Should this fail, the next look reads the store again."""
        trust, self._trust, self._held = self._trust, None, None
        await trio.to_thread.run_sync(trust.rebuild)
        self._trust, self._unjudged = trust, False
        self._touch(None)

    async def _remake(self, records: Iterable, today: int, refused: frozenset[bytes]) -> None:
        """Evaluate ``records`` (records, or the facts an evaluation holds) again, in a worker thread.

        The evaluation held is let go first (a view handed out keeps it alive until dropped): two
        at once would double what holding 10^6 records costs. Should this fail, the next look
        loads from the store again."""
        made = partial(IncrementalTrust.of, list(records), me=self.me, policy=self.policy, today=today,
                       refused=refused)
        self._trust = self._held = None
        self._trust = await trio.to_thread.run_sync(made)
        self._held = None
        self._touch(None)


def describe_takedown(held: Held, rid: bytes) -> str:
    """Why a record is dead, in words (the revocation's reason, and the chain that carried it)."""
    takedown = held.view.revoked.get(rid)
    if takedown is None:
        return ""
    reasons = [held.records[r].record.reason for r in takedown.revocations if r in held.records]
    because = "; ".join(dict.fromkeys(reasons)) or "revoked"
    if takedown.cause is Cause.KEY_REVOKED:
        return f"its author key was revoked: {because}"
    if takedown.cause is Cause.PROVENANCE:
        origin = takedown.chain[0].hex()[:12] if takedown.chain else "?"
        return f"derived from revoked lesson {origin} (through {len(takedown.chain)} step(s)): {because}"
    if takedown.cause is Cause.UNRESOLVED:
        origin = takedown.chain[0].hex()[:12] if takedown.chain else "?"
        return (f"derived from lesson {origin}, which this node never received and a revocation names "
                f"(held back until it arrives): {because}")
    return f"revoked: {because}"


def status_why(held: Held, state: LessonState) -> str:
    if state.status is LessonStatus.REVOKED:
        return describe_takedown(held, state.id)
    if state.status is LessonStatus.SUPERSEDED and state.superseded_by:
        return f"superseded by {state.superseded_by.hex()[:12]}"
    if state.status is LessonStatus.COMMON and state.trusted_author:
        return "by one of [trust] authors: common on arrival"
    return (f"{state.recent_confirmations} confirmation(s) and {state.recent_failures} failure(s) among the "
            f"latest counted outcomes; {state.confirmations} independent confirmation(s) in all")


async def refresh(store: Store, evaluation: TrustEvaluation, now: float) -> list[review_store.TrustChange]:
    """Log every lesson whose status changed since the last refresh (promoted, faded, revoked…).

    A lesson's first status is remembered silently unless it arrives common or revoked: the
    changes returned are the ones the morning report lists.
    """
    return list((await log_changes(store, evaluation, now)).changes)


def reported(before: str | None, after: str) -> bool:
    """Whether a status change is one the morning report lists (a lesson arriving as a candidate
    or as one's own, or superseded, is remembered silently)."""
    return before is not None or after in ("common", "revoked")


def shown(before: str | None, after: str) -> bool:
    """Whether a status change can change the memory folder (a lesson arriving as a candidate or
    as one's own cannot: candidates are never shown, own lessons are shown from the store)."""
    return before is not None or after not in ("candidate", "own")


@dataclass(frozen=True)
class Logged:
    """What :func:`log_changes` found: the changes the report lists, and whether the memory folder
    can have changed (a silent first status can show too: a lesson arriving superseded)."""

    changes: tuple[review_store.TrustChange, ...]
    shown: bool


async def log_changes(store: Store, evaluation: TrustEvaluation, now: float) -> Logged:
    """Remember every lesson's status that moved since the last call, and log the reported changes.

    Only the lessons the evaluation recomputed since then are compared with the statuses logged.
    A node catching up sees a first status for every lesson that arrives, and almost all are
    silent: their text and reason are neither read nor made, only their status is remembered.
    """
    held = await evaluation.held(store, now)
    touched = evaluation.take_touched()
    lessons = held.view.lessons
    previous = await review_store.trust_statuses(store, touched)
    moved = []  # (lesson id, state, status before, status now)
    for rid in lessons if touched is None else touched:
        state = lessons.get(rid)
        if state is not None:
            after, before = _STATUS_VALUE[state.status], previous.get(rid)
            if before != after:
                moved.append((rid, state, before, after))
    listed = sorted(m for m in moved if reported(m[2], m[3]))  # the log's order: by lesson id
    texts = held.records.get_many(rid for rid, *_ in listed)  # one read for all their texts
    changes = tuple(review_store.TrustChange(rid, before, after, signed.record.text, status_why(held, state), now)
                    for (rid, state, before, after), signed in zip(listed, texts))
    if moved:
        async with store.transaction():
            await review_store.add_trust_changes(store, [(rid, after) for rid, _, _, after in moved], changes, now)
    return Logged(changes, any(shown(before, after) for _, _, before, after in moved))


_STATUS_VALUE = {status: status.value for status in LessonStatus}  # an enum's .value is a descriptor call


def change_dict(change: review_store.TrustChange) -> dict:
    return {"lesson": change.record_id.hex(), "from": change.before, "to": change.after,
            "text": change.text, "why": change.why}
