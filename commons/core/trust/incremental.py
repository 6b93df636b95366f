"""Trust kept up to date as records arrive: the result of :func:`commons.core.trust.evaluation.evaluate`,
recomputed only for the lessons a batch touches.

A node catching up takes in records a batch at a time; re-evaluating everything held after each
batch made intake quadratic (issue #18). :class:`IncrementalTrust` keeps the evaluation's
intermediate state (lessons, verifications by lesson, the web of trust, provenance authors, the
naivety index, successors) and, for each batch, works out which lessons' verdicts can have moved:

* a verification: the lesson it verifies;
* a lesson: itself, the verifications that waited for it, the lesson it supersedes, every held
  descendant (its provenance authors changed), and the lessons its author verified that it may now
  have written first (the naivety rule);
* a vouch for a new edge: the web of trust grows by a search from its subject bounded by the
  depth (:class:`commons.core.trust.web.IncrementalWeb`), and the lessons verified by the keys
  whose place in it moved are judged again (a vouch from a key the web does not reach, or one
  more vouch for an edge already held, moves nothing).

Anything that can change what is dead — a revocation, a record a revocation names, a record by a
dead key or derived from a dead lesson, another refused id — and a new day are rare: the
evaluation is then made again from the records held in memory, never from the store. The result
equals :func:`evaluate` over the same records (``tests/test_trust_incremental.py`` checks it
over random batches); ``evaluate`` stays the reference.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from itertools import chain
from types import MappingProxyType

from commons.core.trust.naivety import Naivety, Similar, same_lesson
from commons.core.records import FUTURE_TOLERANCE_DAYS, Lesson, RecordType, Revocation, SignedRecord, Vouch
from commons.core.trust.revocation import Revocations, resolve
from commons.core.trust.evaluation import (
    LessonState,
    Policy,
    Reason,
    TrustPolicy,
    TrustView,
    VerificationVerdict,
    _judge,
    _recency,
    _state,
    _verdict,
    provenance_of,
)
from commons.core.trust.facts import Fact, Facts
from commons.core.trust.web import IncrementalWeb

EVERY = None  # what ``add`` returns when every lesson was re-judged


class IncrementalTrust:
    """The trust evaluation of every record added so far, as of day ``today`` (None: no day limit)."""

    def __init__(self, *, me: bytes, policy: TrustPolicy, today: int | None = None, refused: Iterable[bytes] = (),
                 similar: Similar = same_lesson) -> None:
        self.me, self.policy, self.today, self.similar = me, policy, today, similar
        self.refused = frozenset(refused)
        # Every record added (future-dated ones too), as the facts trust needs of it.
        self.records: dict[bytes, Fact] = {}
        self._facts = Facts(self.records, keep_lessons=similar is not same_lesson)
        self._reset()

    @classmethod
    def of(cls, records: Mapping[bytes, SignedRecord] | Iterable[SignedRecord], **kwargs) -> IncrementalTrust:
        """The evaluation of ``records`` (by id, or any iterable), made in one go."""
        trust = cls(**kwargs)
        trust.hold(records.values() if isinstance(records, Mapping) else records)
        trust.rebuild()
        return trust

    def hold(self, records: Iterable[SignedRecord]) -> None:
        """Keep the facts of ``records`` without judging them: :meth:`rebuild` does, once. For a
        reader that decodes a large store a chunk at a time and lets each chunk go."""
        held, facts = self.records, self._facts
        for signed in records:
            held[signed.id] = facts.of(signed)

    # -- the state --------------------------------------------------------------------------------

    def _reset(self) -> None:
        self._lessons: dict[bytes, Lesson] = {}
        self._verifications: dict[bytes, list[SignedRecord]] = defaultdict(list)  # lesson id -> recency order
        self._verified_by: dict[bytes, set[bytes]] = defaultdict(set)  # verifier -> lessons it verified
        # One id, or a set of them (most have one: a set each would cost 200 bytes a lesson).
        self._children: dict[bytes, bytes | set[bytes]] = {}  # parent id -> held lessons naming it
        self._successors: dict[bytes, bytes | set[bytes]] = {}  # superseded id -> lessons naming it
        self._by_form: dict[object, bytes | set[bytes]] = {}  # similarity form -> lessons
        self._provenance: dict[bytes, frozenset[bytes]] = {}
        self._author_sets: dict[frozenset[bytes], frozenset[bytes]] = {}  # provenances, one object each
        self._superseded_by: dict[bytes, bytes] = {}
        self._naivety = Naivety(self._lessons, self.similar)
        self._verdicts: dict[bytes, VerificationVerdict] = {}
        self._states: dict[bytes, LessonState] = {}
        self._waiting: set[bytes] = set()  # lessons touched by records taken in with judge=False
        self._set_revocations(resolve(()))

    def _set_revocations(self, revocations: Revocations) -> None:
        self._revocations = revocations
        self._targets = frozenset(v.target for v in revocations.verdicts.values())  # named by a revocation
        # Nothing dead, named or waiting: then only a revocation can move the dead (the common case,
        # asked of every record a batch brings).
        self._quiet = not (revocations.takedowns or revocations.pending or revocations.dead_keys or self._targets)
        self._webs = IncrementalWeb(self._roots(), self.policy.max_depth)  # its roots exclude dead keys

    @property
    def view(self) -> TrustView:
        """The evaluation now. Its mappings are live: they follow the records added after it."""
        return TrustView(lessons=MappingProxyType(self._states), verifications=MappingProxyType(self._verdicts),
                         revocations=self._revocations, web=self._webs.web)

    def _counts(self, signed: SignedRecord) -> bool:
        return self.today is None or signed.record.created <= self.today + FUTURE_TOLERANCE_DAYS

    # -- adding records ---------------------------------------------------------------------------

    def add(self, records: Iterable[SignedRecord], *, judge: bool = True) -> set[bytes] | None:
        """Take in records; returns the lessons whose state was recomputed (``EVERY``: all of them).

        ``judge=False`` takes them in without judging what they touched: those lessons wait for
        the next judging add or :meth:`judge_pending`, and the view shows their old state until
        then. A node catching up in batches judges once for many: a lesson touched by every batch
        (its verifiers' place in a growing web of trust moved) is judged once, not once a batch."""
        held, of, latest = self.records, self._facts.of, None if self.today is None else self.today + FUTURE_TOLERANCE_DAYS
        fresh = []
        for signed in records:
            if signed.id not in held:
                fact = held[signed.id] = of(signed)
                if latest is None or fact.record.created <= latest:  # future-dated: held, not counted yet
                    fresh.append(fact)
        if not fresh:
            return self.judge_pending() if judge and self._waiting else set()
        if self.moves_the_dead(fresh):
            self.rebuild()
            return EVERY
        touched: set[bytes] = set()
        moved: set[bytes] = set()  # keys whose place in the web of trust moved
        for signed in fresh:
            kind = signed.type
            if kind is RecordType.LESSON:
                self._add_lesson(signed.id, signed.record, touched)
            elif kind is RecordType.VERIFICATION:
                self._add_verification(signed, touched)
            elif kind is RecordType.VOUCH:
                moved |= self._add_vouch(signed.id, signed.record)
        if self.policy.policy is Policy.WEB_OF_TRUST:  # the other policies judge by the roots alone
            for key in moved:  # what a key verified counts differently once it is trusted or re-anchored
                touched.update(self._verified_by.get(key, ()))
        if not judge:
            self._waiting |= touched
            return touched
        return self.judge_pending(touched)

    @property
    def pending(self) -> bool:
        """Whether lessons taken in with ``judge=False`` wait to be judged."""
        return bool(self._waiting)

    def judge_pending(self, touched: set[bytes] | None = None) -> set[bytes]:
        """Judge the lessons that wait (and ``touched``); returns them all."""
        if touched is None:
            touched = self._waiting
        elif self._waiting:  # the common batch has nothing waiting: no union made
            touched |= self._waiting
        self._waiting = set()
        self._rejudge(touched)
        return touched

    def with_refused(self, refused: Iterable[bytes]) -> set[bytes] | None:
        """The ids refused as dead changed: everything is evaluated again."""
        self.refused = frozenset(refused)
        self.rebuild()
        return EVERY

    def on_day(self, today: int) -> set[bytes] | None:
        """A new day: records dated up to it count now, and recency is judged as of it."""
        if today == self.today:
            return set()
        self.today = today
        self.rebuild()
        return EVERY

    def rebuild(self) -> None:
        """Evaluate every record held again, from memory."""
        self._reset()
        held = [s for s in self.records.values() if self._counts(s)]
        self._set_revocations(resolve(held, authorities=self.policy.revocation_authorities,
                                      threshold=self.policy.revocation_threshold, refused=self.refused))
        touched: set[bytes] = set()
        for signed in held:
            kind = signed.type
            if kind is RecordType.LESSON:
                self._index_lesson(signed.id, signed.record)
            elif kind is RecordType.VERIFICATION:
                self._index_verification(signed)
            elif kind is RecordType.VOUCH:
                self._add_vouch(signed.id, signed.record)
        del held  # what follows builds the state of 10^6 records: no transient of that size outlives its step
        for lid in sorted(self._lessons, key=lambda i: (self._lessons[i].created, i)):
            self._link_successor(lid, self._lessons[lid])
        self._provenance_from(list(self._lessons), touched)
        del touched
        # Every lesson, then the verifications of lessons not held, without a set of them all made
        # (judging writes only verdicts and states, so the indexes can be walked as they are).
        lessons = self._lessons
        self._rejudge(chain(lessons, (lid for lid in self._verifications if lid not in lessons)))

    def moves_the_dead(self, records: Iterable[SignedRecord]) -> bool:
        """Whether any of these records can change what is dead (then everything is evaluated again)."""
        if self._quiet:
            return any(s.type is RecordType.REVOCATION and self._counts(s) for s in records)
        return any(self._moves_the_dead(s) for s in records if self._counts(s))

    def _moves_the_dead(self, signed: SignedRecord) -> bool:
        record = signed.record
        if isinstance(record, Revocation):
            return True
        revocations = self._revocations
        if signed.id in revocations.takedowns or signed.id in self._targets or record.author in revocations.dead_keys:
            return True
        # A parent dead, or named by a revocation but never received (its descendants wait with it).
        return signed.type is RecordType.LESSON and any(p in revocations.takedowns or p in revocations.pending
                                                        for p in record.parents)

    def _index_lesson(self, lid: bytes, lesson: Lesson) -> tuple[object, ...]:
        self._lessons[lid] = lesson
        for parent in lesson.parents:
            _put(self._children, parent, lid)
        if lesson.supersedes is not None:
            _put(self._successors, lesson.supersedes, lid)
        forms = self._naivety.add(lid, lesson, getattr(lesson, "forms", None))
        for form in forms:
            _put(self._by_form, form, lid)
        return forms

    def _index_verification(self, signed: SignedRecord) -> None:
        record = signed.record
        group = self._verifications[record.lesson]
        group.append(signed)
        if len(group) > 1 and _recency(group[-2]) > _recency(signed):
            group.sort(key=_recency)
        self._verified_by[record.author].add(record.lesson)

    def _add_verification(self, signed: SignedRecord, touched: set[bytes]) -> None:
        self._index_verification(signed)
        touched.add(signed.record.lesson)

    def _add_lesson(self, lid: bytes, lesson: Lesson, touched: set[bytes]) -> None:
        forms = self._index_lesson(lid, lesson)
        touched.add(lid)
        # Successors: the lesson it supersedes, and an older version superseded by a lesson held first.
        if lesson.supersedes is not None and self._link_successor(lid, lesson):
            touched.add(lesson.supersedes)
        if lid in self._successors:  # a newer version arrived first
            best = self._best_successor(lid)
            if best is not None:
                self._superseded_by[lid] = best
        # Provenance: its own, and that of every held descendant (most lessons have neither
        # parents nor descendants: their provenance is their author, stored as nothing).
        if lesson.parents or lid in self._children:
            self._provenance_from([lid], touched)
        else:
            self._provenance.pop(lid, None)
        # Naivety: its author may now have written first what it verified.
        verified = self._verified_by.get(lesson.author, ())
        if verified:
            if self._naivety.indexed:
                touched.update(other for form in forms for other in _members(self._by_form, form) if other in verified)
            else:
                touched.update(verified)

    def _link_successor(self, lid: bytes, lesson: Lesson) -> bool:
        """Record ``lid`` as the successor of what it supersedes if it is the latest live one."""
        old = lesson.supersedes
        target = self._lessons.get(old) if old is not None else None
        if target is None or target.author != lesson.author or lid in self._revocations.dead_ids:
            return False
        current = self._superseded_by.get(old)
        if current is not None and (self._lessons[current].created, current) > (lesson.created, lid):
            return False
        self._superseded_by[old] = lid
        return True

    def _best_successor(self, old: bytes) -> bytes | None:
        target = self._lessons[old]
        live = [s for s in _members(self._successors, old)
                if self._lessons[s].author == target.author and s not in self._revocations.dead_ids]
        return max(live, key=lambda s: (self._lessons[s].created, s), default=None)

    def _provenance_from(self, starts: list[bytes], touched: set[bytes]) -> None:
        """Provenance authors of ``starts`` and of every held descendant, parents before children."""
        order: list[bytes] = []
        seen: set[bytes] = set()
        queue = deque(starts)
        while queue:
            lid = queue.popleft()
            if lid in seen:
                continue
            seen.add(lid)
            order.append(lid)
            queue.extend(_members(self._children, lid))
        for lid in seen:
            self._provenance.pop(lid, None)
        for lid in order:
            if self._lessons[lid].parents:  # a lesson without parents has its author alone: not stored
                authors = provenance_of(lid, self._lessons, self._provenance)
                self._provenance[lid] = self._author_sets.setdefault(authors, authors)
        touched.update(seen)

    def _provenance_for(self, lid: bytes) -> frozenset[bytes]:
        authors = self._provenance.get(lid)
        if authors is None:
            author = frozenset((self._lessons[lid].author,))
            authors = self._author_sets.setdefault(author, author)
        return authors

    # -- the web of trust -------------------------------------------------------------------------

    def _roots(self) -> frozenset[bytes]:
        return frozenset({self.me} | self.policy.roots | self.policy.authors) - self._revocations.dead_keys

    def _add_vouch(self, vid: bytes, vouch: Vouch) -> set[bytes]:
        """Hold a vouch; returns the keys whose place in the web it moved (live vouches only count)."""
        if vid in self._revocations.dead_ids:
            return set()
        return self._webs.add_edge(vouch.author, vouch.subject)

    def _trusts(self):
        if self.policy.policy is Policy.OPEN:
            return lambda key: True
        if self.policy.policy is Policy.ALLOWLIST:
            return self._webs.web.roots.__contains__
        return self._webs.web.trusts

    # -- judging ----------------------------------------------------------------------------------

    def _rejudge(self, touched: Iterable[bytes]) -> None:
        revocations, trusts = self._revocations, self._trusts()
        dead_ids, dead_keys = revocations.dead_ids, revocations.dead_keys
        # Every lesson a batch touches comes through here: what the loop reads is looked up once.
        verifications, lessons, verdicts, states = self._verifications, self._lessons, self._verdicts, self._states
        naivety, web, policy, me, superseded_by = self._naivety, self._webs.web, self.policy, self.me, self._superseded_by
        for lid in touched:
            group = verifications.get(lid, ())
            lesson = lessons.get(lid)
            if lesson is None:
                for signed in group:
                    verdicts[signed.id] = _verdict(signed, Reason.LESSON_UNKNOWN)
                continue
            if group:
                _judge(lid, lesson, group, verdicts, dead_ids, dead_keys, self._provenance_for(lid), trusts,
                       naivety, web, policy)
            states[lid] = _state(lid, lesson, group, verdicts, me, policy, revocations, superseded_by)


def _put(index: dict, key: object, value: bytes) -> None:
    held = index.get(key)
    if held is None:
        index[key] = value
    elif isinstance(held, set):
        held.add(value)
    elif held != value:
        index[key] = {held, value}


def _members(index: dict, key: object) -> Iterable[bytes]:
    held = index.get(key, ())
    return (held,) if isinstance(held, bytes) else held


def evaluate_incrementally(batches: Iterable[Iterable[SignedRecord]], **kwargs) -> tuple[TrustView, Mapping]:
    """Feed ``batches`` one after another (a convenience for tests and benchmarks)."""
    trust = IncrementalTrust(**kwargs)
    for batch in batches:
        trust.add(batch)
    return trust.view, trust.records
