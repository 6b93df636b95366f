"""The decoders generated from the field specs accept exactly what the field rules accept.

``compiled.py`` writes, per record type, straight-line checks from ``types.FIELD_SPECS``; when a
check holds the record is built without running the rules. So each generated check must imply its
rule, on every value msgpack can produce (held here for each kind of field, on values drawn at and
around every limit), and a body built from such values must get the reference decoder's verdict.
"""

from __future__ import annotations

import msgpack
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commons.core import records as rec
from commons.core.records import codec, compiled, schema
from commons.core.records.types import FIELD_SPECS, FieldProblem, Field, Kind, Relation, _field_check, wire_spec

# Values of every shape msgpack decodes to, weighted towards the edges of the rules.
_EDGE_INTS = st.sampled_from([-1, 0, 1, 2**32 - 1, 2**32, 20_400, 20_401, 20_399])
_INTS = st.one_of(_EDGE_INTS, st.integers(-(2**63), 2**64 - 1))
_ASCII = st.text(st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=6)
_TEXT_CHARS = st.characters(blacklist_categories=("Cs",))  # msgpack's strings are UTF-8: no lone surrogate


def _texts_near(most: int):
    return st.one_of(
        _ASCII,
        st.text(_TEXT_CHARS, max_size=8),
        st.integers(most - 1, most + 1).map(lambda n: "a" * n),
        st.integers(most // 2 - 1, most // 2 + 1).map(lambda n: "é" * n),
        st.sampled_from(["", "a\nb", "tab\t", "\x7f", "\x85", "cafe\u0301", "café", "a b"]),
    )


def _keys_near():
    return st.one_of(st.binary(min_size=31, max_size=33), st.integers(0, 3).map(lambda n: bytes([n]) * 32))


_SCALARS = st.one_of(st.none(), st.booleans(), _INTS, st.floats(allow_nan=False), st.binary(max_size=33), _ASCII)


def _tuples_of(entries, valid, most: int):
    # Entries of the right shape in any order (repeats, out of order), valid ones sorted and
    # distinct (the only valid order) up to one past the limit, and entries of other shapes among them.
    in_order = lambda values: sorted(values, key=lambda v: (type(v).__name__, v))  # noqa: E731
    sorted_unique = st.one_of(st.lists(entries, max_size=most + 1, unique=True),
                              st.lists(valid, min_size=most, max_size=most + 1, unique=True)).map(in_order)
    mixed = st.lists(st.one_of(entries, _SCALARS), max_size=most + 1)
    return st.one_of(st.lists(entries, max_size=most + 1), sorted_unique, mixed).map(tuple)


def _values_for(rule: Field):
    """Values of the shape a field's kind expects, at its limits, and of every other shape."""
    kind = rule.kind
    if kind in (Kind.KEY, Kind.OPTIONAL_KEY):
        near = _keys_near()
    elif kind is Kind.DAY:
        near = _INTS
    elif kind is Kind.TEXT:
        near = _texts_near(rule.most)
    elif kind is Kind.TEXTS:
        valid = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=rule.entry_bytes)
        near = _tuples_of(_texts_near(rule.entry_bytes), valid, rule.most)
    elif kind is Kind.KEYS:
        near = _tuples_of(_keys_near(), st.binary(min_size=32, max_size=32), rule.most)
    else:
        near = st.booleans()
    return st.one_of(near, _SCALARS)


def _expression_holds(rule: Field | Relation, **values) -> bool | None:
    """The generated check of one rule on these values: True, False, or None when it raised."""
    source = compiled.check_expression(rule)
    try:
        return bool(eval(source, {"_lt": lambda a, b: a < b}, {f"f_{k}": v for k, v in values.items()}))
    except TypeError:
        return None


def _rule_holds(rule: Field, value) -> bool:
    try:
        _field_check(rule)(value)
    except FieldProblem:
        return False
    return True


_SIMPLE_FIELDS = list({r.name: r for spec in FIELD_SPECS.values() for r in spec
                       if isinstance(r, Field) and r.kind not in (Kind.CHOICE, Kind.PREDICTION, Kind.FIX,
                                                                  Kind.OPTIONAL_CHOICE)}.values())


@pytest.mark.parametrize("rule", _SIMPLE_FIELDS, ids=lambda rule: rule.name)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_generated_field_check_holds_only_where_the_field_rule_holds(rule, data) -> None:
    value = data.draw(_values_for(rule))
    if _expression_holds(rule, **{rule.name: value}):
        assert _rule_holds(rule, value), (rule, value)


@settings(max_examples=1500, deadline=None)
@given(situation=_texts_near(rec.MAX_PREDICTION_PART_BYTES) | _SCALARS,
       outcome=_texts_near(rec.MAX_PREDICTION_PART_BYTES) | _SCALARS)
def test_the_generated_prediction_check_holds_only_where_its_rule_holds(situation, outcome) -> None:
    rule = next(r for r in FIELD_SPECS[rec.RecordType.LESSON] if isinstance(r, Field) and r.kind is Kind.PREDICTION)
    prediction = object.__new__(rec.Prediction)  # as the decoder builds it: no check of its own
    object.__setattr__(prediction, "__dict__", {"situation": situation, "outcome": outcome})
    if _expression_holds(rule, prediction=prediction):
        assert _rule_holds(rule, prediction)


@settings(max_examples=1500, deadline=None)
@given(tool=_texts_near(rec.MAX_FIX_TOOL_BYTES) | _SCALARS, failed=_texts_near(rec.MAX_FIX_STEP_BYTES) | _SCALARS,
       step=_texts_near(rec.MAX_FIX_STEP_BYTES) | _SCALARS)
def test_the_generated_fix_check_of_a_version_2_lesson_holds_only_where_its_rule_holds(tool, failed, step) -> None:
    rule = next(r for r in wire_spec(rec.RecordType.LESSON, rec.FIX_VERSION) if isinstance(r, Field) and r.name == "fix")
    fix = object.__new__(rec.Fix)  # as the decoder builds it: no check of its own
    object.__setattr__(fix, "__dict__", {"tool": tool, "failed": failed, "step": step})
    if _expression_holds(rule, fix=fix):
        assert _rule_holds(rule, fix)
    assert not _expression_holds(rule, fix=None) and not _rule_holds(rule, None)  # required in version 2


def _typed_holds(rule: Field, value) -> bool | None:
    """The typed check of one rule (what the decoder runs on a body's Struct) on ``value`` as
    msgspec gives it for the field's type in the Struct; None when msgspec refuses the value."""
    wire_type, _ = schema._wire_type(rule)
    try:
        typed = msgspec.convert(value, wire_type, strict=True)
    except msgspec.ValidationError:
        return None
    source = compiled.check_expression(rule, typed=True)
    return bool(eval(source, {"_lt": lambda a, b: a < b}, {f"f_{rule.name}": typed}))


@pytest.mark.parametrize("rule", _SIMPLE_FIELDS, ids=lambda rule: rule.name)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_typed_field_check_holds_only_where_the_field_rule_holds_on_what_msgspec_lets_through(rule, data) -> None:
    value = data.draw(_values_for(rule))
    if _typed_holds(rule, value):
        typed = msgspec.convert(value, schema._wire_type(rule)[0], strict=True)
        assert _rule_holds(rule, typed), (rule, value)


def test_msgspec_refuses_for_each_typed_kind_what_its_typed_check_no_longer_tests() -> None:
    # The typed checks leave out the type, a key's length, a day's bounds: the Struct's types say them.
    key = Field("author", Kind.KEY)
    day = Field("created", Kind.DAY)
    flag = Field("naive", Kind.BOOL)
    for rule, value in ((key, b"x" * 31), (key, b"x" * 33), (key, "x" * 32), (day, -1), (day, 2**32), (day, True),
                        (day, 1.0), (flag, 1), (flag, None)):
        assert _typed_holds(rule, value) is None, (rule.name, value)
    assert _typed_holds(Field("parents", Kind.KEYS, rec.MAX_PARENTS), [b"k" * 32] * (rec.MAX_PARENTS + 1)) is None


def test_the_ascii_fast_check_of_a_text_says_no_to_valid_text_it_leaves_to_the_rule() -> None:
    rule = Field("text", Kind.TEXT, rec.MAX_TEXT_BYTES)
    for text in ("café", "line\nline"):  # valid, but not printable ASCII: the rule decides
        assert _expression_holds(rule, text=text) is False and _rule_holds(rule, text)


NET, AUTHOR = bytes(range(32)), bytes([7]) * 32
_BASE = {
    rec.RecordType.LESSON: {"net": NET, "author": AUTHOR, "kind": "error", "text": "pip fails", "scope": "shared",
                            "topics": ["pip", "python"], "prediction": {"situation": "pip install", "outcome": "error"},
                            "parents": [], "episodes": [bytes([1]) * 32, bytes([2]) * 32], "supersedes": None,
                            "created": 20_400},
    rec.RecordType.VERIFICATION: {"net": NET, "author": AUTHOR, "lesson": bytes([9]) * 32, "outcome": "confirmed",
                                  "evidence": bytes([3]) * 32, "received": 20_400, "observed": 20_401,
                                  "naive": True, "created": 20_402},
    rec.RecordType.REVOCATION: {"net": NET, "author": AUTHOR, "target": bytes([9]) * 32, "target_kind": "record",
                                "reason": "wrong", "created": 20_400},
    rec.RecordType.VOUCH: {"net": NET, "author": AUTHOR, "subject": bytes([9]) * 32, "created": 20_400},
}
_WIRE = {"network": "net"}


def _reference(body: bytes):
    try:
        return codec._decode_naming_the_problem(body)
    except rec.InvalidRecord:
        return None


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_body_with_fields_drawn_at_their_limits_gets_the_reference_verdict_from_the_fast_path(data) -> None:
    rtype = data.draw(st.sampled_from(list(rec.RecordType)))
    wire = {"type": rtype.value, "v": 1, **_BASE[rtype]}
    fields = [r for r in wire_spec(rtype, 1) if isinstance(r, Field)]
    for rule in data.draw(st.lists(st.sampled_from(fields), min_size=1, max_size=3, unique_by=lambda r: r.name)):
        key = _WIRE.get(rule.name, rule.name)
        if rule.kind is Kind.CHOICE:
            value = data.draw(st.sampled_from([m.value for m in rule.choices]) | _SCALARS)
        elif rule.kind is Kind.PREDICTION:
            value = {"situation": data.draw(_texts_near(rule.entry_bytes)),
                     "outcome": data.draw(_texts_near(rule.entry_bytes) | _SCALARS)}
        else:
            value = data.draw(_values_for(rule))
        wire[key] = list(value) if type(value) is tuple else value
    try:
        body = msgpack.packb(wire, use_bin_type=True)
    except (OverflowError, ValueError):
        return  # no msgpack body carries it
    fast, reference = codec._decode_canonical(body), _reference(body)
    assert (fast is None) == (reference is None), wire
    assert fast == reference


def test_each_type_s_decoder_reads_every_field_its_spec_names() -> None:
    for (rtype, version), layout in codec._LAYOUTS.items():
        source = compiled.decoder_source(rtype, layout[2:], codec._FIELD_NAMES, version)
        for rule in wire_spec(rtype, version):
            if isinstance(rule, Field):
                assert f"f_{rule.name} = " in source and compiled.check_expression(rule, typed=True) in source


def test_an_ext_value_anywhere_is_refused_by_the_fast_path_as_by_the_reference() -> None:
    # The fast path unpacks without the reference decoder's max_ext_len=0: an ext value (or the
    # timestamp ext msgpack turns into a Timestamp) must still be refused, by the field checks.
    for rtype, base in _BASE.items():
        for key in base:
            for value in (msgpack.ExtType(5, b"x" * 32), msgpack.Timestamp(20_400), [msgpack.ExtType(1, b"")]):
                wire = {"type": rtype.value, "v": 1, **base, key: value}
                body = msgpack.packb(wire, use_bin_type=True, datetime=False)
                assert codec._decode_canonical(body) is None, (rtype, key, value)
                assert _reference(body) is None
