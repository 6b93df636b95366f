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
from dataclasses import dataclass, fields, replace
from typing import Any, Callable, ClassVar

PROTOCOL_VERSION = 1  # of the protocol: its domain tags, and every record that names no fix
# The version of a lesson that names its fix and of a verification that says what happened to the
# fix a lesson names (issue #26). A record is of this version exactly when its ``fix`` is set: the
# one valid body of a record with no fix stays the version 1 body, which every node understands.
FIX_VERSION = 2
RECORD_VERSIONS = (PROTOCOL_VERSION, FIX_VERSION)
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
MAX_FIX_TOOL_BYTES = 40  # a lesson's fix: the tool that ran the failing step
MAX_FIX_STEP_BYTES = 200  # ... the failing step, and the step that fixed it
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


class FixSeen(enum.Enum):
    """What a verifier's sessions show of the fix a lesson names (a version 2 verification)."""

    CONFIRMED = "fix-confirmed"  # the named fix ran, and the failing step then succeeded
    FAILED = "fix-failed"  # the named fix ran, and the step still failed
    OTHER = "other-fix"  # the failure was met and resolved another way
    PREVENTED = "prevented"  # the failure did not come where the lesson was rendered


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


def _bool(value: Any, name: str) -> None:
    if type(value) is not bool:
        raise FieldProblem(Problem.BAD_FIELD, f"{name} must be a boolean")


def _optional_key(value: Any, name: str) -> None:
    if value is not None:
        _key(value, name)


def _texts(values: tuple, name: str, entry: str, limit: int, entry_bytes: int) -> None:
    _sorted_unique(values, name, limit)
    for value in values:
        _text(value, entry, entry_bytes)


def _fix(value: Any, name: str, tool_bytes: int, step_bytes: int) -> None:
    if value is None:
        return  # a record without a fix (its body is version 1)
    if type(value) is not Fix:
        raise FieldProblem(Problem.BAD_FIELD, f"{name} must be a Fix or None")
    _text(value.tool, f"{name}.tool", tool_bytes)
    _text(value.failed, f"{name}.failed", step_bytes)
    _text(value.step, f"{name}.step", step_bytes)


def _optional_enum(value: Any, enum_type: type[enum.Enum], name: str) -> None:
    if value is not None:
        _enum(value, enum_type, name)


def _prediction(value: Any, name: str, part_bytes: int) -> None:
    if type(value) is not Prediction:
        raise FieldProblem(Problem.BAD_FIELD, f"{name} must be a Prediction")
    _text(value.situation, f"{name}.situation", part_bytes)
    _text(value.outcome, f"{name}.outcome", part_bytes)


class Kind(enum.Enum):
    """What a field holds; each kind has one rule here and one generated check (``compiled.py``)."""

    KEY = "key"  # 32 bytes
    OPTIONAL_KEY = "optional-key"  # 32 bytes, or None
    DAY = "day"  # an int in [0, 2**32)
    BOOL = "bool"
    CHOICE = "choice"  # a member of ``choices``
    TEXT = "text"  # a string of 1..``most`` UTF-8 bytes, NFC, no control character but the newline
    TEXTS = "texts"  # a sorted tuple of at most ``most`` distinct texts of 1..``entry_bytes`` bytes
    KEYS = "keys"  # a sorted tuple of at most ``most`` distinct keys
    PREDICTION = "prediction"  # a Prediction of two texts of 1..``entry_bytes`` bytes
    FIX = "fix"  # a Fix (a tool of 1..``most`` bytes, two steps of 1..``entry_bytes``), or None
    OPTIONAL_CHOICE = "optional-choice"  # a member of ``choices``, or None


@dataclass(frozen=True)
class Field:
    """The rule one field obeys, as data: the dataclasses and the reference decoder interpret it
    (``field_rules``), the fast decoder is generated from it."""

    name: str
    kind: Kind
    most: int = 0  # bytes of a text; entries of a tuple
    entry_bytes: int = 0  # bytes of each text of a tuple, or of each part of a prediction
    choices: type[enum.Enum] | None = None
    entry: str = ""  # what one entry of a tuple is called in a problem
    required: bool = False  # FIX, OPTIONAL_CHOICE: None is refused (in a body of FIX_VERSION)


@dataclass(frozen=True)
class Relation:
    """A rule between two fields, once both passed their own: ``first`` must not be before
    ``second`` (``not_before``) or must differ from it."""

    first: str
    second: str
    not_before: bool  # False: the two must differ
    message: str


_HEADER_FIELDS = (Field("network", Kind.KEY), Field("author", Kind.KEY), Field("created", Kind.DAY))

# Every rule of each type, in the order they are checked (the problem a record has first is the
# one named). Relations stand after the fields they compare.
FIELD_SPECS: dict[RecordType, tuple[Field | Relation, ...]] = {
    RecordType.LESSON: _HEADER_FIELDS + (
        Field("kind", Kind.CHOICE, choices=LessonKind),
        Field("text", Kind.TEXT, MAX_TEXT_BYTES),
        Field("scope", Kind.CHOICE, choices=Scope),
        Field("topics", Kind.TEXTS, MAX_TOPICS, MAX_TOPIC_BYTES, entry="topic"),
        Field("prediction", Kind.PREDICTION, entry_bytes=MAX_PREDICTION_PART_BYTES),
        Field("parents", Kind.KEYS, MAX_PARENTS, entry="parent"),
        Field("episodes", Kind.KEYS, MAX_EPISODES, entry="episode"),
        Field("supersedes", Kind.OPTIONAL_KEY),
        Field("fix", Kind.FIX, MAX_FIX_TOOL_BYTES, MAX_FIX_STEP_BYTES),
    ),
    RecordType.VERIFICATION: _HEADER_FIELDS + (
        Field("lesson", Kind.KEY),
        Field("outcome", Kind.CHOICE, choices=Outcome),
        Field("fix", Kind.OPTIONAL_CHOICE, choices=FixSeen),
        Field("evidence", Kind.KEY),
        Field("received", Kind.DAY),
        Field("observed", Kind.DAY),
        Relation("observed", "received", True, "observed must not be before received"),
        Relation("created", "observed", True, "created must not be before observed"),
        Field("naive", Kind.BOOL),
    ),
    RecordType.REVOCATION: _HEADER_FIELDS + (
        Field("target", Kind.KEY),
        Field("target_kind", Kind.CHOICE, choices=TargetKind),
        Field("reason", Kind.TEXT, MAX_REASON_BYTES),
    ),
    RecordType.VOUCH: _HEADER_FIELDS + (
        Field("subject", Kind.KEY),
        Relation("subject", "author", False, "a key cannot vouch for itself"),
    ),
}


def _field_check(rule: Field) -> Callable[[Any], None]:
    """The rule of one field, as a check of its value that raises FieldProblem naming it."""
    name = rule.name
    if rule.kind is Kind.KEY:
        return lambda value: _key(value, name)
    if rule.kind is Kind.OPTIONAL_KEY:
        return lambda value: _optional_key(value, name)
    if rule.kind is Kind.DAY:
        return lambda value: _day(value, name)
    if rule.kind is Kind.BOOL:
        return lambda value: _bool(value, name)
    if rule.kind is Kind.CHOICE:
        return lambda value: _enum(value, rule.choices, name)
    if rule.kind is Kind.TEXT:
        return lambda value: _text(value, name, rule.most)
    if rule.kind in (Kind.OPTIONAL_CHOICE, Kind.FIX) and rule.required:
        return lambda value: _present(value, name) or _field_check(replace(rule, required=False))(value)
    if rule.kind is Kind.OPTIONAL_CHOICE:
        return lambda value: _optional_enum(value, rule.choices, name)
    if rule.kind is Kind.FIX:
        return lambda value: _fix(value, name, rule.most, rule.entry_bytes)
    if rule.kind is Kind.TEXTS:
        return lambda value: _texts(value, name, rule.entry, rule.most, rule.entry_bytes)
    if rule.kind is Kind.KEYS:
        return lambda value: _keys(value, name, rule.entry, rule.most)
    return lambda value: _prediction(value, name, rule.entry_bytes)


def _present(value: Any, name: str) -> None:
    if value is None:
        raise FieldProblem(Problem.BAD_FIELD, f"a version {FIX_VERSION} body must have a {name}; "
                                              f"a record without one is version {PROTOCOL_VERSION}")


def field_rules(spec: tuple[Field | Relation, ...]) -> Callable[[dict[str, Any]], None]:
    """The check of a record's fields (by name) that a spec describes: raises the FieldProblem of
    the first rule broken."""
    steps: list[Callable[[dict[str, Any]], None]] = []
    for rule in spec:
        if isinstance(rule, Field):
            steps.append(lambda f, name=rule.name, check=_field_check(rule): check(f[name]))
        else:
            steps.append(lambda f, rule=rule: _relation(rule, f[rule.first], f[rule.second]))

    def check(f: dict[str, Any]) -> None:
        for step in steps:
            step(f)

    return check


def _relation(rule: Relation, first: Any, second: Any) -> None:
    if (first < second) if rule.not_before else (first == second):
        raise FieldProblem(Problem.BAD_FIELD, rule.message)


# --- the records -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prediction:
    """What a coming session will meet (situation) and what happens there (outcome)."""

    situation: str
    outcome: str


@dataclass(frozen=True)
class Fix:
    """The fix a lesson names: ``step`` (as the lesson names it, generalised) made ``failed`` (the
    failing step, as ``tool`` ran it) succeed. A verifier runs the miner's evidence rules on it."""

    tool: str
    failed: str
    step: str


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
    fix: Fix | None = None  # the fix it names (a version 2 lesson); None: it names none

    type: ClassVar[RecordType] = RecordType.LESSON

    @property
    def version(self) -> int:
        return FIX_VERSION if self.fix is not None else PROTOCOL_VERSION


@dataclass(frozen=True)
class Verification(_Header):
    lesson: bytes
    outcome: Outcome
    evidence: bytes  # keyed hash of the verifier's own episode that met (or contradicted) it
    received: int  # the day the verifier first received the lesson
    observed: int  # the day it observed the outcome
    naive: bool  # False: it had met the surprise before receipt (a corroboration)
    # What its sessions show of the fix the lesson names (a version 2 verification); None: nothing
    # of a fix, the prediction alone (what every version 1 verification says).
    fix: FixSeen | None = None

    type: ClassVar[RecordType] = RecordType.VERIFICATION

    @property
    def version(self) -> int:
        return FIX_VERSION if self.fix is not None else PROTOCOL_VERSION


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
# caller built, the reference decoder on what it decoded; the fast decoder runs code generated from
# the same specs (``compiled.py``), falling back on these where its straight-line checks say no.
FIELD_RULES: dict[RecordType, Callable[[dict[str, Any]], None]] = {
    rtype: field_rules(spec) for rtype, spec in FIELD_SPECS.items()
}


def versions_of(rtype: RecordType) -> tuple[int, ...]:
    """The versions a body of this type may have: FIX_VERSION too for the types with a ``fix``."""
    has_fix = any(isinstance(rule, Field) and rule.name == "fix" for rule in FIELD_SPECS[rtype])
    return RECORD_VERSIONS if has_fix else (PROTOCOL_VERSION,)


def wire_spec(rtype: RecordType, version: int) -> tuple[Field | Relation, ...]:
    """The rules of a body of ``version``: without the ``fix`` field in version 1, with it
    required (never nil) in FIX_VERSION, so every record has exactly one valid body."""
    spec = FIELD_SPECS[rtype]
    if version == PROTOCOL_VERSION:
        return tuple(rule for rule in spec if not (isinstance(rule, Field) and rule.name == "fix"))
    return tuple(replace(rule, required=True) if isinstance(rule, Field) and rule.name == "fix" else rule
                 for rule in spec)


WIRE_RULES: dict[tuple[RecordType, int], Callable[[dict[str, Any]], None]] = {
    (rtype, version): field_rules(wire_spec(rtype, version)) for rtype in RecordType for version in versions_of(rtype)
}


def build_checked(cls: type, values: dict[str, Any]) -> Record:
    """The record of class ``cls`` with these field values, which its ``FIELD_RULES`` passed already.

    It builds the frozen instance without ``__post_init__`` running the rules a second time, as the
    generated decoders do (``compiled.py``); the fuzzing oracle's tests build with it what a lenient
    decoder would. Every field must be in ``values``, as the dataclass would hold it."""
    record = object.__new__(cls)
    record.__dict__.update(values)
    return record


def day_of(now: float) -> int:
    """The UTC day number of a unix time."""
    return int(now // SECONDS_PER_DAY)


def field_names(rtype: RecordType) -> tuple[str, ...]:
    """The dataclass fields of a record type, in wire order (for docs and the CLI); ``fix`` last,
    which on the wire of a version 2 verification stands after ``outcome``."""
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
        elif isinstance(value, Fix):
            value = {"tool": value.tool, "failed": value.failed, "step": value.step}
        elif isinstance(value, tuple):
            value = [v.hex() if isinstance(v, bytes) else v for v in value]
        plain[item.name] = value
    return plain

