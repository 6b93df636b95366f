"""The facts trust needs of a record, in compact form: what :class:`IncrementalTrust` holds.

A decoded record is about 1 KB (its text, topics, prediction, body and signature); trust reads a
handful of its fields. Holding 10^6 records for the evaluation (issue #18: ≤ 1 GB) means holding
only these: ids, author, day, and per kind the lesson's parents, successor and similarity forms,
and the fix it claims, the verification's lesson, outcome, naivety claim and what it saw of the fix, the vouch's subject. Keys and days are
interned (a hundred authors sign a million records). The rest stays in the store.

A fact answers the attribute names the evaluation reads of a ``SignedRecord`` (``id``, ``type``,
``record``) and of its record, so :func:`commons.core.trust.evaluation._judge` and
:func:`commons.core.trust.revocation.resolve` take facts as they take records. Revocations are rare
and their reasons are shown: they are kept whole.
"""

from __future__ import annotations

from collections.abc import Mapping

from commons.core.trust.fixes import fix_claim
from commons.core.trust.naivety import form_keys
from commons.core.records import Lesson, RecordType, Revocation, SignedRecord, Verification, Vouch


class _Fact:
    __slots__ = ()

    @property
    def record(self) -> _Fact:  # a fact is its own record: ``signed.record.author`` reads it
        return self


class LessonFact(_Fact):
    __slots__ = ("id", "author", "created", "parents", "supersedes", "forms", "claim")
    type = RecordType.LESSON

    def __init__(self, rid, author, created, parents, supersedes, forms, claim) -> None:
        self.id, self.author, self.created = rid, author, created
        self.parents, self.supersedes, self.forms, self.claim = parents, supersedes, forms, claim


class VerificationFact(_Fact):
    __slots__ = ("id", "author", "created", "lesson", "outcome", "naive", "received", "observed", "fix")
    type = RecordType.VERIFICATION

    def __init__(self, rid, author, created, lesson, outcome, naive, received, observed, fix) -> None:
        self.id, self.author, self.created, self.lesson = rid, author, created, lesson
        self.outcome, self.naive, self.received, self.observed = outcome, naive, received, observed
        self.fix = fix


class VouchFact(_Fact):
    __slots__ = ("id", "author", "created", "subject")
    type = RecordType.VOUCH

    def __init__(self, rid, author, created, subject) -> None:
        self.id, self.author, self.created, self.subject = rid, author, created, subject


Fact = LessonFact | VerificationFact | VouchFact | SignedRecord  # a revocation stays a SignedRecord


class Facts:
    """Makes facts of records, sharing one object for each key and day seen, and the id objects of
    the records already held."""

    def __init__(self, held: Mapping[bytes, Fact], *, keep_lessons: bool = False) -> None:
        self._held = held  # id -> fact: a verification's lesson id is that lesson's id object
        # A similarity rule other than the default compares whole lessons: then they are kept.
        self.keep_lessons = keep_lessons
        self._shared: dict[object, object] = {}  # keys and days: a few thousand, however many records

    def _share(self, value):
        return self._shared.setdefault(value, value)

    def _id(self, rid: bytes) -> bytes:
        fact = self._held.get(rid)
        return rid if fact is None else fact.id

    def of(self, signed: SignedRecord | Fact) -> Fact:
        if isinstance(signed, _Fact):
            return signed
        record, share = signed.record, self._share
        if isinstance(record, Revocation) or (self.keep_lessons and isinstance(record, Lesson)):
            return signed
        rid, author, created = signed.id, share(record.author), share(record.created)
        if isinstance(record, Lesson):
            parents = tuple(self._id(p) for p in record.parents) if record.parents else ()
            supersedes = None if record.supersedes is None else self._id(record.supersedes)
            return LessonFact(rid, author, created, parents, supersedes, form_keys(record), fix_claim(record))
        if isinstance(record, Verification):
            return VerificationFact(rid, author, created, self._id(record.lesson), record.outcome, record.naive,
                                    share(record.received), share(record.observed), record.fix)
        if isinstance(record, Vouch):
            return VouchFact(rid, author, created, share(record.subject))
        raise TypeError(f"trust holds no facts of a {type(record).__name__}")
