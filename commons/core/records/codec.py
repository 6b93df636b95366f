"""The canonical msgpack encoding of record bodies, and the strict decoder that refuses every other.

Each type's body is one map whose keys stand in the order ``_LAYOUT`` lists, encoded in the
shortest form msgpack allows: there is exactly one valid body for every record, and
:func:`decode_body` refuses any other with the :class:`~commons.core.records.types.Problem` that
names what is wrong. Types are checked by msgpack type, never by Python equality (``True == 1``).

Decoding runs once per record a peer sends, so it has a fast path: msgspec decodes the body into
its type's Struct in C (``schema.py``, made from ``types.FIELD_SPECS``, the specs the dataclasses'
rules are made from), the Struct encoded again is compared with the bytes received, and a decoder
generated from the same spec (``compiled.py``) runs the field rules and builds the record. A body
it declines is decoded again by the reference decoder (msgpack), which names the problem;
``tests/test_record_codec_fast.py`` holds the two to the same verdicts.
"""

from __future__ import annotations

import enum
import threading
from typing import Any, Callable

import msgpack

from commons.core.records.types import (
    FIX_VERSION,
    MAX_BODY_BYTES,
    PROTOCOL_VERSION,
    RECORD_CLASSES,
    FieldProblem,
    InvalidRecord,
    LessonKind,
    Outcome,
    Fix,
    FixSeen,
    Prediction,
    Problem,
    Record,
    RecordType,
    RecordUsageError,
    Scope,
    TargetKind,
    versions_of,
)
from commons.core.records.compiled import Decoder, compile_decoder
from commons.core.records.schema import ENCODER, DecodeError, body_decoder, body_struct

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
# A body of FIX_VERSION has one entry more: the lesson's fix (a map) after ``supersedes``, the
# verification's (what happened to the lesson's fix) after ``outcome``.
_FIX_AFTER = {RecordType.LESSON: "supersedes", RecordType.VERIFICATION: "outcome"}


def _with_fix(rtype: RecordType, layout: tuple[str, ...]) -> tuple[str, ...]:
    at = layout.index(_FIX_AFTER[rtype]) + 1
    return layout[:at] + ("fix",) + layout[at:]


_LAYOUTS: dict[tuple[RecordType, int], tuple[str, ...]] = {
    (rtype, version): layout if version == PROTOCOL_VERSION else _with_fix(rtype, layout)
    for rtype, layout in _LAYOUT.items() for version in versions_of(rtype)
}
_PREDICTION_LAYOUT = ("situation", "outcome")
_FIX_LAYOUT = ("tool", "failed", "step")
_WIRE_NAME = {"net": "network"}  # wire key -> dataclass field, where they differ
_ENUM_FIELDS: dict[str, type[enum.Enum]] = {
    "kind": LessonKind,
    "scope": Scope,
    "outcome": Outcome,
    "target_kind": TargetKind,
}


_PACKERS = threading.local()


def _pack(value: Any) -> bytes:
    """``msgpack.packb(value, use_bin_type=True)``, with a Packer kept per thread (a Packer is not
    safe to share between threads; making one per call costs as much as packing a body)."""
    try:
        packer = _PACKERS.packer
    except AttributeError:
        packer = _PACKERS.packer = msgpack.Packer(use_bin_type=True)
    return packer.pack(value)


def encode_body(record: Record) -> bytes:
    """The one canonical encoding of a record's body."""
    rtype = type(record).type
    version = FIX_VERSION if getattr(record, "fix", None) is not None else PROTOCOL_VERSION
    body: dict[str, Any] = {"type": rtype.value, "v": version}
    for wire_key in _LAYOUTS[(rtype, version)][2:]:
        value = getattr(record, _WIRE_NAME.get(wire_key, wire_key))
        if isinstance(value, enum.Enum):
            value = value.value
        elif isinstance(value, Prediction):
            value = {"situation": value.situation, "outcome": value.outcome}
        elif isinstance(value, Fix):
            value = {"tool": value.tool, "failed": value.failed, "step": value.step}
        elif isinstance(value, tuple):
            value = list(value)
        body[wire_key] = value
    encoded = _pack(body)
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
        raise FieldProblem(Problem.MALFORMED, f"{what} must be a map")
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise FieldProblem(Problem.DUPLICATE_KEY, f"{what} repeats a key")
    if tuple(mapping) != layout:
        raise FieldProblem(Problem.BAD_FIELD, f"{what} must have the keys {', '.join(layout)} in that order")
    return mapping


_UNPACK_LIMITS = dict(
    max_str_len=MAX_BODY_BYTES, max_bin_len=MAX_BODY_BYTES, max_array_len=64, max_map_len=32, max_ext_len=0
)


def decode_body(body: bytes) -> Record:
    """Decode a body strictly: refuse anything but the canonical encoding of a valid record."""
    if not isinstance(body, bytes):
        raise RecordUsageError("decode_body takes bytes")
    if len(body) > MAX_BODY_BYTES:
        raise InvalidRecord(Problem.OVERSIZE, f"record body is {len(body)} bytes; at most {MAX_BODY_BYTES}")
    record = _decode_canonical(body)
    # Every body a peer sends should pass the fast path; one that does not is decoded again by
    # the reference decoder, which names what is wrong (and would accept what the fast one missed).
    return record if record is not None else _decode_naming_the_problem(body)


def _decode_canonical(body: bytes) -> Record | None:
    """The record, when ``body`` is the canonical encoding of a valid one; otherwise None.

    msgspec decodes the body into its type's Struct in C (``schema.py``: every value's msgpack
    type, the keys' lengths, the days' bounds, the enums, no unknown or missing key, no trailing
    byte), the Struct is encoded again (a body is canonical when that gives its very bytes: which
    refuses a repeated key, keys out of order, a longer integer or string header, anything msgpack
    can say twice), then the generated decoder of its version (``compiled.py``: every field rule,
    once) builds the record.
    """
    try:
        # msgspec's allocations follow the length of what it decodes (at most MAX_BODY_BYTES here).
        struct = _STRUCTS.decode(body)
    except (DecodeError, ValueError):  # ValueError: a string that is not UTF-8 (UnicodeDecodeError)
        return None
    decode = _PLANS[type(struct)].get(struct.v)
    if decode is None or _ENCODE(struct) != body:
        return None
    try:
        return decode(struct)
    except (FieldProblem, ValueError, TypeError):
        return None


def _decode_naming_the_problem(body: bytes) -> Record:
    """The reference decoder: maps read as lists of pairs (so a repeated key is seen, and named),
    the record built through its dataclass; raises InvalidRecord with the problem found first."""
    try:
        raw = msgpack.unpackb(
            body, raw=False, use_list=True, strict_map_key=True, object_pairs_hook=list, **_UNPACK_LIMITS
        )
        record, wire = _record_from_wire(raw)
    except FieldProblem as problem:
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
    if type(record).type is RecordType.LESSON and "fix" in wire:
        wire["fix"] = dict(wire["fix"])
    if _pack(wire) != body:
        raise InvalidRecord(Problem.NON_CANONICAL, "record body is not in canonical form")
    return record


def _record_from_wire(raw: Any) -> tuple[Record, dict[str, Any]]:
    """The record, and the body as a dict in wire order (for the canonical check)."""
    if not _is_map(raw) or not raw:
        raise FieldProblem(Problem.MALFORMED, "record body must be a map")
    head = dict(raw[:2])
    try:
        declared = head.get("type")
        rtype = RecordType(declared if type(declared) is str else None)
    except ValueError:
        raise FieldProblem(Problem.UNKNOWN_TYPE, f"unknown record type {head.get('type')!r}") from None
    version = head.get("v")
    # ``type(...) is int``, not ``==``: Python's True == 1 == 1.0, and msgpack's true (0xc3) or a
    # float 1.0 would otherwise pass as version 1 and give one record a second valid body.
    known = versions_of(rtype)
    if type(version) is not int or version not in known:
        raise FieldProblem(
            Problem.UNKNOWN_VERSION,
            f"{rtype.value} version {version!r} is not understood (this node speaks "
            f"{' and '.join(map(str, known))})",
        )
    wire = _as_map(raw, _LAYOUTS[(rtype, version)], f"a {rtype.value} of version {version}")
    values = {name: convert(wire[key]) for key, name, convert in _DECODERS[(rtype, version)]}
    return RECORD_CLASSES[rtype](**values), wire


def _enum_decoder(enum_type: type[enum.Enum], wire_key: str) -> Callable[[Any], Any]:
    members = {member.value: member for member in enum_type}

    def convert(value: Any) -> Any:
        try:
            if type(value) is not str:  # enums travel as strings; nothing else may hash its way in
                raise KeyError(value)
            return members[value]
        except KeyError:
            raise FieldProblem(Problem.BAD_FIELD, f"{wire_key} has an unknown value {value!r}") from None

    return convert


def _tuple_decoder(value: Any) -> Any:
    return tuple(value) if type(value) is list else value


def _prediction_decoder(value: Any) -> Prediction:
    return Prediction(**_as_map(value, _PREDICTION_LAYOUT, "prediction"))


def _fix_decoder(value: Any) -> Fix:
    if value is None:
        raise FieldProblem(Problem.BAD_FIELD, f"a version {FIX_VERSION} lesson must name its fix; "
                                              f"a lesson without one is version {PROTOCOL_VERSION}")
    return Fix(**_as_map(value, _FIX_LAYOUT, "fix"))


def _field_decoder(rtype: RecordType, wire_key: str) -> Callable[[Any], Any]:
    if wire_key == "fix":  # a lesson's is a map, a verification's what happened to it
        return _fix_decoder if rtype is RecordType.LESSON else _enum_decoder(FixSeen, wire_key)
    if wire_key in _ENUM_FIELDS:
        return _enum_decoder(_ENUM_FIELDS[wire_key], wire_key)
    if wire_key == "prediction":
        return _prediction_decoder
    return _tuple_decoder


# Per type and version: (wire key, dataclass field, converter) for every field after the type and version.
_DECODERS = {
    plan: tuple((key, _WIRE_NAME.get(key, key), _field_decoder(plan[0], key)) for key in layout[2:])
    for plan, layout in _LAYOUTS.items()
}


_FIELD_NAMES = {name: key for key, name in _WIRE_NAME.items()}  # dataclass field -> wire key
# Per record type: its body's Struct (the layout of its latest version gives every key), and the
# generated decoder of each version, by the Struct.
_BODY_STRUCTS = {rtype: body_struct(rtype, _LAYOUTS[(rtype, max(versions_of(rtype)))][1:], _FIELD_NAMES)
                 for rtype in RecordType}
_STRUCTS = body_decoder(list(_BODY_STRUCTS.values()))
_ENCODE = ENCODER.encode
_PLANS: dict[type, dict[int, Decoder]] = {
    _BODY_STRUCTS[rtype]: {version: compile_decoder(rtype, _LAYOUTS[(rtype, version)][2:], _FIELD_NAMES, version)
                           for version in versions_of(rtype)}
    for rtype in RecordType
}


# What follows a canonical body's map header, by the byte (6) that heads the type's string:
# b"\xa4type" and the type as a fixstr. The four types' names differ in length.
_TYPE_PREFIXES = {
    prefix[5]: (prefix, rtype)
    for rtype in RecordType
    for prefix in [msgpack.packb({"type": rtype.value}, use_bin_type=True)[1:]]
}
assert len(_TYPE_PREFIXES) == len(RecordType)


_CREATED_KEY = msgpack.packb("created", use_bin_type=True)
# How a canonical body may end: the "created" key, then the day as a fixint, uint8, uint16 or uint32.
_CREATED_TAILS = ((0, 1), (0xCC, 1), (0xCD, 2), (0xCE, 4))


def peek_created(body: bytes) -> int | None:
    """The created day a canonical body declares, read from its last bytes without decoding it.

    "created" is the last key of every body, so its value ends the body. A fast path for routing
    only (where a pushed record falls in reconciliation order): decoding checks the body, and a
    body that is not canonical is refused then whatever this read."""
    for marker, size in _CREATED_TAILS:
        end = len(body) - size - (marker != 0)  # where the value starts (its marker byte, if any)
        if end < len(_CREATED_KEY) or body[end - len(_CREATED_KEY) : end] != _CREATED_KEY:
            continue
        if marker == 0:
            return body[-1] if body[-1] < 0x80 else None
        if body[end] == marker:
            return int.from_bytes(body[end + 1 :], "big")
    return None


def peek_type(body: bytes) -> RecordType | None:
    """The type a canonical body declares, read from its first bytes without decoding it.

    "type" is the first key of every body, so its value sits at a fixed place. A fast path for
    dedupe only: a body whose type cannot be peeked is not canonical, and decoding will say why.
    """
    # The header of the type's string (its length) tells the four types apart: one lookup, then
    # one comparison, for every body received.
    entry = _TYPE_PREFIXES.get(body[6]) if len(body) > 6 else None
    return entry[1] if entry is not None and body.startswith(entry[0], 1) else None

