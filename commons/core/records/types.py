"""The record types: their fields, the rules each field obeys, and whose fault a bad one is.

Four frozen dataclasses (:class:`Lesson`, :class:`Verification`, :class:`Revocation`,
:class:`Vouch`) check their own fields when built, so a record that exists is a record that can be
encoded. The wire form is ``codec.py``'s; ids and signatures are ``signing.py``'s. The package
``commons.core.records`` re-exports all of it (see its docstring for the whole picture).
"""

from __future__ import annotations

import enum
import operator
import re
import unicodedata
from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar

PROTOCOL_VERSION = 1
KEY_BYTES = 32  # Ed25519 public keys, network keys, ids and keyed hashes
SIGNATURE_BYTES = 64
MAX_BODY_BYTES = 4096
MAX_TEXT_BYTES = 400
MAX_PREDICTION_PART_BYTES = 200
MAX_TOPICS = 8
MAX_TOPIC_BYTES = 40
MAX_PARENTS = 16
MAX_EPISODES = 16
MAX_REASON_BYTES = 280
# Clocks disagree and days start at different instants around the world: a record dated one day
# past the receiver's UTC day is accepted, two days is refused as from the future.
FUTURE_TOLERANCE_DAYS = 1
SECONDS_PER_DAY = 86400


class RecordType(enum.Enum):
    """The record types, with the one-byte tag that orders them in the reconciliation keyspace.

    Revocations sort first so that a node reconciling with a peer learns of a revocation before
    the lesson it revokes.
    """

    REVOCATION = "revocation"
    VOUCH = "vouch"
    LESSON = "lesson"
    VERIFICATION = "verification"

    # Members are singletons compared by identity, so the identity hash is a correct one; Enum's
    # own hashes the name in Python, and record types are dict keys on every record's path.
    __hash__ = object.__hash__

    @property
    def tag(self) -> int:
        return _TYPE_TAGS[self]

    @property
    def domain_tag(self) -> bytes:
        """What is signed is ``domain_tag || id``, so a signature over one type can't pass as another."""
        return f"commons/v{PROTOCOL_VERSION}/{self.value}\n".encode()


_TYPE_TAGS = {
    RecordType.REVOCATION: 0,
    RecordType.VOUCH: 1,
    RecordType.LESSON: 2,
    RecordType.VERIFICATION: 3,
}


class LessonKind(enum.Enum):
    CORRECTION = "correction"
    ERROR = "error"
    INSIGHT = "insight"


class Scope(enum.Enum):
    LOCAL = "local"
    SHARED = "shared"


class Outcome(enum.Enum):
    CONFIRMED = "confirmed"
    FAILED = "failed"


class TargetKind(enum.Enum):
    RECORD = "record"
    KEY = "key"


class Problem(enum.Enum):
    """Why bytes from outside are not a valid record; also the vectors' flags."""

    MALFORMED = "malformed"  # not msgpack, or not a map where one is required
    TRAILING_BYTES = "trailing-bytes"
    NON_CANONICAL = "non-canonical"  # valid msgpack, but not the one canonical encoding
    DUPLICATE_KEY = "duplicate-key"
    OVERSIZE = "oversize"
    UNKNOWN_TYPE = "unknown-type"
    UNKNOWN_VERSION = "unknown-version"
    BAD_FIELD = "bad-field"  # missing, extra, misordered or ill-typed field
    INVALID_UTF8 = "invalid-utf8"
    NOT_NFC = "not-nfc"
    FUTURE = "future"
    WRONG_NETWORK = "wrong-network"
    BAD_SIGNATURE = "bad-signature"
    ID_MISMATCH = "id-mismatch"


class RecordError(Exception):
    """Base of the record errors."""


class InvalidRecord(RecordError):
    """Bytes from outside (a peer, a file) are not a valid record: the sender is at fault."""

    def __init__(self, problem: Problem, message: str):
        super().__init__(message)
        self.problem = problem


class RecordUsageError(RecordError):
    """This program asked for a record that cannot exist: the caller is at fault."""

    def __init__(self, message: str, problem: Problem = Problem.BAD_FIELD):
        super().__init__(message)
        self.problem = problem


class FieldProblem(Exception):
    """A field value breaks a rule; becomes InvalidRecord or RecordUsageError depending on who gave it.

    Internal to the records package (the codec raises it too); never escapes it."""

    def __init__(self, problem: Problem, message: str):
        super().__init__(message)
        self.problem = problem


# Control characters (Unicode category Cc) but the newline, and lone surrogates (Cs).
_FORBIDDEN_CHARS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")

# --- field rules -------------------------------------------------------------------------------


# Each rule takes a field's value (as the dataclass holds it) and raises FieldProblem. They test
# ``type(x) is T``, never isinstance: a bool is an int subclass and must never pass for one, and a
# rule that stays this cheap can run once per record received (the codec runs the same rules).


def _key(value: Any, name: str) -> None:
    if type(value) is not bytes or len(value) != KEY_BYTES:
        raise FieldProblem(Problem.BAD_FIELD, f"{name} must be {KEY_BYTES} bytes")


def _text(value: Any, name: str, max_bytes: int, *, min_bytes: int = 1) -> None:
    # The common case, decided at once: printable ASCII (one byte a character, in NFC, no control
    # character) of an allowed length. Anything else goes through every rule below.
    if type(value) is str and value.isascii() and value.isprintable() and min_bytes <= len(value) <= max_bytes:
        return
    if type(value) is not str:
        raise FieldProblem(Problem.BAD_FIELD, f"{name} must be a string")
    ascii = value.isascii()  # the common case: one byte a character, and always in NFC
    size = len(value) if ascii else len(value.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise FieldProblem(Problem.OVERSIZE, f"{name} is {size} bytes; at most {max_bytes} are allowed")
    if size < min_bytes:
        raise FieldProblem(Problem.BAD_FIELD, f"{name} must not be empty")
    if not ascii and not unicodedata.is_normalized("NFC", value):
        raise FieldProblem(Problem.NOT_NFC, f"{name} is not in Unicode normal form C")
    if _FORBIDDEN_CHARS.search(value):
        raise FieldProblem(Problem.BAD_FIELD, f"{name} contains control characters")


def _day(value: Any, name: str) -> None:
    if type(value) is not int or not 0 <= value < 2**32:
        raise FieldProblem(Problem.BAD_FIELD, f"{name} must be a day number (days since 1970-01-01)")


def _enum(value: Any, enum_type: type[enum.Enum], name: str) -> None:
    if type(value) is not enum_type:
        choices = ", ".join(m.value for m in enum_type)
        raise FieldProblem(Problem.BAD_FIELD, f"{name} must be one of: {choices}")


def _sorted_unique(values: tuple, name: str, limit: int) -> None:
    if type(values) is not tuple:
        raise FieldProblem(Problem.BAD_FIELD, f"{name} must be a tuple")
    if len(values) > limit:
        raise FieldProblem(Problem.OVERSIZE, f"{name} has {len(values)} entries; at most {limit} are allowed")
    if len(values) < 2:
        return
    try:
        # Strictly increasing is sorted and without repeats; comparing neighbours is all it takes.
        increasing = all(map(operator.lt, values, values[1:]))
    except TypeError:  # entries of mixed kinds: the per-entry checks can't run yet
        raise FieldProblem(Problem.BAD_FIELD, f"{name} entries must all be of the same kind") from None
    if not increasing:
        raise FieldProblem(Problem.NON_CANONICAL, f"{name} must be sorted and without repeats")


def _keys(values: tuple, name: str, entry: str, limit: int) -> None:
    _sorted_unique(values, name, limit)
    for value in values:
        if type(value) is not bytes or len(value) != KEY_BYTES:
            _key(value, entry)  # raises, naming the entry


def _header_rules(f: dict[str, Any]) -> None:
    _key(f["network"], "network")
    _key(f["author"], "author")
    _day(f["created"], "created")


def _lesson_rules(f: dict[str, Any]) -> None:
    _header_rules(f)
    _enum(f["kind"], LessonKind, "kind")
    _text(f["text"], "text", MAX_TEXT_BYTES)
    _enum(f["scope"], Scope, "scope")
    topics = f["topics"]
    _sorted_unique(topics, "topics", MAX_TOPICS)
    for topic in topics:
        _text(topic, "topic", MAX_TOPIC_BYTES)
    prediction = f["prediction"]
    if type(prediction) is not Prediction:
        raise FieldProblem(Problem.BAD_FIELD, "prediction must be a Prediction")
    _text(prediction.situation, "prediction.situation", MAX_PREDICTION_PART_BYTES)
    _text(prediction.outcome, "prediction.outcome", MAX_PREDICTION_PART_BYTES)
    _keys(f["parents"], "parents", "parent", MAX_PARENTS)
    _keys(f["episodes"], "episodes", "episode", MAX_EPISODES)
    if f["supersedes"] is not None:
        _key(f["supersedes"], "supersedes")


def _verification_rules(f: dict[str, Any]) -> None:
    _header_rules(f)
    _key(f["lesson"], "lesson")
    _enum(f["outcome"], Outcome, "outcome")
    _key(f["evidence"], "evidence")
    _day(f["received"], "received")
    _day(f["observed"], "observed")
    if f["observed"] < f["received"]:
        raise FieldProblem(Problem.BAD_FIELD, "observed must not be before received")
    if f["created"] < f["observed"]:
        raise FieldProblem(Problem.BAD_FIELD, "created must not be before observed")
    if type(f["naive"]) is not bool:
        raise FieldProblem(Problem.BAD_FIELD, "naive must be a boolean")


def _revocation_rules(f: dict[str, Any]) -> None:
    _header_rules(f)
    _key(f["target"], "target")
    _enum(f["target_kind"], TargetKind, "target_kind")
    _text(f["reason"], "reason", MAX_REASON_BYTES)


def _vouch_rules(f: dict[str, Any]) -> None:
    _header_rules(f)
    _key(f["subject"], "subject")
    if f["subject"] == f["author"]:
        raise FieldProblem(Problem.BAD_FIELD, "a key cannot vouch for itself")


# --- the records -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prediction:
    """What a coming session will meet (situation) and what happens there (outcome)."""

    situation: str
    outcome: str


@dataclass(frozen=True)
class _Header:
    network: bytes
    author: bytes
    created: int  # days since 1970-01-01, UTC

    type: ClassVar[RecordType]

    def __post_init__(self) -> None:
        try:
            FIELD_RULES[self.type](self.__dict__)
        except FieldProblem as problem:
            raise RecordUsageError(f"invalid {self.type.value}: {problem}", problem.problem) from None


@dataclass(frozen=True)
class Lesson(_Header):
    kind: LessonKind
    text: str
    scope: Scope
    topics: tuple[str, ...]
    prediction: Prediction
    parents: tuple[bytes, ...] = ()  # ids of the lessons this one was derived from
    episodes: tuple[bytes, ...] = ()  # keyed hashes of the local episodes it came from
    supersedes: bytes | None = None  # an earlier version by the same author

    type: ClassVar[RecordType] = RecordType.LESSON


@dataclass(frozen=True)
class Verification(_Header):
    lesson: bytes
    outcome: Outcome
    evidence: bytes  # keyed hash of the verifier's own episode that met (or contradicted) it
    received: int  # the day the verifier first received the lesson
    observed: int  # the day it observed the outcome
    naive: bool  # False: it had met the surprise before receipt (a corroboration)

    type: ClassVar[RecordType] = RecordType.VERIFICATION


@dataclass(frozen=True)
class Revocation(_Header):
    target: bytes  # a record id, or an author key
    target_kind: TargetKind
    reason: str

    type: ClassVar[RecordType] = RecordType.REVOCATION


@dataclass(frozen=True)
class Vouch(_Header):
    subject: bytes  # the author key vouched for

    type: ClassVar[RecordType] = RecordType.VOUCH


Record = Lesson | Verification | Revocation | Vouch
RECORD_CLASSES: dict[RecordType, type] = {cls.type: cls for cls in (Lesson, Verification, Revocation, Vouch)}

# Every rule a record of each type obeys, over its fields by name: the dataclass runs them on what a
# caller built, the codec on what it decoded, before building the record without a second check.
FIELD_RULES: dict[RecordType, Callable[[dict[str, Any]], None]] = {
    RecordType.LESSON: _lesson_rules,
    RecordType.VERIFICATION: _verification_rules,
    RecordType.REVOCATION: _revocation_rules,
    RecordType.VOUCH: _vouch_rules,
}


def build_checked(cls: type, values: dict[str, Any]) -> Record:
    """The record of class ``cls`` with these field values, which its ``FIELD_RULES`` passed already.

    For the codec only: it builds the frozen instance without ``__post_init__`` running the rules a
    second time. Every field must be in ``values``, as the dataclass would hold it."""
    record = object.__new__(cls)
    record.__dict__.update(values)
    return record


def day_of(now: float) -> int:
    """The UTC day number of a unix time."""
    return int(now // SECONDS_PER_DAY)


def field_names(rtype: RecordType) -> tuple[str, ...]:
    """The dataclass fields of a record type, in wire order (for docs and the CLI)."""
    return tuple(f.name for f in fields(RECORD_CLASSES[rtype]))


def as_plain(record: Record) -> dict[str, Any]:
    """The record as JSON-ready values (hex for bytes, strings for enums), for people and exports."""
    plain: dict[str, Any] = {"type": type(record).type.value}
    for item in fields(record):
        value = getattr(record, item.name)
        if isinstance(value, bytes):
            value = value.hex()
        elif isinstance(value, enum.Enum):
            value = value.value
        elif isinstance(value, Prediction):
            value = {"situation": value.situation, "outcome": value.outcome}
        elif isinstance(value, tuple):
            value = [v.hex() if isinstance(v, bytes) else v for v in value]
        plain[item.name] = value
    return plain

