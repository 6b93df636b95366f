"""Signed, content-addressed records: the only things that ever leave a node.

Four record types travel between nodes: a **lesson** (an observation with a prediction), a
**verification** (a node's report that a lesson predicted, or failed to predict, what its own
sessions met), a **revocation** (of a record or of an author key) and a **vouch** (one key
vouching for another). Each is a frozen dataclass here; on the wire each is a *body*, a *signature*
and an *id*:

- the body is one canonical msgpack map whose keys stand in the order this module lists them
  (``_LAYOUT``), encoded in the shortest form msgpack allows; there is exactly one valid encoding
  of every record, and decoding refuses every other (``decode_body``);
- ``id = BLAKE3-256(body)``; the body names the network and the author's public key, so whoever
  signs is part of what is hashed and nobody can re-sign another's record under the same id;
- ``signature = Ed25519(author, domain_tag(type) || id)``.

Records never change. What a node thinks of a record (strength, status) is local state, kept
elsewhere. ``protocol/PROTOCOL.md`` is the normative description of all of this; the test vectors
in ``protocol/vectors/records.json`` are generated from this module.

Two error classes say whose fault a problem is: :class:`InvalidRecord` (bytes from outside — a peer,
a file — are not a valid record; the sender is at fault) and :class:`RecordUsageError` (this
program asked for a record that cannot exist; the caller is at fault).
"""

from __future__ import annotations

import enum
import functools
import re
import unicodedata
from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar

import msgpack
import nacl.bindings
import nacl.exceptions
import nacl.signing
from blake3 import blake3

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


class _FieldProblem(Exception):
    """A field value breaks a rule; becomes InvalidRecord or RecordUsageError depending on who gave it."""

    def __init__(self, problem: Problem, message: str):
        super().__init__(message)
        self.problem = problem


# Control characters (Unicode category Cc) but the newline, and lone surrogates (Cs).
_FORBIDDEN_CHARS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")

# --- field rules -------------------------------------------------------------------------------


def _key(value: Any, name: str) -> None:
    if not isinstance(value, bytes) or len(value) != KEY_BYTES:
        raise _FieldProblem(Problem.BAD_FIELD, f"{name} must be {KEY_BYTES} bytes")


def _text(value: Any, name: str, max_bytes: int, *, min_bytes: int = 1) -> None:
    if not isinstance(value, str):
        raise _FieldProblem(Problem.BAD_FIELD, f"{name} must be a string")
    ascii = value.isascii()  # the common case: one byte a character, and always in NFC
    size = len(value) if ascii else len(value.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise _FieldProblem(Problem.OVERSIZE, f"{name} is {size} bytes; at most {max_bytes} are allowed")
    if size < min_bytes:
        raise _FieldProblem(Problem.BAD_FIELD, f"{name} must not be empty")
    if not ascii and not unicodedata.is_normalized("NFC", value):
        raise _FieldProblem(Problem.NOT_NFC, f"{name} is not in Unicode normal form C")
    if _FORBIDDEN_CHARS.search(value):
        raise _FieldProblem(Problem.BAD_FIELD, f"{name} contains control characters")


def _day(value: Any, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**32:
        raise _FieldProblem(Problem.BAD_FIELD, f"{name} must be a day number (days since 1970-01-01)")


def _enum(value: Any, enum_type: type[enum.Enum], name: str) -> None:
    if not isinstance(value, enum_type):
        choices = ", ".join(m.value for m in enum_type)
        raise _FieldProblem(Problem.BAD_FIELD, f"{name} must be one of: {choices}")


def _sorted_unique(values: tuple, name: str, limit: int) -> None:
    if not isinstance(values, tuple):
        raise _FieldProblem(Problem.BAD_FIELD, f"{name} must be a tuple")
    if len(values) > limit:
        raise _FieldProblem(Problem.OVERSIZE, f"{name} has {len(values)} entries; at most {limit} are allowed")
    try:
        canonical = sorted(set(values))
    except TypeError:  # entries of mixed or unhashable types: the per-entry checks can't run yet
        raise _FieldProblem(Problem.BAD_FIELD, f"{name} entries must all be of the same kind") from None
    if list(values) != canonical:
        raise _FieldProblem(Problem.NON_CANONICAL, f"{name} must be sorted and without repeats")


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
            self._check()
        except _FieldProblem as problem:
            raise RecordUsageError(f"invalid {self.type.value}: {problem}", problem.problem) from None

    def _check(self) -> None:
        _key(self.network, "network")
        _key(self.author, "author")
        _day(self.created, "created")


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

    def _check(self) -> None:
        super()._check()
        _enum(self.kind, LessonKind, "kind")
        _text(self.text, "text", MAX_TEXT_BYTES)
        _enum(self.scope, Scope, "scope")
        _sorted_unique(self.topics, "topics", MAX_TOPICS)
        for topic in self.topics:
            _text(topic, "topic", MAX_TOPIC_BYTES)
        if not isinstance(self.prediction, Prediction):
            raise _FieldProblem(Problem.BAD_FIELD, "prediction must be a Prediction")
        _text(self.prediction.situation, "prediction.situation", MAX_PREDICTION_PART_BYTES)
        _text(self.prediction.outcome, "prediction.outcome", MAX_PREDICTION_PART_BYTES)
        _sorted_unique(self.parents, "parents", MAX_PARENTS)
        for parent in self.parents:
            _key(parent, "parent")
        _sorted_unique(self.episodes, "episodes", MAX_EPISODES)
        for episode in self.episodes:
            _key(episode, "episode")
        if self.supersedes is not None:
            _key(self.supersedes, "supersedes")


@dataclass(frozen=True)
class Verification(_Header):
    lesson: bytes
    outcome: Outcome
    evidence: bytes  # keyed hash of the verifier's own episode that met (or contradicted) it
    received: int  # the day the verifier first received the lesson
    observed: int  # the day it observed the outcome
    naive: bool  # False: it had met the surprise before receipt (a corroboration)

    type: ClassVar[RecordType] = RecordType.VERIFICATION

    def _check(self) -> None:
        super()._check()
        _key(self.lesson, "lesson")
        _enum(self.outcome, Outcome, "outcome")
        _key(self.evidence, "evidence")
        _day(self.received, "received")
        _day(self.observed, "observed")
        if self.observed < self.received:
            raise _FieldProblem(Problem.BAD_FIELD, "observed must not be before received")
        if self.created < self.observed:
            raise _FieldProblem(Problem.BAD_FIELD, "created must not be before observed")
        if not isinstance(self.naive, bool):
            raise _FieldProblem(Problem.BAD_FIELD, "naive must be a boolean")


@dataclass(frozen=True)
class Revocation(_Header):
    target: bytes  # a record id, or an author key
    target_kind: TargetKind
    reason: str

    type: ClassVar[RecordType] = RecordType.REVOCATION

    def _check(self) -> None:
        super()._check()
        _key(self.target, "target")
        _enum(self.target_kind, TargetKind, "target_kind")
        _text(self.reason, "reason", MAX_REASON_BYTES)


@dataclass(frozen=True)
class Vouch(_Header):
    subject: bytes  # the author key vouched for

    type: ClassVar[RecordType] = RecordType.VOUCH

    def _check(self) -> None:
        super()._check()
        _key(self.subject, "subject")
        if self.subject == self.author:
            raise _FieldProblem(Problem.BAD_FIELD, "a key cannot vouch for itself")


Record = Lesson | Verification | Revocation | Vouch
RECORD_CLASSES: dict[RecordType, type] = {cls.type: cls for cls in (Lesson, Verification, Revocation, Vouch)}


# --- canonical encoding ------------------------------------------------------------------------
#
# Each type's body is a map whose keys appear in exactly this order. A field's wire form is the
# dataclass value with enums as their string value and Prediction as a nested two-key map.

_HEADER = ("type", "v", "net", "author")
_LAYOUT: dict[RecordType, tuple[str, ...]] = {
    RecordType.LESSON: _HEADER
    + ("kind", "text", "scope", "topics", "prediction", "parents", "episodes", "supersedes", "created"),
    RecordType.VERIFICATION: _HEADER
    + ("lesson", "outcome", "evidence", "received", "observed", "naive", "created"),
    RecordType.REVOCATION: _HEADER + ("target", "target_kind", "reason", "created"),
    RecordType.VOUCH: _HEADER + ("subject", "created"),
}
_PREDICTION_LAYOUT = ("situation", "outcome")
_WIRE_NAME = {"net": "network"}  # wire key -> dataclass field, where they differ
_ENUM_FIELDS: dict[str, type[enum.Enum]] = {
    "kind": LessonKind,
    "scope": Scope,
    "outcome": Outcome,
    "target_kind": TargetKind,
}


def encode_body(record: Record) -> bytes:
    """The one canonical encoding of a record's body."""
    rtype = type(record).type
    body: dict[str, Any] = {"type": rtype.value, "v": PROTOCOL_VERSION}
    for wire_key in _LAYOUT[rtype][2:]:
        value = getattr(record, _WIRE_NAME.get(wire_key, wire_key))
        if isinstance(value, enum.Enum):
            value = value.value
        elif isinstance(value, Prediction):
            value = {"situation": value.situation, "outcome": value.outcome}
        elif isinstance(value, tuple):
            value = list(value)
        body[wire_key] = value
    encoded = msgpack.packb(body, use_bin_type=True)
    if len(encoded) > MAX_BODY_BYTES:
        raise RecordUsageError(f"the {rtype.value} body would be {len(encoded)} bytes; at most {MAX_BODY_BYTES}")
    return encoded


def _is_map(value: Any) -> bool:
    # Maps decode to lists of (key, value) pairs (object_pairs_hook=list: a repeated key is kept,
    # so it can be refused) and arrays to lists of anything else: the first element tells them
    # apart (an empty one fails the layout check).
    return type(value) is list and (not value or type(value[0]) is tuple)


def _as_map(pairs: Any, layout: tuple[str, ...], what: str) -> dict[str, Any]:
    if not _is_map(pairs):
        raise _FieldProblem(Problem.MALFORMED, f"{what} must be a map")
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _FieldProblem(Problem.DUPLICATE_KEY, f"{what} repeats a key")
    if tuple(mapping) != layout:
        raise _FieldProblem(Problem.BAD_FIELD, f"{what} must have the keys {', '.join(layout)} in that order")
    return mapping


def decode_body(body: bytes) -> Record:
    """Decode a body strictly: refuse anything but the canonical encoding of a valid record."""
    if not isinstance(body, bytes):
        raise RecordUsageError("decode_body takes bytes")
    if len(body) > MAX_BODY_BYTES:
        raise InvalidRecord(Problem.OVERSIZE, f"record body is {len(body)} bytes; at most {MAX_BODY_BYTES}")
    try:
        raw = msgpack.unpackb(
            body,
            raw=False,
            use_list=True,
            strict_map_key=True,
            object_pairs_hook=list,
            max_str_len=MAX_BODY_BYTES,
            max_bin_len=MAX_BODY_BYTES,
            max_array_len=64,
            max_map_len=32,
            max_ext_len=0,
        )
        record, wire = _record_from_wire(raw)
    except _FieldProblem as problem:
        raise InvalidRecord(problem.problem, f"invalid record: {problem}") from None
    except msgpack.ExtraData:
        raise InvalidRecord(Problem.TRAILING_BYTES, "record body has bytes after its end") from None
    except UnicodeDecodeError:
        raise InvalidRecord(Problem.INVALID_UTF8, "record body has a string that is not UTF-8") from None
    except RecordUsageError as error:  # a field rule of the dataclass: here the sender's fault
        raise InvalidRecord(error.problem, str(error)) from None
    except (ValueError, TypeError, msgpack.UnpackException) as error:
        raise InvalidRecord(Problem.MALFORMED, f"record body is not valid msgpack: {error}") from None
    # The canonical encoding of what was decoded must be the very bytes received. Re-packing the
    # decoded values gives the same bytes as encode_body(record), at a fraction of the cost.
    if "prediction" in wire:
        wire["prediction"] = dict(wire["prediction"])
    if msgpack.packb(wire, use_bin_type=True) != body:
        raise InvalidRecord(Problem.NON_CANONICAL, "record body is not in canonical form")
    return record


def _record_from_wire(raw: Any) -> tuple[Record, dict[str, Any]]:
    """The record, and the body as a dict in wire order (for the canonical check)."""
    if not _is_map(raw) or not raw:
        raise _FieldProblem(Problem.MALFORMED, "record body must be a map")
    head = dict(raw[:2])
    try:
        declared = head.get("type")
        rtype = RecordType(declared if type(declared) is str else None)
    except ValueError:
        raise _FieldProblem(Problem.UNKNOWN_TYPE, f"unknown record type {head.get('type')!r}") from None
    version = head.get("v")
    # ``type(...) is int``, not ``==``: Python's True == 1 == 1.0, and msgpack's true (0xc3) or a
    # float 1.0 would otherwise pass as version 1 and give one record a second valid body.
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise _FieldProblem(
            Problem.UNKNOWN_VERSION,
            f"{rtype.value} version {version!r} is not understood (this node speaks {PROTOCOL_VERSION})",
        )
    wire = _as_map(raw, _LAYOUT[rtype], rtype.value)
    values = {name: convert(wire[key]) for key, name, convert in _DECODERS[rtype]}
    return RECORD_CLASSES[rtype](**values), wire


def _enum_decoder(enum_type: type[enum.Enum], wire_key: str) -> Callable[[Any], Any]:
    members = {member.value: member for member in enum_type}

    def convert(value: Any) -> Any:
        try:
            if type(value) is not str:  # enums travel as strings; nothing else may hash its way in
                raise KeyError(value)
            return members[value]
        except KeyError:
            raise _FieldProblem(Problem.BAD_FIELD, f"{wire_key} has an unknown value {value!r}") from None

    return convert


def _tuple_decoder(value: Any) -> Any:
    return tuple(value) if type(value) is list else value


def _prediction_decoder(value: Any) -> Prediction:
    return Prediction(**_as_map(value, _PREDICTION_LAYOUT, "prediction"))


def _field_decoder(wire_key: str) -> Callable[[Any], Any]:
    if wire_key in _ENUM_FIELDS:
        return _enum_decoder(_ENUM_FIELDS[wire_key], wire_key)
    if wire_key == "prediction":
        return _prediction_decoder
    return _tuple_decoder


# Per type: (wire key, dataclass field, converter) for every field after the type and version.
_DECODERS = {
    rtype: tuple((key, _WIRE_NAME.get(key, key), _field_decoder(key)) for key in layout[2:])
    for rtype, layout in _LAYOUT.items()
}


# --- ids and signatures ------------------------------------------------------------------------


def record_id(body: bytes) -> bytes:
    return blake3(body).digest()


_DOMAIN_TAGS = {rtype: rtype.domain_tag for rtype in RecordType}


def signed_message(rtype: RecordType, rid: bytes) -> bytes:
    return _DOMAIN_TAGS[rtype] + rid


_TYPE_PREFIXES = {
    msgpack.packb({"type": rtype.value}, use_bin_type=True)[1:]: rtype for rtype in RecordType
}


def peek_type(body: bytes) -> RecordType | None:
    """The type a canonical body declares, read from its first bytes without decoding it.

    "type" is the first key of every body, so its value sits at a fixed place. A fast path for
    dedupe only: a body whose type cannot be peeked is not canonical, and decoding will say why.
    """
    for prefix, rtype in _TYPE_PREFIXES.items():
        if body.startswith(prefix, 1):
            return rtype
    return None


def reconcile_key(rtype: RecordType, rid: bytes) -> bytes:
    """The 33-byte key under which a record is reconciled: its type tag, then its id."""
    return bytes([rtype.tag]) + rid


@dataclass(frozen=True)
class SignedRecord:
    """A record with its canonical body, id and signature, as stored and as sent."""

    record: Record
    body: bytes
    id: bytes
    signature: bytes

    @property
    def type(self) -> RecordType:
        return type(self.record).type

    @property
    def author(self) -> bytes:
        return self.record.author

    @functools.cached_property
    def key(self) -> bytes:
        return reconcile_key(self.type, self.id)


def sign(record: Record, signing_key: nacl.signing.SigningKey) -> SignedRecord:
    """Sign a record with its author's key."""
    if bytes(signing_key.verify_key) != record.author:
        raise RecordUsageError("the signing key is not the record's author key")
    body = encode_body(record)
    rid = record_id(body)
    signature = signing_key.sign(signed_message(record.type, rid)).signature
    return SignedRecord(record, body, rid, signature)


def verify(
    body: bytes,
    signature: bytes,
    *,
    network: bytes,
    today: int,
    claimed_id: bytes | None = None,
    body_id: bytes | None = None,
) -> SignedRecord:
    """Accept a record from outside, or raise :class:`InvalidRecord` saying what is wrong with it.

    ``today`` is the receiver's current UTC day; ``claimed_id`` is the id the sender named, when it
    named one (an export line, a gossip announcement), and must match the body. ``body_id`` is
    ``record_id(body)`` when the caller computed it already (intake does, to dedupe): it is
    trusted, not checked.
    """
    record = decode_body(body)
    rid = record_id(body) if body_id is None else body_id
    if claimed_id is not None and claimed_id != rid:
        raise InvalidRecord(Problem.ID_MISMATCH, "the record's id does not match its body")
    if record.network != network:
        raise InvalidRecord(Problem.WRONG_NETWORK, "the record belongs to another network")
    if record.created > today + FUTURE_TOLERANCE_DAYS:
        raise InvalidRecord(Problem.FUTURE, f"the record is dated day {record.created}, in the future")
    if not isinstance(signature, bytes) or len(signature) != SIGNATURE_BYTES:
        raise InvalidRecord(Problem.BAD_SIGNATURE, f"a signature is {SIGNATURE_BYTES} bytes")
    try:
        nacl.bindings.crypto_sign_open(signature + signed_message(record.type, rid), record.author)
    except (nacl.exceptions.BadSignatureError, ValueError):
        raise InvalidRecord(Problem.BAD_SIGNATURE, "the signature does not verify with the author's key") from None
    return SignedRecord(record, body, rid, signature)


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
