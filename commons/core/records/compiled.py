"""Decoders generated once per record type and version from its field spec, for the codec's fast path.

``types.FIELD_SPECS`` says, as data, what each field of each type holds. From it this module
writes the source of one function per type and version and compiles it with ``exec`` (as
``dataclasses`` does for ``__init__``): it takes the Struct msgspec decoded a body into
(``schema.py``; the body already found canonical: the Struct encodes to its very bytes), reads
each field into a local, builds the prediction and the fix, and tests every field with one
straight-line expression of ``type(x) is T`` and bounds, with no loop over rules and no call per
field. When the expression holds, every rule holds, and the record is built without running them
again; when it does not (a text that is not printable ASCII, say, which may still be valid), the
type's ``FIELD_RULES`` decide, raising the FieldProblem of the first rule broken.

The expressions do not lean on what msgspec checked before them (the types, the key lengths, the
days' bounds): each implies its rule on any value, which ``tests/test_record_compiled.py`` holds
them to; msgspec's checks make them hold at once on a valid body. Among the values msgpack
decodes to, only str entries join into a str and only bytes entries into bytes, which the checks
of tuples rely on.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from commons.core.records.schema import UNSET_VALUE
from commons.core.records.types import (
    FIELD_SPECS,
    KEY_BYTES,
    WIRE_RULES,
    Fix,
    RECORD_CLASSES,
    Field,
    Kind,
    Prediction,
    Record,
    RecordType,
    Relation,
    wire_spec,
)

# A body's Struct -> the record, or None when the body is not of this version, or raises
# FieldProblem (or TypeError, ValueError on values of the wrong shape): the caller declines those
# to the reference decoder, which names them.
Decoder = Callable[[Any], Record | None]

_DAY_LIMIT = 2**32


def _local(name: str) -> str:
    return f"f_{name}"


def check_expression(rule: Field | Relation, typed: bool = False) -> str:
    """A Python expression over the field locals that is true only when the rule holds.

    False does not mean the rule is broken: a text outside printable ASCII is checked by the rule
    itself. Raising TypeError means the value is of a shape no valid record has. ``typed``: the
    values are of the field's type in the body's Struct (``schema.py``: msgspec checked the type,
    a key's length, a day's bounds, an enum's membership, a tuple's length), and what that
    already says is not tested again."""
    if isinstance(rule, Relation):
        first, second = _local(rule.first), _local(rule.second)
        return f"{first} >= {second}" if rule.not_before else f"{first} != {second}"
    x, kind = _local(rule.name), rule.kind
    if typed and kind in _CHECKED_BY_TYPE:
        return "True"
    if kind is Kind.KEY:
        return f"(type({x}) is bytes and len({x}) == {KEY_BYTES})"
    if kind is Kind.OPTIONAL_KEY:
        return f"({x} is None or (type({x}) is bytes and len({x}) == {KEY_BYTES}))"
    if kind is Kind.DAY:
        return f"(type({x}) is int and 0 <= {x} < {_DAY_LIMIT})"
    if kind is Kind.BOOL:
        return f"(type({x}) is bool)"
    if kind is Kind.CHOICE or (kind is Kind.OPTIONAL_CHOICE and rule.required):
        return f"({x} is not None)"  # converted by a lookup that gives None for any other value
    if kind is Kind.OPTIONAL_CHOICE:
        return "True"  # None, or converted as a choice: either is valid
    if kind is Kind.FIX:
        parts = (f"{_ascii_text(x + '.tool', rule.most, typed)} and {_ascii_text(x + '.failed', rule.entry_bytes, typed)} "
                 f"and {_ascii_text(x + '.step', rule.entry_bytes, typed)}")
        return f"({x} is not None and {parts})" if rule.required else f"({x} is None or ({parts}))"
    if kind is Kind.TEXT:
        return _ascii_text(x, rule.most, typed)
    if kind is Kind.PREDICTION:
        return (f"({_ascii_text(x + '.situation', rule.entry_bytes, typed)} and "
                f"{_ascii_text(x + '.outcome', rule.entry_bytes, typed)})")
    # A tuple of at most `most` entries, strictly increasing (sorted, no repeats): joined, its
    # entries are all of one type, and every one is checked by the join's length and content.
    # Two entries (the common case) are compared at once; more are compared pair by pair (a pair
    # out of order falls through to the full comparison too, which says False).
    increasing = f"(len({x}) == 2 and {x}[0] < {x}[1] or all(map(_lt, {x}, {x}[1:])))"
    if kind is Kind.KEYS:
        if typed:  # a tuple of at most `most` keys of KEY_BYTES each: only the order is left
            return f"(len({x}) < 2 or {increasing})"
        return (f"(type({x}) is tuple and len({x}) <= {rule.most} and (not {x} or ("
                f"len(b''.join({x})) == {KEY_BYTES} * len({x}) and min(map(len, {x})) == {KEY_BYTES} "
                f"and {increasing})))")
    # TEXTS: printable ASCII entries, none empty, none longer than entry_bytes.
    shape = "" if typed else f"type({x}) is tuple and len({x}) <= {rule.most} and "
    return (f"({shape}(not {x} or ("
            f"(_j := ''.join({x})).isascii() and _j.isprintable() and '' not in {x} "
            f"and max(map(len, {x})) <= {rule.entry_bytes} and {increasing})))")


# Kinds whose every rule the Struct's type says (schema.py): a key of KEY_BYTES, a day in bounds,
# a bool, an enum member; the fix of a verification of FIX_VERSION is known present before.
_CHECKED_BY_TYPE = frozenset({Kind.KEY, Kind.OPTIONAL_KEY, Kind.DAY, Kind.BOOL, Kind.CHOICE, Kind.OPTIONAL_CHOICE})


def _ascii_text(x: str, most: int, typed: bool = False) -> str:
    # Printable ASCII is one byte a character, in NFC, and holds no control character.
    shape = "" if typed else f"type({x}) is str and "
    return f"({shape}0 < len({x}) <= {most} and {x}.isascii() and {x}.isprintable())"


def decoder_source(rtype: RecordType, layout: tuple[str, ...], wire_names: dict[str, str], version: int = 1) -> str:
    """The source of the decoder of one type and version; ``layout`` is its body's keys (after
    type and v), ``wire_names`` maps a field's name to its wire key where they differ. It reads
    the body's Struct (``schema.py``: msgspec checked each value's type on the way); a field of
    the dataclass that the version's body lacks (``fix`` in version 1) must be UNSET there, and
    is None in the record."""
    spec = wire_spec(rtype, version)
    fields = [rule for rule in spec if isinstance(rule, Field)]
    absent = [rule.name for rule in FIELD_SPECS[rtype] if isinstance(rule, Field) and rule.name not in
              {f.name for f in fields}]
    wire_key = {rule.name: wire_names.get(rule.name, rule.name) for rule in fields}
    assert sorted(wire_key.values()) == sorted(layout), f"{rtype.value}: the spec and the layout disagree"
    lines = [f"def decode_{rtype.value}_v{version}(s):"]
    for name in absent:  # a version 1 body has no fix: the Struct's is UNSET, or the body is not v1
        lines.append(f"    if s.{wire_names.get(name, name)} is not _UNSET:")
        lines.append("        return None")
    for rule in fields:
        value = f"s.{wire_key[rule.name]}"
        if rule.kind is Kind.FIX:
            lines.append(f"    x = {value}")
            lines.append("    if x is _UNSET:")
            lines.append("        return None")
            lines.append("    f_fix = _new(_Fix)")
            lines.append("    _set(f_fix, '__dict__', {'tool': x.tool, 'failed': x.failed, 'step': x.step})")
            continue
        if rule.kind is Kind.PREDICTION:
            lines.append(f"    p = {value}")
            lines.append("    f_prediction = _new(_Prediction)")
            lines.append("    _set(f_prediction, '__dict__', {'situation': p.situation, 'outcome': p.outcome})")
            continue
        lines.append(f"    {_local(rule.name)} = {value}")
        if rule.kind is Kind.OPTIONAL_CHOICE:  # present (required) in a body of FIX_VERSION
            lines.append(f"    if {_local(rule.name)} is _UNSET:")
            lines.append("        return None")
    record = "{" + ", ".join([f"{rule.name!r}: {_local(rule.name)}" for rule in fields]
                             + [f"{name!r}: None" for name in absent]) + "}"
    lines.append(f"    values = {record}")
    checks = " and\n            ".join(check_expression(rule, typed=True) for rule in spec)
    lines.append(f"    if not ({checks}):")
    lines.append("        _rules(values)")
    lines.append("    record = _new(_cls)")
    lines.append("    _set(record, '__dict__', values)")
    lines.append("    return record")
    return "\n".join(lines) + "\n"


def compile_decoder(rtype: RecordType, layout: tuple[str, ...], wire_names: dict[str, str],
                    version: int = 1) -> Decoder:
    """The generated decoder of one type and version (see :func:`decoder_source`)."""
    namespace: dict[str, Any] = {
        "_lt": operator.lt,
        "_new": object.__new__,
        "_set": object.__setattr__,
        "_cls": RECORD_CLASSES[rtype],
        "_rules": WIRE_RULES[(rtype, version)],
        "_Prediction": Prediction,  # built as records are: its texts are checked with the lesson's
        "_Fix": Fix,
        "_UNSET": UNSET_VALUE,
    }
    source = decoder_source(rtype, layout, wire_names, version)
    exec(compile(source, f"<commons decoder of {rtype.value} v{version}>", "exec"), namespace)
    return namespace[f"decode_{rtype.value}_v{version}"]
